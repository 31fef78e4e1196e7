"""Figure builders, tables and control checks, tested as data (no browser)."""

from __future__ import annotations

import re

import numpy as np
import plotly.colors as pc
import pytest

from attention_ui import tables
from attention_ui.figures import base, heatmaps
from attention_ui.kit import CHIP_MAX_TOKENS, escape_markdown, token_chips_markdown, token_list_text
from attention_ui.playground.settings import read_config

SENTENCE = ("the", "cat", "sat", "on", "the", "mat")


def z_of(trace) -> np.ndarray:
    """A heatmap trace's z as floats, None (gap) -> NaN."""
    return np.array([[np.nan if v is None else v for v in row] for row in trace.z], dtype=float)


def positional_matrix(n_rows: int, n_cols: int) -> np.ndarray:
    """Entry (i, j) = 100·i + j, so any transposition or flip shows up in the comparison."""
    return np.array([[100.0 * i + j for j in range(n_cols)] for i in range(n_rows)])


def rgb(colour: str) -> tuple[float, float, float]:
    if colour.startswith("#"):
        return tuple(int(colour[k : k + 2], 16) for k in (1, 3, 5))
    return tuple(float(v) for v in re.findall(r"[\d.]+", colour)[:3])


def colourscale_of(trace) -> list[tuple[float, str]]:
    return [(float(stop), colour) for stop, colour in trace.colorscale]


def same_scale(scale: list[tuple[float, str]], name: str) -> bool:
    ref = pc.get_colorscale(name)
    return [c for _, c in scale] == [c for _, c in ref] and np.allclose(
        [s for s, _ in scale], [s for s, _ in ref]
    )


# ---------------------------------------------------------------- escaping and labels


def test_escape_label_escapes_plotly_pseudo_html():
    assert base.escape_label("<b>x</b>") == "&lt;b&gt;x&lt;/b&gt;"
    assert base.escape_label("a&b") == "a&amp;b"
    assert base.escape_label("plain") == "plain"


def test_escape_label_shortens_before_escaping_so_entities_stay_whole():
    assert base.escape_label("supercalifragilistic", max_chars=10) == "supercali…"
    short = base.escape_label("&&&&&&&&&&&&", max_chars=5)
    assert short == "&amp;&amp;&amp;&amp;…"
    assert base.escape_label("short", max_chars=10) == "short"


def test_tick_positions_thin_out_long_axes_but_keep_short_ones_whole():
    assert base.tick_positions(6) == [0, 1, 2, 3, 4, 5]
    ticks = base.tick_positions(100, max_labels=32)
    assert len(ticks) <= 32 and ticks[0] == 0
    assert all(b - a == ticks[1] - ticks[0] for a, b in zip(ticks, ticks[1:], strict=False))


# ---------------------------------------------------------------- n×n attention maps


def test_repeated_words_keep_their_own_row_and_column():
    values = positional_matrix(6, 6)
    fig = heatmaps.attention_heatmap(values, SENTENCE)
    main = fig.data[0]
    assert z_of(main).shape == (6, 6)
    np.testing.assert_array_equal(z_of(main), values)  # row i = query i, column j = key j
    assert list(main.x) == list(range(6)) and list(main.y) == list(range(6))
    assert list(fig.layout.xaxis.tickvals) == list(range(6))
    assert list(fig.layout.xaxis.ticktext) == list(SENTENCE)
    assert list(fig.layout.yaxis.ticktext) == list(SENTENCE)
    assert fig.layout.yaxis.autorange == "reversed"  # row 0 on top, as in a matrix


def test_hover_names_query_and_key_by_position():
    fig = heatmaps.attention_heatmap(positional_matrix(6, 6), SENTENCE)
    cd = fig.data[0].customdata
    assert list(cd[0][4]) == ["#0 the", "#4 the"]
    assert list(cd[4][1]) == ["#4 the", "#1 cat"]
    template = fig.data[0].hovertemplate
    assert "query" in template and "key" in template and "%{z" in template


def test_signed_scores_use_a_diverging_scale_centred_on_zero():
    values = np.array([[-3.0, 1.0], [0.5, 2.0]])
    fig = heatmaps.attention_heatmap(values, ("a", "b"), kind="signed")
    main = fig.data[0]
    assert main.zmid == 0
    assert main.zmin == -3.0 and main.zmax == 3.0  # symmetric, so white really means 0
    scale = colourscale_of(main)
    low, mid, high = rgb(scale[0][1]), rgb(scale[len(scale) // 2][1]), rgb(scale[-1][1])
    assert low[2] > low[0]  # negative end is blue
    assert high[0] > high[2]  # positive end is red
    assert min(mid) > 200  # the centre is near white
    assert same_scale(scale, "RdBu_r")


def test_weights_use_a_fixed_zero_to_one_sequential_scale():
    w = np.array([[0.2, 0.8], [0.5, 0.5]])
    main = heatmaps.attention_heatmap(w, ("a", "b"), kind="weights").data[0]
    assert (main.zmin, main.zmax) == (0.0, 1.0)
    assert same_scale(colourscale_of(main), base.WEIGHT_SCALE)


def test_masked_cells_get_a_grey_overlay_that_is_off_the_colour_scale():
    n = 5
    allowed = np.array([[j <= i for j in range(n)] for i in range(n)])  # causal, by hand
    scores = positional_matrix(n, n)
    scores_masked = np.where(allowed, scores, -np.inf)
    fig = heatmaps.attention_heatmap(scores_masked, tuple("abcde"), allowed=allowed, show_text=False)
    assert len(fig.data) == 2
    main, overlay = fig.data
    main_z, over_z = z_of(main), z_of(overlay)
    for i in range(n):
        for j in range(n):
            if j > i:  # masked: value hidden in the main trace, grey cell in the overlay
                assert np.isnan(main_z[i, j]) and over_z[i, j] == 1.0
            else:
                assert main_z[i, j] == scores[i, j] and np.isnan(over_z[i, j])
    assert overlay.showscale is False
    assert {c for _, c in colourscale_of(overlay)} == {base.MASK_COLOR}
    assert "masked (−∞)" in overlay.hovertemplate
    assert list(overlay.customdata[0][3]) == ["#0 a", "#3 d"]


def test_masked_weights_read_zero_not_minus_infinity():
    allowed = np.array([[True, False], [True, True]])
    w = np.array([[1.0, 0.0], [0.3, 0.7]])
    overlay = heatmaps.attention_heatmap(w, ("a", "b"), kind="weights", allowed=allowed).data[1]
    assert overlay.text[0][1] == "0"
    assert "masked (−∞)" in overlay.hovertemplate and ": 0" in overlay.hovertemplate


def test_hover_ignores_empty_cells_so_allowed_cells_never_read_masked():
    allowed = np.array([[True, False], [True, True]])
    fig = heatmaps.attention_heatmap(np.zeros((2, 2)), ("a", "b"), allowed=allowed)
    assert [t.hoverongaps for t in fig.data] == [False, False]


def test_concat_map_divides_the_heads():
    fig = heatmaps.feature_heatmap(np.zeros((2, 6)), ("a", "b"), group_size=2)
    assert sorted(shape.x0 for shape in fig.layout.shapes) == [1.5, 3.5]
    assert not heatmaps.feature_heatmap(np.zeros((2, 6)), ("a", "b")).layout.shapes


def test_no_overlay_without_masked_cells():
    fig = heatmaps.attention_heatmap(np.eye(3), ("a", "b", "c"), allowed=np.ones((3, 3), bool))
    assert [tr.name for tr in fig.data] == ["values", "values text"]  # the second: white numbers only


def test_cell_values_are_printed_only_up_to_twelve_tokens():
    small = heatmaps.attention_heatmap(np.zeros((12, 12)), tuple(f"t{i}" for i in range(12)))
    big = heatmaps.attention_heatmap(np.zeros((13, 13)), tuple(f"t{i}" for i in range(13)))
    assert small.data[0].texttemplate == "%{text}" and small.data[0].text[11][11] == "0.00"
    assert big.data[0].texttemplate is None


def test_user_text_is_escaped_in_ticks_and_hover():
    tokens = ("<b>x</b>", "a&b")
    fig = heatmaps.attention_heatmap(np.zeros((2, 2)), tokens)
    assert list(fig.layout.xaxis.ticktext) == ["&lt;b&gt;x&lt;/b&gt;", "a&amp;b"]
    assert list(fig.layout.yaxis.ticktext) == ["&lt;b&gt;x&lt;/b&gt;", "a&amp;b"]
    assert list(fig.data[0].customdata[0][1]) == ["#0 &lt;b&gt;x&lt;/b&gt;", "#1 a&amp;b"]
    assert "<b>" not in str(fig.to_dict())


def test_long_tokens_are_shortened_on_the_axis_but_whole_in_hover():
    word = "supercalifragilisticexpialidocious"
    fig = heatmaps.attention_heatmap(np.zeros((2, 2)), (word, "x"))
    assert fig.layout.xaxis.ticktext[0].endswith("…") and len(fig.layout.xaxis.ticktext[0]) <= 10
    assert fig.data[0].customdata[0][0][0] == f"#0 {word}"


def test_long_sentences_thin_the_labels_but_keep_every_cell_and_hover():
    n = 70
    tokens = tuple(f"w{i}" for i in range(n))
    values = positional_matrix(n, n)
    fig = heatmaps.attention_heatmap(values, tokens)
    np.testing.assert_array_equal(z_of(fig.data[0]), values)
    ticks = list(fig.layout.xaxis.tickvals)
    assert len(ticks) <= base.TICK_MAX_LABELS
    assert list(fig.layout.xaxis.ticktext) == [f"w{i}" for i in ticks]
    assert fig.data[0].texttemplate is None
    assert fig.data[0].customdata[69][68][1] == "#68 w68"


def test_wrong_shapes_are_refused():
    with pytest.raises(ValueError):
        heatmaps.attention_heatmap(np.zeros((3, 3)), ("a", "b"))
    with pytest.raises(ValueError):
        heatmaps.attention_heatmap(np.zeros((2, 2)), ("a", "b"), allowed=np.ones((3, 3), bool))


# ---------------------------------------------------------------- feature matrices, mask, heads


def test_feature_maps_print_values_only_with_few_dimensions():
    tokens = tuple("abcdef")
    narrow = heatmaps.feature_heatmap(np.zeros((6, 4)), tokens)
    wide = heatmaps.feature_heatmap(np.zeros((6, 5)), tokens)
    assert narrow.data[0].texttemplate == "%{text}" and narrow.data[0].text[5][3] == "0.00"
    assert wide.data[0].texttemplate is None
    assert heatmaps.feature_heatmap(np.zeros((13, 2)), tuple("abcdefghijklm")).data[0].texttemplate is None


def test_feature_maps_have_token_rows_and_dimension_columns():
    values = positional_matrix(6, 4)
    fig = heatmaps.feature_heatmap(values, SENTENCE)
    np.testing.assert_array_equal(z_of(fig.data[0]), values)
    assert list(fig.layout.xaxis.tickvals) == [0, 1, 2, 3]
    assert list(fig.layout.yaxis.ticktext) == list(SENTENCE)
    assert fig.data[0].zmid == 0
    assert list(fig.data[0].customdata[4][2]) == ["#4 the", "2"]


def test_mask_map_marks_exactly_the_forbidden_cells():
    n, n_pad = 5, 2
    allowed = np.array([[j <= i and j < n - n_pad for j in range(n)] for i in range(n)])
    fig = heatmaps.mask_heatmap(allowed, ("a", "b", "c", "[PAD]", "[PAD]"))
    over = z_of(fig.data[1])
    np.testing.assert_array_equal(~np.isnan(over), ~allowed)
    assert fig.data[0].texttemplate is None  # the allowed (0) cells are light, with no printed zeros
    assert fig.data[1].text[0][4] == "−∞" and fig.data[1].texttemplate == "%{text}"


def test_small_multiples_show_every_head_on_one_shared_scale():
    rng = np.random.default_rng(3)
    w = rng.random((3, 4, 4))
    w /= w.sum(axis=2, keepdims=True)
    fig = heatmaps.heads_small_multiples(w, ("a", "b", "c", "d"))
    assert len(fig.data) == 3
    for k in range(3):
        np.testing.assert_allclose(z_of(fig.data[k]), w[k])
        assert fig.data[k].coloraxis == "coloraxis"
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["head 0", "head 1", "head 2"]


def test_small_multiples_for_long_sentences_hover_with_exact_positions():
    n = 30
    fig = heatmaps.heads_small_multiples(np.full((2, n, n), 1 / n), tuple(f"w{i}" for i in range(n)))
    assert fig.data[0].customdata is None
    assert "#%{y}" in fig.data[0].hovertemplate and "#%{x}" in fig.data[0].hovertemplate
    assert fig.data[0].xgap == 0  # no white grid drowning 30 tiny cells
    short = heatmaps.heads_small_multiples(np.full((1, 3, 3), 1 / 3), ("a", "b", "c"))
    assert list(short.data[0].customdata[2][0]) == ["#2 c", "#0 a"]


def test_small_multiples_with_a_mask_add_one_overlay_per_head():
    allowed = np.array([[j <= i for j in range(3)] for i in range(3)])
    fig = heatmaps.heads_small_multiples(np.full((2, 3, 3), 1 / 3), ("a", "b", "c"), allowed=allowed)
    assert [t.name for t in fig.data] == ["values", "masked", "values", "masked"]


# ---------------------------------------------------------------- tables


def test_tables_have_unique_token_labels_for_repeated_words():
    values = positional_matrix(6, 6)
    frame = tables.attention_table(values, SENTENCE)
    assert list(frame.index) == ["0 the", "1 cat", "2 sat", "3 on", "4 the", "5 mat"]
    assert frame.index.is_unique and frame.columns.is_unique
    assert frame.loc["4 the", "0 the"] == 400.0


def test_feature_and_mask_tables():
    frame = tables.feature_table(positional_matrix(2, 3), ("a", "a"))
    assert list(frame.columns) == ["d0", "d1", "d2"] and frame.loc["1 a", "d2"] == 102.0
    mask = tables.mask_table(np.array([[True, False], [True, True]]), ("a", "b"))
    assert mask.loc["0 a", "1 b"] == -np.inf and mask.loc["1 b", "0 a"] == 0.0


def test_rectangular_and_formatted_tables():
    cross = tables.labelled_table(positional_matrix(2, 3), ("a", "a"), ("x", "y", "x"))
    assert list(cross.index) == ["0 a", "1 a"] and list(cross.columns) == ["0 x", "1 y", "2 x"]
    assert cross.loc["1 a", "2 x"] == 102.0
    text = tables.matrix_table([[0.0, 2.5e-17]], ["r"], ["c0", "c1"], fmt=lambda v: f"{v:.1e}")
    assert text.loc["r"].tolist() == ["0.0e+00", "2.5e-17"]
    with pytest.raises(ValueError):
        tables.matrix_table([[1.0]], ["r", "s"], ["c"])


# ---------------------------------------------------------------- controls -> config


BASE = dict(
    d_model=16,
    heads=2,
    auto_dims=True,
    d_k=8,
    d_v=8,
    mask="none",
    pad=0,
    scale="sqrt",
    divisor=2.0,
    seed=0,
    positional=True,
)


def test_good_settings_make_a_config():
    config, problems = read_config(BASE)
    assert problems == [] and config.head_dim_k == 8 and config.divisor == pytest.approx(8**0.5)


@pytest.mark.parametrize(
    "change, key",
    [
        ({"d_model": 10, "heads": 3}, "playground.err_divisible"),
        ({"pad": 99}, "playground.err_pad"),
        ({"pad": -1}, "playground.err_pad"),
        ({"scale": "custom", "divisor": 0.0}, "playground.err_divisor"),
        ({"scale": "custom", "divisor": float("nan")}, "playground.err_divisor"),
        ({"heads": 0}, "playground.err_range"),
        ({"auto_dims": False, "d_k": 0}, "playground.err_range"),
    ],
)
def test_bad_settings_name_a_catalog_message(change, key):
    config, problems = read_config({**BASE, **change})
    assert config is None
    assert key in [p.key for p in problems]


def test_manual_head_sizes_skip_the_divisibility_rule():
    config, problems = read_config(
        {**BASE, "d_model": 10, "heads": 3, "auto_dims": False, "d_k": 4, "d_v": 5}
    )
    assert problems == [] and (config.head_dim_k, config.head_dim_v) == (4, 5)


def test_custom_divisor_is_used():
    config, _ = read_config({**BASE, "scale": "custom", "divisor": 4.0})
    assert config.divisor == 4.0


def test_markdown_chips_escape_every_markup_character():
    assert escape_markdown("*a* $x$ [l](u) <b>") == r"\*a\* \$x\$ \[l\]\(u\) \<b\>"
    chips = token_chips_markdown(("the", "]", "[PAD]"), n_pad=1)
    assert chips == r":blue-badge[0 · the] :blue-badge[1 · \]] :gray-badge[2 · \[PAD\]]"


def test_long_sentences_list_tokens_as_plain_text_with_positions_and_pads():
    tokens = ("**x**", "<b>", "a", "[PAD]")
    text = token_list_text(tokens, n_pad=1)
    assert text == "0 **x** · 1 <b> · 2 a · 3 [PAD] (pad)"  # literal: shown with st.text, never Markdown
    assert CHIP_MAX_TOKENS >= 12  # the default sentence and the examples keep their chips


# ---------------------------------------------------------------- readability (issue 18)


def test_cell_numbers_have_one_readable_size_and_appear_only_where_they_fit():
    allowed = np.tril(np.ones((8, 8), bool))
    wide = heatmaps.attention_heatmap(np.eye(8), tuple("abcdefgh"), kind="weights", allowed=allowed)
    sizes = {tr.textfont.size for tr in wide.data if tr.texttemplate}
    assert sizes == {heatmaps.CELL_FONT_PX} and heatmaps.CELL_FONT_PX >= 10  # numbers, "0" and "−∞" alike
    tokens = ("the", "cat", "sat", "on", "the", "mat", "[PAD]", "[PAD]")
    narrow = heatmaps.attention_heatmap(np.eye(8), tokens, kind="weights", allowed=allowed, plot_px=170)
    assert all(tr.texttemplate is None for tr in narrow.data)  # 21 px cells: no 5 px numbers
    assert narrow.layout.xaxis.tickangle == -90  # upright labels instead of overlapping ones


def test_log_axes_are_labelled_at_powers_of_ten_only():
    from attention_ui.figures import cost as figures_cost
    from attention_ui.multihead import figures as figures_multihead

    assert base.LOG_DECADES == {"type": "log", "dtick": 1}
    import inspect

    for module in (figures_cost, figures_multihead):
        src = inspect.getsource(module)
        assert 'type="log"' not in src, module.__name__  # every log axis goes through LOG_DECADES


TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


def test_named_dimensions_turn_when_crowded_and_the_margin_has_room_for_it():
    names = [f"h{i}·{j}" for i in range(2) for j in range(8)]
    fig = heatmaps.feature_heatmap(np.zeros((6, 16)), TOKENS, dim_names=names, dim_title="dimension")
    assert fig.layout.xaxis.tickangle is None  # Plotly's "auto": upright where they would run together
    upright = max(base.text_px(name) for name in names)
    assert fig.layout.margin.b >= upright + base.TICK_PAD_PX + base.TITLE_BAND_PX
    plain = heatmaps.feature_heatmap(np.zeros((6, 16)), TOKENS)
    plot = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert plot == plain.layout.height - plain.layout.margin.t - plain.layout.margin.b  # rows keep their size


def test_four_heads_name_the_12_tokens_of_the_japanese_default() -> None:
    tokens = list("猫がマットの上に座った。")
    fig = heatmaps.heads_small_multiples(np.full((4, 12, 12), 1 / 12), tokens)
    assert list(fig.layout.xaxis.tickvals) == list(range(12)) and fig.layout.xaxis.tickangle == 0
