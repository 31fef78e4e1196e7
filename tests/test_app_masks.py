"""The "Masks" page driven through app.py with Streamlit's AppTest (no browser).

The leakage verdicts are checked against the core's own attention path (``trace_text`` with a
causal mask), which does not go through ``attention_core.labs.masks``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core import AttentionConfig, trace_text
from attention_core.labs.masks import LAB_MASK_KINDS
from attention_ui.i18n import translate
from tests.apptest_pages import charts, open_page
from tests.test_figures_base import stacked

PAGE = "app_pages/masks.py"


def leak_table(at: AppTest):
    """The verdict table of section 3 (the one with a 'verdict' column)."""
    verdict = translate("en", "masks.col_verdict")
    return next(df.value for df in at.dataframe if verdict in df.value.columns)


@pytest.fixture(scope="module")
def default_page() -> AppTest:
    return open_page(PAGE)


def test_page_loads_with_mask_maps_and_leakage(default_page: AppTest) -> None:
    at = default_page
    assert at.title[0].value == translate("en", "masks.title")
    specs = charts(at, "masks_chart_")
    assert {"mask", "masked_scores", "weights", "methods", "leak_bars", "leak_matrix"} <= set(specs)
    # 6 words + 2 [PAD]: the mask map has 8 rows; causal masks the 28 cells above the diagonal.
    assert specs["mask"]["layout"]["yaxis"]["ticktext"] == [
        "the",
        "cat",
        "sat",
        "on",
        "the",
        "mat",
        "[PAD]",
        "[PAD]",
    ]
    assert any("28 of 64 cells masked" in m.value for m in at.markdown)


def test_leakage_verdicts_match_the_core_attention(default_page: AppTest) -> None:
    # Independent reference: the core's causal layer on both sentences (position 3 "on" -> "dog").
    cfg = AttentionConfig(d_model=16, heads=2, mask="causal", pad=2, seed=0)
    before = trace_text("the cat sat on the mat", cfg).output
    after = trace_text("the cat sat dog the mat", cfg).output
    assert np.array_equal(before[:3], after[:3])  # the right mask: earlier rows bit-for-bit equal

    table = leak_table(default_page)
    rows = {name: row for name, row in table.iterrows()}
    correct = rows[translate("en", "masks.method_correct")]
    assert correct[translate("en", "masks.col_max_earlier")] == "0.0"
    assert correct[translate("en", "masks.col_exact")] == translate("en", "masks.yes")
    for m in ("zero_values", "zero_weights"):
        row = rows[translate("en", f"masks.method_{m}")]
        assert float(row[translate("en", "masks.col_max_earlier")]) > 1e-3
        assert row[translate("en", "masks.col_verdict")] == translate("en", "masks.verdict_leak")
    renorm = rows[translate("en", "masks.method_renormalise")]
    assert float(renorm[translate("en", "masks.col_max_earlier")]) < 1e-12


def test_correct_method_has_no_leaks_in_the_matrix() -> None:
    at = open_page(PAGE)
    at.selectbox(key="masks_matrix_method").set_value("correct").run()
    assert not at.exception
    assert any(m.value.endswith("0 of the 28 past cells moved.") for m in at.markdown)
    at.selectbox(key="masks_matrix_method").set_value("zero_weights").run()
    assert any("28 of the 28 past cells moved." in m.value for m in at.markdown)


@pytest.mark.parametrize("kind", LAB_MASK_KINDS)
def test_every_mask_kind_side_by_side(kind: str) -> None:
    at = open_page(PAGE)
    at.toggle(key="masks_all").set_value(True).run()
    at.selectbox(key="masks_kind").set_value(kind).run()
    at.number_input(key="masks_window").set_value(3).run()
    assert not at.exception and not at.error
    specs = charts(at, "masks_chart_")
    assert "all_masks" in specs
    if kind in ("none", "padding"):
        assert any(
            kind_name in i.value for i in at.info for kind_name in [translate("en", f"masks.kind_{kind}")]
        )
    if kind == "sliding":
        # w = 3 on 8 tokens: each query sees min(i + 1, 3) keys.
        assert any("1, 2, 3, 3, 3, 3, 3, 3" in m.value for m in at.markdown)


def test_other_controls_and_bad_input() -> None:
    at = open_page(PAGE)
    at.number_input(key="masks_pad").set_value(0).run()
    at.number_input(key="masks_seed").set_value(5).run()
    at.radio(key="masks_head").set_value(1).run()
    at.selectbox(key="masks_position").set_value(5).run()
    at.text_input(key="masks_replacement").set_value("<b>dog</b>").run()
    assert not at.exception and not at.error
    assert charts(at, "masks_chart_")["mask"]["layout"]["yaxis"]["ticktext"] == [
        "the",
        "cat",
        "sat",
        "on",
        "the",
        "mat",
    ]
    at.toggle(key="masks_tables").set_value(True).run()
    # mask, scores, weights, 4 method weights, the method summary, the verdicts, moved, matrix
    assert not at.exception and len(at.dataframe) == 11
    at.toggle(key="masks_all").set_value(True).run()
    visible = next(
        df.value for df in at.dataframe if translate("en", "masks.kind_sliding") in df.value.columns
    )
    assert list(visible[translate("en", "masks.kind_causal")]) == [1, 2, 3, 4, 5, 6]
    assert list(visible[translate("en", "masks.kind_none")]) == [6] * 6
    at.text_input(key="masks_replacement").set_value("   ").run()
    assert any(e.value == translate("en", "masks.err_replacement") for e in at.error)
    at.text_area(key="masks_text").set_value("").run()
    assert any(e.value == translate("en", "masks.err_empty") for e in at.error)
    at.text_area(key="masks_text").set_value(
        "one two three four five six seven eight nine ten eleven twelve "
        "thirteen fourteen fifteen sixteen seventeen eighteen"
    ).run()
    assert not at.exception
    assert any("18 tokens" in w.value for w in at.warning)
    at.text_area(key="masks_text").set_value("solo").run()
    at.number_input(key="masks_pad").set_value(0).run()
    assert any(e.value == translate("en", "masks.err_short") for e in at.error)


def test_japanese_page() -> None:
    at = open_page(PAGE, lang="ja")
    assert at.title[0].value == translate("ja", "masks.title")
    assert at.header[0].value == translate("ja", "masks.h_mask")
    assert not at.error


def test_same_replacement_token_says_nothing_changes() -> None:
    at = open_page(PAGE)
    at.text_input(key="masks_replacement").set_value("on").run()  # position 3 is already "on"
    assert not at.exception
    assert any(i.value == translate("en", "masks.info_same_token") for i in at.info)
    rows = {name: row for name, row in leak_table(at).iterrows()}
    for row in rows.values():
        assert row[translate("en", "masks.col_exact")] == translate("en", "masks.yes")


MASKS_JA = [*"猫がマットの上に座った。", "[PAD]", "[PAD]"]  # the masks page's Japanese default, 14 tokens


def test_the_masks_maps_name_all_14_tokens_upright_with_their_colour_bars_below() -> None:
    at = open_page("app_pages/masks.py", lang="ja")
    for key in ("masks_chart_mask", "masks_chart_masked_scores", "masks_chart_weights"):
        layout = charts(at)[key]["layout"]
        assert layout["xaxis"]["tickvals"] == list(range(14)) and layout["yaxis"]["tickvals"] == list(
            range(14)
        )
        assert layout["xaxis"]["tickangle"] == 0
        assert layout["xaxis"]["ticktext"] == [stacked(x) if len(x) > 1 else x for x in MASKS_JA]
    for key in ("masks_chart_masked_scores", "masks_chart_weights"):
        assert charts(at)[key]["data"][0]["colorbar"]["orientation"] == "h"
    heights = {
        json.dumps(charts(at)[k]["layout"]["height"]) for k in ("masks_chart_mask", "masks_chart_weights")
    }
    assert len(heights) == 1  # the three maps line up
