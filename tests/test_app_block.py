"""The block page through app.py with AppTest: shapes and residual check on the sentence, the norms
table, Pre-LN against Post-LN with depth, the FLOPs crossover against the closed form, errors, Japanese."""

from __future__ import annotations

from attention_ui.i18n import translate
from tests.apptest_pages import chart_spec, no_exception, open_page

PAGE = "app_pages/block.py"


def frame_with(at, column: str, lang: str = "en"):
    name = translate(lang, column)
    return next(df.value for df in at.dataframe if name in df.value.columns)


def test_block_shapes_residual_and_norms() -> None:
    at = open_page(PAGE, block_text="dog bites man today")
    no_exception(at)
    assert at.title[0].value == translate("en", "block.title")
    stages = frame_with(at, "block.col_stage")
    assert list(stages[translate("en", "block.col_shape")]) == ["4 × 16"] * 7
    means = dict(
        zip(
            stages[translate("en", "block.col_stage")],
            stages[translate("en", "block.col_row_mean")],
            strict=True,
        )
    )
    assert float(means[translate("en", "block.stage_attn_in")]) < 1e-12  # Pre-LN + LayerNorm: centred
    ok = next(s.value for s in at.success if "Pre-LN" in s.value)
    assert float(ok.split("difference ")[1].split(",")[0]) <= 1e-12
    norms = frame_with(at, "block.col_ln_mean")
    assert list(norms[translate("en", "block.col_token")]) == ["dog", "bites", "man", "today"]
    assert all(abs(float(v)) < 1e-12 for v in norms[translate("en", "block.col_ln_mean")])
    assert any(abs(float(v)) > 1e-3 for v in norms[translate("en", "block.col_rms_mean")])


def test_post_ln_rmsnorm_swiglu_causal_and_depth() -> None:
    at = open_page(
        PAGE, block_placement="post", block_norm="rms", block_ffn="swiglu", block_mask="causal", block_depth=6
    )
    no_exception(at)
    assert any("Post-LN" in s.value for s in at.success)
    fig = chart_spec(at, "block_chart_depth")
    pre, post = fig["data"][0]["y"], fig["data"][1]["y"]
    assert len(pre) == len(post) == 7
    assert all(abs(v - 1) < 1e-3 for v in post[1:])  # Post-LN: the stream renormalised every layer
    assert pre[-1] > pre[0]


def test_flops_crossover_and_errors() -> None:
    at = open_page(PAGE, block_flops_d=768, block_flops_h=12, block_ff_mult=4, block_ffn="gelu")
    no_exception(at)
    n_star = (8 * 768**2 + 4 * 768 * 3072) / (4 * 768 + 6 * 12)  # = 4,501.6
    assert any(f"{n_star:,.0f}" in m.value for m in at.markdown)
    fig = chart_spec(at, "block_chart_flops")
    assert fig["layout"]["xaxis"]["type"] == "log" and len(fig["data"]) == 4
    n2 = fig["data"][3]["y"]
    assert n2[1] / n2[0] == (4 * 64**2 * 768 + 72 * 64**2) / (4 * 32**2 * 768 + 72 * 32**2)
    at.number_input(key="block_flops_h").set_value(5).run()
    assert translate("en", "block.err_heads", d=768, h=5) in [e.value for e in at.error]
    at.text_area(key="block_text").input("   ").run()
    no_exception(at)
    assert translate("en", "block.err_empty") in [e.value for e in at.error]


def test_crossover_sentence_names_the_ffn_kind() -> None:
    """Issue 24, point 13: with SwiGLU at d_ff = 4·d the page says ≈ 8·d (4,502 at d = 576, h = 9),
    never the classic FFN's 6·d, which the old sentence claimed for every kind."""
    twelve = "one two three four five six seven eight nine ten eleven twelve"
    at = open_page(
        PAGE, block_flops_d=576, block_flops_h=9, block_ff_mult=4, block_ffn="swiglu", block_text=twelve
    )
    no_exception(at)
    # point 12: the LayerNorm table of 12 tokens scrolls, and says so
    assert translate("en", "app.table_scrolls", rows=12) in [c.value for c in at.caption]
    text = next(m.value for m in at.markdown if "n* ≈" in m.value)
    assert "4,502 tokens" in text  # 10,616,832 / 2,358, by hand
    assert "here ≈ 8 · d_model" in text
    assert "n* is about 6 · d_model." not in text


def test_block_in_japanese() -> None:
    at = open_page(PAGE, lang="ja")
    no_exception(at)
    assert at.title[0].value == translate("ja", "block.title")
    assert [h.value for h in at.header][0] == translate("ja", "block.sec_block")
