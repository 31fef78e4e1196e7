"""The positions and inference lab pages driven through app.py with AppTest: default runs in both
languages, the controls changed, edge cases. Expected numbers come from hand formulas or from the
definitions, not from the pages' code."""

from __future__ import annotations

import math

import pytest

from attention_ui.i18n import translate
from tests.apptest_pages import chart_spec, charts, messages, no_exception, open_page

POSITIONS = "app_pages/positions.py"
INFERENCE = "app_pages/inference.py"


def metric(at, label: str) -> float:
    (m,) = [m for m in at.metric if m.label == label]
    return float(m.value.replace(",", ""))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_positions_page_default(lang):
    at = open_page(POSITIONS, lang=lang)
    assert at.title[0].value == translate(lang, "positions.title")
    assert len(at.header) == 4 and not at.error
    off = metric(at, translate(lang, "positions.gap_off"))
    on = metric(at, translate(lang, "positions.gap_on"))
    assert off < 1e-12 and on > 1e-3
    rope = translate(lang, "positions.spread_metric", name=translate(lang, "positions.scheme_rope"))
    assert metric(at, rope) < 1e-12
    assert set(charts(at, "positions_chart_")) == {"shuffle", "schemes", "arrow", "extrapolation"}
    ext = chart_spec(at, "positions_chart_extrapolation")
    assert len(ext["data"][0]["x"]) == 3 * 32  # 0 … 3L−1 with the default L = 32


def test_positions_controls_change_the_figures():
    at = open_page(POSITIONS, positions_seen=10, positions_offset=4, positions_pair=2, positions_d_model=8)
    no_exception(at)
    schemes = chart_spec(at, "positions_chart_schemes")
    assert schemes["data"][0]["x"] == list(range(4, 10))  # every placement inside 0 … L−1
    arrow = chart_spec(at, "positions_chart_arrow")
    pts = [(tr["x"][0], tr["y"][0]) for tr in arrow["data"][1:]]
    step = 10000 ** (-2 * 2 / 8)  # θ for pair 2 of d = 8
    turn = (math.atan2(pts[1][1], pts[1][0]) - math.atan2(pts[0][1], pts[0][0])) % (2 * math.pi)
    assert turn == pytest.approx(step, abs=1e-6)
    # shrinking L pulls the offset back inside 0 … L−1
    at.number_input(key="positions_seen").set_value(3).run()
    no_exception(at)
    assert at.session_state["positions_offset"] == 2 and not at.error


def test_positions_one_token_and_odd_width():
    at = open_page(POSITIONS, positions_text="solo")
    no_exception(at)
    assert messages(at)["info"]  # nothing to shuffle
    at = open_page(POSITIONS, positions_d_model=7)
    no_exception(at)
    assert at.error and not charts(at)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_inference_page_default(lang):
    at = open_page(INFERENCE, lang=lang)
    assert at.title[0].value == translate(lang, "inference.title")
    assert len(at.header) == 5 and not at.error
    assert metric(at, translate(lang, "inference.cache_gap")) < 1e-12
    # the prefix pass and the full pass multiply matrices of different sizes, so BLAS may round
    # differently (2.2e-16 for the ja sentence with OpenBLAS's Haswell kernels): rounding, not a change
    assert metric(at, translate(lang, "inference.change_causal")) < 1e-12
    assert metric(at, translate(lang, "inference.change_bidirectional")) > 1e-3
    # SmolLM2-135M, 8192 tokens, 2 bytes, g = 3: 2·30·8192·3·64·2 = 188,743,680 B = 180 MiB
    sizes = {m.label: m.value for m in at.metric}
    assert sizes[translate(lang, "inference.size_metric", g=3)] == "180 MiB"
    assert sizes[translate(lang, "inference.mha_metric", h=9)] == "540 MiB"
    groups = chart_spec(at, "inference_chart_groups")
    assert sum(1 for tr in groups["data"] if tr.get("name") == "values") == 4


def test_inference_sliders_and_presets():
    at = open_page(INFERENCE, inference_heads=4, inference_kv_heads=1)
    no_exception(at)
    flops = chart_spec(at, "inference_chart_flops")
    d, h, g, d_k = 16, 4, 1, 4
    n = flops["data"][0]["x"][5]
    assert flops["data"][0]["y"][5] == 2 * d * (h + 2 * g) * d_k + 4 * h * n * d_k
    # choose Llama 2 70B: the slider starts at its own 8 KV heads; MQA then saves 7/8 of g = 8's cache
    at.selectbox(key="inference_preset").set_value(3).run()
    no_exception(at)
    assert at.session_state["inference_calc_kv"] == 8
    at.select_slider(key="inference_calc_kv").set_value(1).run()
    no_exception(at)
    bars = chart_spec(at, "inference_chart_size")["data"][0]
    assert bars["x"] == ["1", "2", "4", "8", "16", "32", "64"]
    # n = 8,192 asked, but Llama 2 reads at most 4,096 tokens (issue 24, point 20): its cache stops there
    assert bars["y"][0] == 2 * 80 * 4096 * 1 * 128 * 2 and bars["y"][3] == 8 * bars["y"][0]
    # d_model 12: 16 is no longer a divisor, h falls back to a valid one and g follows
    at.number_input(key="inference_d_model").set_value(6).run()
    no_exception(at)
    assert 6 % at.session_state["inference_heads"] == 0
    assert at.session_state["inference_heads"] % at.session_state["inference_kv_heads"] == 0


def test_inference_one_token():
    at = open_page(INFERENCE, inference_text="one")
    no_exception(at)
    assert messages(at)["info"]  # one token: nothing earlier to compare
    assert metric(at, translate("en", "inference.cache_gap")) < 1e-12


def test_tables_switch_shows_the_numbers_behind_the_charts():
    at = open_page(POSITIONS, positions_tables=True, positions_text="a b c d")
    no_exception(at)
    shuffle = at.dataframe[0].value
    assert list(shuffle.index) == ["a", "b", "c", "d"] and shuffle.shape == (4, 2)
    at = open_page(INFERENCE, inference_tables=True, inference_text="a b c d")
    no_exception(at)
    steps = at.dataframe[0].value
    assert list(steps.iloc[:, 2]) == [1, 2, 3, 4]  # the cache holds t + 1 keys after step t
    assert len(at.dataframe) == 3  # steps, FLOPs, changes
