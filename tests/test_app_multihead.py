"""The multi-head lab page driven through app.py with AppTest: default run, every main control
changed, bad input, Japanese. Expected numbers come from hand formulas, not from the page's code."""

from __future__ import annotations

import pytest

from attention_ui.i18n import translate
from tests.apptest_pages import chart_spec, no_exception, open_page

PAGE = "app_pages/multihead.py"


def divisors(m: int) -> list[int]:
    return [d for d in range(1, m + 1) if m % d == 0]


def test_default_page_shows_every_section() -> None:
    at = open_page(PAGE)
    no_exception(at)
    assert at.title[0].value == translate("en", "multihead.title")
    assert len(at.main.header) == 5  # (the sidebar has its settings header)
    assert not at.error
    # 4 heads by default: one weights trace per head in the small multiples.
    heads = chart_spec(at, "multihead_chart_heads")
    assert sum(1 for tr in heads["data"] if tr.get("type") == "heatmap") == 4
    # The split check: the difference shown is rounding-sized.
    diffs = [float(m.value) for m in at.metric]
    assert len(diffs) == 2 and all(d < 1e-12 for d in diffs)


def test_cost_table_is_constant_in_h() -> None:
    n, d_model = 2048, 768
    at = open_page(PAGE, multihead_cost_n=n, multihead_cost_d_model=d_model)
    no_exception(at)
    frame, growing = at.dataframe[0].value, at.dataframe[1].value
    assert list(frame.iloc[:, 0]) == divisors(d_model) == list(growing.iloc[:, 0])  # one row per valid h
    # two tables narrow enough for the 1366 px layout (one of 11 columns cut its last; issue 24)
    assert len(frame.columns) <= 7 and len(growing.columns) <= 7
    params = frame[translate("en", "multihead.col_params_total")]
    assert set(params) == {4 * d_model**2}
    matmul = sum(
        frame[translate("en", f"multihead.col_{c}")]
        for c in ("flops_projections", "flops_scores", "flops_weighted_sum", "flops_output")
    )
    assert set(matmul) == {8 * n * d_model**2 + 4 * n * n * d_model}
    held = growing[translate("en", "multihead.col_attention_matrix_elements")]
    assert list(held) == [h * n * n for h in divisors(d_model)]
    assert any(f"{4 * d_model**2:,}" in s.value for s in at.success)  # written with separators


@pytest.mark.parametrize(("d_model", "start", "expected"), [(12, 4, 4), (12, 8, 6), (7, 4, 1), (13, 4, 1)])
def test_head_count_follows_d_model(d_model: int, start: int, expected: int) -> None:
    at = open_page(PAGE, multihead_d_model=d_model, multihead_heads=start)
    no_exception(at)
    assert at.session_state["multihead_heads"] == expected
    heads = chart_spec(at, "multihead_chart_heads")
    assert sum(1 for tr in heads["data"] if tr.get("type") == "heatmap") == expected
    bars = chart_spec(at, "multihead_chart_dk")["data"][0]
    assert [int(x) for x in bars["x"]] == divisors(d_model)
    assert bars["y"] == [d_model // h for h in divisors(d_model)]


def test_select_slider_and_seed_change_the_heads() -> None:
    at = open_page(PAGE)
    before = chart_spec(at, "multihead_chart_heads")["data"][0]["z"]
    at.select_slider(key="multihead_heads").set_value(8).run()
    no_exception(at)
    assert (
        sum(1 for tr in chart_spec(at, "multihead_chart_heads")["data"] if tr.get("type") == "heatmap") == 8
    )
    at.select_slider(key="multihead_heads").set_value(4).run()
    at.number_input(key="multihead_seed").set_value(3).run()
    no_exception(at)
    assert chart_spec(at, "multihead_chart_heads")["data"][0]["z"] != before


def test_one_head_only_and_tables() -> None:
    at = open_page(PAGE, multihead_d_model=1, multihead_tables=True)
    no_exception(at)
    assert at.session_state["multihead_heads"] == 1
    assert any(translate("en", "multihead.one_head_only", d_model=1)[:30] in m.value for m in at.markdown)
    assert len(at.dataframe) >= 7  # heads, d_k, concat, W^O, output, two cost tables, cost series


def test_empty_sentence_is_a_message_not_a_traceback() -> None:
    at = open_page(PAGE, multihead_text="   ")
    no_exception(at)
    assert [e.value for e in at.error] == [translate("en", "multihead.err_empty")]
    assert len(at.dataframe) == 2  # the cost tables do not need a sentence


def test_user_text_and_japanese() -> None:
    at = open_page(PAGE)
    at.radio(key="lang").set_value("ja").run()  # the language switch in app.py's sidebar
    at.session_state["multihead_text"] = "<b>猫</b> & 犬"
    at.run()
    no_exception(at)
    assert at.title[0].value == translate("ja", "multihead.title")
    labels = chart_spec(at, "multihead_chart_heads")["layout"]["yaxis"]["ticktext"]
    assert "&lt;" in labels and "<" not in "".join(labels)
