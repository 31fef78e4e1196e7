"""The playground page through Streamlit's AppTest: controls, errors, preset, language switch.

Numbers on the page are checked against independent references: the slow loop implementation in
``tests/reference_naive.py`` and the reference notes' own NumPy block, rerun here.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core import AttentionConfig, embed, init_params
from attention_ui.i18n import translate
from attention_ui.playground.steps_view import all_heads_on_request
from tests.apptest_pages import charts, open_page, z
from tests.reference_naive import naive_attention


def assert_healthy(at: AppTest) -> None:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert "pg_chart_weights" in charts(at)


@pytest.fixture
def at() -> AppTest:
    return open_page()


EVERY_STEP = (
    "x",
    "q",
    "k",
    "v",
    "raw",
    "scaled",
    "mask",
    "masked",
    "weights",
    "head_out",
    "all_heads",
    "concat",
    "output",
)


def test_page_loads_with_every_step(at):
    assert_healthy(at)
    keys = set(charts(at))
    # the default has no mask: the all-zero mask map and the masked scores (= the scaled ones) are
    # not drawn; a note says why, in both steps
    for step in EVERY_STEP:
        assert (f"pg_chart_{step}" in keys) == (step not in ("mask", "masked")), step
    notes = " ".join(el.value for el in at.info)
    assert translate("en", "playground.mask_nothing_masked") in notes
    assert translate("en", "playground.masked_nothing_masked", step=4) in notes
    for el in at.get("plotly_chart"):
        assert el.proto.alt.strip(), "every chart needs alt text"
    assert len(at.latex) >= 11


def test_with_a_mask_every_step_has_its_map(at):
    at.selectbox(key="pg_mask").set_value("causal").run()
    assert_healthy(at)
    keys = set(charts(at))
    for step in EVERY_STEP:
        assert f"pg_chart_{step}" in keys, step
    assert not any("M is all zeros" in el.value for el in at.info)


def test_repeated_words_give_an_n_by_n_map_with_the_right_numbers(at):
    fig = charts(at)["pg_chart_weights"]
    weights = z(fig)
    assert weights.shape == (6, 6)
    assert fig["layout"]["xaxis"]["ticktext"] == ["the", "cat", "sat", "on", "the", "mat"]
    assert fig["layout"]["xaxis"]["tickvals"] == [0, 1, 2, 3, 4, 5]
    # Independent reference: the slow loop implementation on the same inputs.
    cfg = AttentionConfig()  # the page's defaults: d_model 16, 2 heads, no mask, ÷√d_k
    tokens = ("the", "cat", "sat", "on", "the", "mat")
    X = embed(tokens, cfg.d_model, cfg.seed, cfg.positional)
    p = init_params(cfg)
    ref = naive_attention(X, p.W_Q, p.W_K, p.W_V, p.W_O, np.ones((6, 6), bool), math.sqrt(cfg.head_dim_k))
    np.testing.assert_allclose(weights, ref["weights"][0], atol=1e-9)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)


def test_each_control_change_reruns_cleanly(at):
    at.text_area(key="pg_text").input("a dog and a cat").run()
    assert_healthy(at)
    assert z(charts(at)["pg_chart_weights"]).shape == (5, 5)
    at.number_input(key="pg_d_model").set_value(32).run()
    assert_healthy(at)
    at.number_input(key="pg_heads").set_value(4).run()
    assert_healthy(at)
    assert len(at.radio(key="pg_head").options) == 4
    at.toggle(key="pg_auto_dims").set_value(False).run()
    assert_healthy(at)
    at.number_input(key="pg_d_k").set_value(3).run()
    at.number_input(key="pg_d_v").set_value(5).run()
    assert_healthy(at)
    assert np.array(charts(at)["pg_chart_head_out"]["data"][0]["z"]).shape == (5, 5)
    for kind in ("causal", "padding", "causal+padding", "none"):
        at.selectbox(key="pg_mask").select(kind).run()
        assert_healthy(at)
    at.number_input(key="pg_pad").set_value(2).run()
    assert_healthy(at)
    assert z(charts(at)["pg_chart_weights"]).shape == (7, 7)
    at.selectbox(key="pg_scale").select("none").run()
    assert_healthy(at)
    at.selectbox(key="pg_scale").select("custom").run()
    at.number_input(key="pg_divisor").set_value(4.0).run()
    assert_healthy(at)
    at.number_input(key="pg_seed").set_value(7).run()
    assert_healthy(at)
    assert translate("en", "playground.x_no_positional") not in [c.value for c in at.caption]
    at.toggle(key="pg_positional").set_value(False).run()
    assert_healthy(at)
    # X = E now, and the page says so instead of "plus a vector for its position"
    assert "$$\nX = E\n$$" in [el.value for el in at.latex]
    assert translate("en", "playground.x_no_positional") in [c.value for c in at.caption]
    at.radio(key="pg_head").set_value(3).run()
    assert_healthy(at)
    at.toggle(key="pg_tables").set_value(True).run()
    assert_healthy(at)
    assert len(at.dataframe) >= 10
    # every setting survived all the reruns
    s = at.session_state
    assert (s["pg_text"], s["pg_d_model"], s["pg_heads"], s["pg_d_k"], s["pg_d_v"]) == (
        "a dog and a cat",
        32,
        4,
        3,
        5,
    )
    assert (s["pg_pad"], s["pg_scale"], s["pg_divisor"], s["pg_seed"], s["pg_head"]) == (
        2,
        "custom",
        4.0,
        7,
        3,
    )


def test_manual_head_sizes_start_from_the_automatic_ones(at):
    at.number_input(key="pg_d_model").set_value(24).run()
    at.number_input(key="pg_heads").set_value(4).run()
    at.toggle(key="pg_auto_dims").set_value(False).run()
    assert at.number_input(key="pg_d_k").value == 6 and at.number_input(key="pg_d_v").value == 6
    assert_healthy(at)


def test_causal_mask_greys_out_the_future_and_zeroes_its_weights(at):
    at.selectbox(key="pg_mask").select("causal").run()
    fig = charts(at)["pg_chart_weights"]
    weights, overlay = z(fig, 0), z(fig, 1)
    for i in range(6):
        for j in range(6):
            assert np.isnan(overlay[i, j]) == (j <= i)  # grey exactly above the diagonal
    np.testing.assert_allclose(np.nansum(weights, axis=1), 1.0, atol=1e-12)


def test_scaled_step_reports_the_divisor_and_both_ranges(at):
    texts = [m.value for m in at.markdown]
    line = next(v for v in texts if v.startswith("Divisor:"))
    assert "2.828" in line  # √8 for d_k = 16 / 2
    raw, scaled = z(charts(at)["pg_chart_raw"]), z(charts(at)["pg_chart_scaled"])
    np.testing.assert_allclose(scaled, raw / math.sqrt(8), atol=1e-12)
    assert f"{raw.min():.3f}" in line and f"{scaled.max():.3f}" in line


def test_table_view_has_unique_token_labels(at):
    at.toggle(key="pg_tables").set_value(True).run()
    frames = [df.value for df in at.dataframe]
    weights_frame = next(f for f in frames if f.shape == (6, 6) and np.allclose(f.sum(axis=1), 1.0))
    assert list(weights_frame.index) == ["0 the", "1 cat", "2 sat", "3 on", "4 the", "5 mat"]


def test_empty_text_shows_an_error_and_no_exception(at):
    at.text_area(key="pg_text").input("   ").run()
    assert not at.exception
    assert at.error and "empty" in at.error[0].value
    assert "pg_chart_weights" not in charts(at)
    at.text_area(key="pg_text").input("back again").run()  # the page recovers
    assert_healthy(at)


def test_d_model_not_divisible_by_heads_shows_an_error(at):
    at.number_input(key="pg_d_model").set_value(10).run()
    at.number_input(key="pg_heads").set_value(3).run()
    assert not at.exception
    assert at.error and "10" in at.error[0].value and "3" in at.error[0].value
    assert not charts(at)
    at.toggle(key="pg_auto_dims").set_value(False).run()  # setting d_k/d_v by hand resolves it
    assert_healthy(at)


def test_too_many_tokens_are_truncated_with_a_warning(at):
    at.text_area(key="pg_text").input(" ".join(f"w{i}" for i in range(70))).run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "70" in warning and "64" in warning and "6" in warning
    assert z(charts(at)["pg_chart_weights"]).shape == (64, 64)


def test_hostile_text_is_shown_as_text(at):
    at.text_area(key="pg_text").input("<b>x</b> & $y$").run()
    assert_healthy(at)
    chips = next(m.value for m in at.markdown if "badge[" in m.value)
    assert "<b>" not in chips and "\\$" in chips
    fig = charts(at)["pg_chart_weights"]
    assert "&lt;" in fig["layout"]["xaxis"]["ticktext"] and "&amp;" in fig["layout"]["xaxis"]["ticktext"]
    assert "<b>" not in json.dumps(fig["layout"]["xaxis"]["ticktext"])


def _notes_weights() -> np.ndarray:
    """The reference notes' NumPy block, rerun: default_rng(0), one causal head, ÷√3."""
    gen = np.random.default_rng(0)
    X = gen.normal(size=(4, 6))
    Wq, Wk, Wv = (gen.normal(size=(6, d)) for d in (3, 3, 2))
    scores = (X @ Wq) @ (X @ Wk).T / np.sqrt(3)
    scores = np.where(np.triu(np.ones((4, 4), bool), k=1), -np.inf, scores)
    w = np.exp(scores - scores.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True)


def test_preset_shows_the_worked_example_and_fixes_the_settings(at):
    at.selectbox(key="pg_preset").select("example").run()
    assert not at.exception and not at.error
    fig = charts(at)["pg_chart_weights"]
    np.testing.assert_allclose(
        z(fig, 0), np.where(np.triu(np.ones((4, 4), bool), k=1), np.nan, _notes_weights()), atol=1e-12
    )
    assert fig["layout"]["xaxis"]["ticktext"] == ["x0", "x1", "x2", "x3"]
    assert any("fixed" in i.value for i in at.info)
    keys = {el.key for el in at.sidebar if getattr(el, "key", None)}
    assert "pg_d_model" not in keys and "pg_text" not in keys  # config controls are not offered
    # back to the sentence: nothing was lost
    at.selectbox(key="pg_preset").select("sentence").run()
    assert at.text_area(key="pg_text").value == "the cat sat on the mat"
    assert_healthy(at)


def test_language_switch_keeps_sentence_and_settings(at):
    at.text_area(key="pg_text").input("attention is all you need").run()
    at.number_input(key="pg_d_model").set_value(24).run()
    at.number_input(key="pg_heads").set_value(3).run()
    at.selectbox(key="pg_mask").select("causal").run()
    at.radio(key="pg_head").set_value(2).run()
    at.session_state["lang"] = "ja"
    at.run()
    assert not at.exception and not at.error
    assert at.title[0].value == "注意のプレイグラウンド"
    assert at.text_area(key="pg_text").value == "attention is all you need"
    assert at.number_input(key="pg_d_model").value == 24 and at.number_input(key="pg_heads").value == 3
    assert at.selectbox(key="pg_mask").value == "causal" and at.radio(key="pg_head").value == 2
    # the browser is sent the newly translated labels of the chosen options
    assert at.selectbox(key="pg_mask").proto.raw_value == "因果"
    assert at.radio(key="pg_head").proto.raw_value == "ヘッド 2"
    assert z(charts(at)["pg_chart_weights"]).shape == (5, 5)


def long_sentence(at: AppTest, n: int) -> None:
    at.number_input(key="pg_max_tokens").set_value(256).run()
    at.text_area(key="pg_text").input(" ".join(["cat", "sat"] * (n // 2))).run()
    assert_healthy(at)
    assert len(charts(at)["pg_chart_weights"]["data"][0]["y"]) == n  # one row per token


def test_all_heads_figure_is_drawn_on_request_for_a_long_sentence(at):
    long_sentence(at, 130)
    assert "pg_chart_all_heads" not in charts(at)  # 2 panels of 130×130 cells: not drawn by default
    switch = at.toggle(key="pg_all_heads")
    assert switch.value is False and switch.label == translate("en", "playground.all_heads_draw")
    why = translate("en", "playground.all_heads_on_request", n=130, heads=2, step=7)
    assert why in [c.value for c in at.caption]
    assert "all_heads" not in at.query_params
    # the other steps are all still there
    assert {
        "pg_chart_x",
        "pg_chart_q",
        "pg_chart_raw",
        "pg_chart_weights",
        "pg_chart_concat",
        "pg_chart_output",
    } <= set(charts(at))

    switch.set_value(True).run()
    assert_healthy(at)
    fig = charts(at)["pg_chart_all_heads"]
    panels = [tr for tr in fig["data"] if tr["type"] == "heatmap"]
    assert len(panels) == 2 and all(len(p["y"]) == len(p["x"]) == 130 for p in panels)
    assert why not in [c.value for c in at.caption]
    assert at.query_params["all_heads"] == "1"  # the choice is part of the link

    at.number_input(key="pg_seed").set_value(3).run()  # another control: the switch stays on
    assert at.toggle(key="pg_all_heads").value is True and "pg_chart_all_heads" in charts(at)


def test_two_heads_at_128_tokens_are_drawn_without_asking(at):
    long_sentence(at, 128)
    assert "pg_chart_all_heads" in charts(at)
    assert not [w for w in at.toggle if w.key == "pg_all_heads"]


def test_all_heads_figure_waits_when_it_has_more_cells_than_two_heads_at_128_tokens():
    assert not all_heads_on_request(2, 128) and all_heads_on_request(2, 129)
    assert not all_heads_on_request(8, 64) and all_heads_on_request(16, 64)  # same cell count as 2 × 128²
    assert not all_heads_on_request(12, 52) and all_heads_on_request(
        12, 53
    )  # the pretrained model's 12 heads


def test_many_heads_at_a_hundred_tokens_also_wait_for_the_switch(at):
    at.number_input(key="pg_heads").set_value(4).run()
    long_sentence(at, 100)  # 4 maps of 100 × 100: more cells than 2 of 128 × 128
    assert "pg_chart_all_heads" not in charts(at)
    why = translate("en", "playground.all_heads_on_request", n=100, heads=4, step=7)
    assert why in [c.value for c in at.caption]
    at.toggle(key="pg_all_heads").set_value(True).run()
    panels = [tr for tr in charts(at)["pg_chart_all_heads"]["data"] if tr["type"] == "heatmap"]
    assert len(panels) == 4


def test_all_heads_switch_comes_from_the_url():
    at = open_page(params={"all_heads": "1", "max_tokens": "256", "text": " ".join(["cat"] * 140)})
    assert_healthy(at)
    assert at.toggle(key="pg_all_heads").value is True
    assert len(charts(at)["pg_chart_all_heads"]["data"][0]["y"]) == 140


SHAPE = re.compile(r"\$\{(.+?) \\in \\mathbb\{R\}\^\{([0-9 \\times]+)\}\}\$")


def test_every_shapes_line_states_the_arrays_of_the_settings_chosen(at):
    """Each "Shapes:" line against the sizes worked out by hand from the settings (n = 5 tokens,
    d_model = 32, 4 heads of d_k = 3 and d_v = 5, a causal mask, head 2 shown); each formula is one
    braced group, so a phone breaks the line between formulas and never after an ∈."""
    at.text_area(key="pg_text").input("a dog and a cat").run()
    at.number_input(key="pg_d_model").set_value(32).run()
    at.number_input(key="pg_heads").set_value(4).run()
    at.toggle(key="pg_auto_dims").set_value(False).run()
    at.number_input(key="pg_d_k").set_value(3).run()
    at.number_input(key="pg_d_v").set_value(5).run()
    at.selectbox(key="pg_mask").select("causal").run()
    at.radio(key="pg_head").set_value(2).run()
    assert_healthy(at)
    prefix = translate("en", "playground.shapes").split("{")[0]
    lines = [m.value for m in at.markdown if m.value.startswith(prefix)]
    stated: dict[str, set[tuple[int, ...]]] = {}
    for line in lines:
        body = line[len(prefix) :]
        found = SHAPE.findall(body)
        assert found and "\u2003".join(f"${{{n} \\in \\mathbb{{R}}^{{{s}}}}}$" for n, s in found) == body, (
            line
        )
        for name, sizes in found:
            stated.setdefault(name, set()).add(tuple(int(x) for x in sizes.split(r" \times ")))
    output = rf"\text{{{translate('en', 'playground.name_output')}}}"
    assert stated == {
        "X": {(5, 32)},
        "W^Q, W^K": {(32, 3)},
        "W^V": {(32, 5)},
        "Q, K": {(5, 3)},
        "V": {(5, 5)},
        "Q": {(5, 3)},
        r"K^\top": {(3, 5)},
        r"QK^\top": {(5, 5)},
        "S'": {(5, 5)},
        "M": {(5, 5)},
        "S''": {(5, 5)},
        "A": {(5, 5), (4, 5, 5)},
        r"\mathrm{head}_{2}": {(5, 5)},
        r"\mathrm{Concat}": {(5, 20)},
        "W^O": {(20, 32)},
        output: {(5, 32)},
    }
