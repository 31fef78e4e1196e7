"""The numbers in the messages, charts and tables of the inference and block pages, read back from the
page and checked (issue 28; tests/test_app_page_numbers.py reads their metrics and main tables).

As in tests/test_app_decoder_numbers.py, each message is found on the page by its own template and
every value it shows is compared with one computed here: the FLOPs and byte counts from the closed
forms written out below, the model shapes of the calculator from their published configurations,
and what depends on the random lab (the cached-decoding gap, the per-token changes, the block's RMS)
from the lab's own result, which the lab tests check against naive references. Tables above that
must list every row here: tests/test_page_numbers_audit.py fails for a message or chart of these
pages that no test names.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.labs import block as lab_block
from attention_core.labs import inference as lab_inference
from attention_core.labs.cost import format_bytes
from attention_ui.i18n import translate
from tests.apptest_pages import Near, charts, differences, message_values, open_page, page_strings, z

INFERENCE, BLOCK = "app_pages/inference.py", "app_pages/block.py"


def check(strings, lang: str, key: str, expected) -> None:
    """``key`` is shown once (``expected`` a dict) or that many times (a list), each with those values."""
    shown = message_values(strings, lang, key)
    want = expected if isinstance(expected, list) else [expected]
    assert len(shown) == len(want), (key, shown, want)
    for got, exp in zip(shown, want, strict=True):
        assert not differences(got, exp), (key, differences(got, exp))


# --- inference --------------------------------------------------------------------------------------

D, H, G = 16, 4, 2  # the page's defaults
D_K = D // H


def step_flops(n: int) -> tuple[int, int]:
    """One decoding step with and without the cache: 2d(h + 2g)d_k + 4hn·d_k and n·2d(h + 2g)d_k + 4hn²d_k."""
    proj = 2 * D * (H + 2 * G) * D_K
    return proj + 4 * H * n * D_K, n * proj + 4 * H * n * n * D_K


# the calculator's presets, as their configurations state them: name, layers, heads, KV heads, d_k, context
SMOLLM2 = ("SmolLM2-135M", 30, 9, 3, 64, 8192)
MISTRAL = ("Mistral 7B", 32, 32, 8, 128, 8192)  # window 4,096 in every layer


def cache(shape, n: int, g: int, per_value: int = 2, held: int | None = None) -> int:
    """2 · layers · tokens kept · g · d_k · bytes per value (float16)."""
    return 2 * shape[1] * (n if held is None else held) * g * shape[4] * per_value


@pytest.fixture(scope="module")
def inference_runs():
    runs = {}
    for lang in ("en", "ja"):
        at = open_page(INFERENCE, lang=lang, inference_tables=True)
        s = at.session_state
        lab = lab_inference.inference_lab(
            lab_inference.InferenceSettings(s["inference_text"], int(s["inference_d_model"]), int(s["inference_heads"]),
                                            int(s["inference_kv_heads"]), int(s["inference_seed"]))
        )  # fmt: skip
        runs[lang] = (at, lab, page_strings(at))
    return runs


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_inference_messages(inference_runs, lang) -> None:
    at, lab, strings = inference_runs[lang]
    n = len(lab.tokens)
    assert (lab.settings.d_model, lab.settings.heads, lab.settings.kv_heads) == (D, H, G)
    check(strings, lang, "inference.explain_cache", dict(n=str(n), h=str(H), g=str(G), d_k=str(D_K)))
    check(strings, lang, "inference.explain_flops", dict(d_model=str(D), h=str(H), g=str(G)))
    cached, recompute = step_flops(4096)
    knee = D * (H + 2 * G) / (2 * H)  # the n where 2d(h + 2g)d_k = 4hn·d_k
    check(strings, lang, "inference.flops_note", dict(n_big="4,096", cached=f"{cached:,}", recompute=f"{recompute:,}",
                                                      ratio=f"{recompute / cached:,.0f}", knee=f"{knee:,.3g}"))  # fmt: skip
    check(strings, lang, "inference.alt_flops", dict(n_max="65,536", knee=f"{knee:,.3g}"))
    groups = [
        dict(kv=str(k), heads=", ".join(str(j) for j in range(H) if j // (H // G) == k)) for k in range(G)
    ]
    assert message_values(strings, lang, "inference.group_line", whole=False) == groups
    check(strings, lang, "inference.explain_groups", dict(h=str(H), g=str(G)))
    check(strings, lang, "inference.head_title", [dict(h=str(j), kv=str(j // (H // G))) for j in range(H)])
    check(strings, lang, "inference.alt_groups", dict(h=str(H), g=str(G)))
    causal, bidi = f"{lab.max_change_causal:.3g}", f"{lab.max_change_bidirectional:.3g}"
    assert lab.max_change_causal < 1e-12 < lab.max_change_bidirectional  # causal: rounding only
    check(strings, lang, "inference.causal_note", dict(causal=causal, bidi=bidi))
    check(strings, lang, "inference.alt_causal", dict(n=str(n - 1), causal=causal, bidi=bidi))
    check(strings, lang, "inference.cache_equal", dict(n=str(n), h=str(H), diff=f"{lab.cache_gap:.3g}"))
    # the calculator at its defaults: SmolLM2-135M, 8,192 tokens, float16, the model's own g = 3
    name, layers, heads, kv, d_k, context = SMOLLM2
    caption = next(c.value for c in at.caption if c.value.startswith(name))
    source = message_values([caption], lang, "inference.source", whole=False)
    assert source and not differences(source[0], dict(name=name, layers=str(layers), heads=str(heads), kv=str(kv),
                                                       d_k=str(d_k)))  # fmt: skip
    assert message_values([caption], lang, "inference.source_context", whole=False) == [
        dict(context=f"{context:,}")
    ]
    size, mha = cache(SMOLLM2, 8192, kv), cache(SMOLLM2, 8192, heads)
    check(strings, lang, "inference.size_note", dict(g=str(kv), h=str(heads), ratio=f"{kv / heads:.3g}",
                                                     saved=format_bytes(mha - size), n="8,192"))  # fmt: skip
    check(strings, lang, "inference.alt_size", dict(name=name, n="8,192", h=str(heads), g=str(kv),
                                                    size=format_bytes(size)))  # fmt: skip


def test_inference_over_the_context_and_with_a_window() -> None:
    """Mistral 7B asked for 100,000 tokens: capped at its 8,192, each layer holds the last 4,096."""
    at = open_page(INFERENCE, inference_preset=4, inference_calc_n=100_000)
    strings = page_strings(at)
    name, layers, heads, kv, d_k, context = MISTRAL
    check(strings, "en", "inference.over_context", dict(name=name, asked="100,000", context="8,192"))
    caption = next(c.value for c in at.caption if c.value.startswith(name))
    assert message_values([caption], "en", "inference.source_window", whole=False) == [
        dict(w="4,096", layers="32", total="32")
    ]
    check(strings, "en", "inference.window_note", dict(w="4,096", n="8,192", held="4,096"))
    size = cache(MISTRAL, 8192, kv, held=4096)
    assert [m.value for m in at.metric if m.label == translate("en", "inference.size_metric", g=kv)] == [
        format_bytes(size)
    ]
    bars = charts(at, "inference_chart_")["size"]["data"][0]
    assert list(bars["x"]) == ["1", "2", "4", "8", "16", "32"]  # every g that divides h = 32
    assert list(bars["y"]) == [cache(MISTRAL, 8192, int(g), held=4096) for g in bars["x"]]


def test_inference_charts_and_flops_table(inference_runs) -> None:
    at, lab, _ = inference_runs["en"]
    found = charts(at, "inference_chart_")
    ns = [2**k for k in range(17)]
    flops = found["flops"]["data"]
    assert list(flops[0]["x"]) == ns
    assert list(flops[0]["y"]) == [step_flops(n)[0] for n in ns]
    assert list(flops[1]["y"]) == [step_flops(n)[1] for n in ns]
    table = next(
        df.value for df in at.dataframe if translate("en", "inference.series_recompute") in df.value.columns
    )
    assert list(table.index) == ns and list(table.iloc[:, 0]) == [step_flops(n)[0] for n in ns]
    n = len(lab.tokens)
    for j in range(H):  # one causal map per query head, lower triangle = the lab's weights
        shown = z(found["groups"], 2 * j)  # each head: its values, then its masked cells
        keep = np.tril(np.ones((n, n), bool))
        np.testing.assert_allclose(shown[keep], lab.weights[j][keep], atol=1e-3)
    causal = found["causal"]["data"]
    assert list(causal[0]["y"]) == [0.0] * (n - 1)
    np.testing.assert_allclose(causal[1]["y"], lab.change_bidirectional, rtol=1e-9)
    size = found["size"]["data"][0]
    assert list(size["y"]) == [cache(SMOLLM2, 8192, g) for g in (1, 3, 9)]


def test_inference_settings_error_names_the_problem(monkeypatch) -> None:
    from attention_core import AttentionConfigError

    def refuse(settings):
        raise AttentionConfigError("d_model = 10 is not divisible by h = 4")

    monkeypatch.setattr(lab_inference, "inference_lab", refuse)  # the page wraps it in its cache at each run
    at = open_page(INFERENCE)
    errors = [e.value for e in at.error]
    assert message_values(errors, "en", "inference.err_config") == [
        dict(detail="d_model = 10 is not divisible by h = 4")
    ], errors


# --- block ------------------------------------------------------------------------------------------


def n_star(d: int, h: int, d_ff: int, c: int = 4) -> float:
    """Where attention's n² term equals the projections and FFN: (8d² + c·d·d_ff) / (4d + 6h)."""
    return (8 * d * d + c * d * d_ff) / (4 * d + 6 * h)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_block_messages(lang) -> None:
    at = open_page(BLOCK, lang=lang)
    strings = page_strings(at)
    s = at.session_state
    cfg = lab_block.BlockConfig(
        d_model=16, heads=2, norm="layer", placement="pre", ffn="gelu", mask="none", seed=0
    )
    assert all(
        s[f"block_{k}"] == v for k, v in dict(d_model=16, heads=2, norm="layer", placement="pre").items()
    )
    trace = lab_block.block_lab(s["block_text"], cfg)
    n = len(trace.tokens)
    check(strings, lang, "block.formula_note", dict(norm=translate(lang, "block.norm_layer")))
    check(strings, lang, "block.alt_stages", dict(count="7"))  # x, N₁, Attn, h, N₂, FFN, y
    check(strings, lang, "block.shapes_note", dict(n=str(n), d="16", d_ff="64", h="2"))  # d_ff = 4 · 16
    check(strings, lang, "block.residual_pre", dict(diff=f"{lab_block.residual_gap(trace):.2e}"))
    run = lab_block.depth_run(s["block_text"], cfg, 12)
    check(strings, lang, "block.alt_depth", dict(depth="12"))
    check(strings, lang, "block.depth_lesson", dict(depth="12", pre=Near(run.pre_rms[-1]), start=Near(run.pre_rms[0]),
                                                    post=Near(run.post_rms[-1])))  # fmt: skip
    cross = n_star(768, 12, 3072)
    check(strings, lang, "block.crossover_label", dict(n=f"{cross:,.0f}"))
    check(strings, lang, "block.alt_flops", dict(d="768", h="12", d_ff="3072"))
    check(strings, lang, "block.crossover", dict(n=f"{cross:,.0f}", d="768", h="12", d_ff="3072", mult="4",
                                                 limit="6"))  # fmt: skip  # (8 + 4 · 4) / 4
    stages = charts(at, "block_chart_")["stages"]["data"]
    # the bars lie across (orientation "h", issue 42 point 14): their lengths are x, their names y
    shown = [v for tr in stages for v in tr["x" if tr.get("orientation") == "h" else "y"]]
    assert sorted(shown) == pytest.approx(
        sorted(st.mean_rms for st in lab_block.stage_stats(trace)), rel=1e-9
    )
    depth = charts(at, "block_chart_")["depth"]["data"]
    assert list(depth[0]["y"]) == pytest.approx(list(run.pre_rms)) and list(depth[1]["y"]) == pytest.approx(
        list(run.post_rms)
    )
    flops = charts(at, "block_chart_")["flops"]["data"]
    ns = [2**k for k in range(5, 21)]
    by_name = {tr["name"]: tr["y"] for tr in flops if tr.get("y") and len(tr["y"]) == len(ns)}
    assert by_name[translate(lang, "block.flops_n2")] == [4 * m * m * 768 + 6 * 12 * m * m for m in ns]
    where = next(
        df.value for df in at.dataframe if translate(lang, "block.col_architecture") in df.value.columns
    )
    assert list(where.iloc[:, 0]) == [
        translate(lang, f"block.arch_{a}") for a in ("encoder", "decoder", "encdec")
    ]


def test_block_post_ln_and_a_long_sentence() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    at = open_page(BLOCK, block_text=text, block_placement="post")
    strings = page_strings(at)
    trace = lab_block.block_lab(text, lab_block.BlockConfig(d_model=16, heads=2, norm="layer", placement="post",
                                                            ffn="gelu", mask="none", seed=0))  # fmt: skip
    kept = len(trace.tokens)
    assert kept < 100
    check(strings, "en", "block.warn_truncated", dict(total="100", kept=str(kept)))
    check(strings, "en", "block.residual_post", dict(diff=f"{lab_block.residual_gap(trace):.2e}"))
    assert message_values(strings, "en", "block.residual_pre") == []


def test_block_flops_input_out_of_range_names_the_range(monkeypatch) -> None:
    from attention_ui import kit
    from attention_ui.i18n import Translator

    page = kit.Page("block", "block", {})
    shown: list[str] = []
    monkeypatch.setattr(kit.st, "session_state", {"block_flops_d": 8})
    monkeypatch.setattr(kit.st, "error", shown.append)
    assert page.whole(Translator("en"), "block_flops_d", "d_model", (16, 16384)) is None
    assert message_values(shown, "en", "block.err_range") == [dict(name="d_model", lo="16", hi="16384")]


# --- cost: memory, FLOPs, the tiled check, the window, linear attention, ring attention ----------------

COST = "app_pages/cost.py"
CHART_NS = [2**k for k in range(7, 21)]  # the memory and FLOPs charts: 128 … 1,048,576
NOTES_NS = [2_048, 8_192, 32_768, 131_072, 1_000_000]  # the reference notes' rows


@pytest.fixture(scope="module")
def cost_runs():
    return {lang: open_page(COST, lang=lang, cost_tables=True) for lang in ("en", "ja")}


def table_with(at, column: str):
    return next(df.value for df in at.dataframe if column in df.value.columns)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_cost_memory_and_flops_numbers(cost_runs, lang) -> None:
    """Memory n² · bytes · heads · batch · layers and FLOPs h(2n²d_k + 6n² + 2n²d_v), by hand, at the
    page's defaults (FP16, 1 head, batch 1, 1 layer, d_k = 64)."""
    at = cost_runs[lang]
    strings = page_strings(at)
    tr = lambda key, **v: translate(lang, key, **v)  # noqa: E731
    notes = table_with(at, tr("cost.col_notes"))
    assert list(notes["n"]) == NOTES_NS
    assert list(notes[tr("cost.col_elements")]) == [n * n for n in NOTES_NS]
    assert list(notes[tr("cost.col_bytes")]) == [2 * n * n for n in NOTES_NS]
    assert list(notes[tr("cost.col_ratio")]) == [f"×{n * n / NOTES_NS[0] ** 2:,.0f}" for n in NOTES_NS]
    extended = table_with(at, tr("cost.col_gpus"))
    assert list(extended[tr("cost.col_gpus")]) == [f"{2 * n * n / 80e9:,.2g}" for n in NOTES_NS]
    assert list(extended[tr("cost.col_binary")]) == [format_bytes(2 * n * n) for n in NOTES_NS]
    formats = [dict(dtype="FP32", bytes="4"), dict(dtype="FP16", bytes="2"), dict(dtype="BF16", bytes="2"),
               dict(dtype="FP8", bytes="1")]  # fmt: skip
    lines = [
        dict(dtype="FP32", bytes="4"),
        dict(dtype="FP16 / BF16", bytes="2"),
        dict(dtype="FP8", bytes="1"),
    ]
    # the two format boxes (extended table, ring costs), then the memory chart's lines and table columns
    check(strings, lang, "cost.dtype_name", formats + formats + lines + lines)
    check(strings, lang, "cost.alt_memory", dict(heads="1", batch="1", layers="1"))
    memory = charts(at, "cost_chart_")["memory"]["data"]
    for line, size in zip(memory, (4, 2, 1), strict=False):
        assert list(line["y"]) == [size * n * n for n in CHART_NS]
    check(strings, lang, "cost.alt_flops", dict(d_k="64", heads="1"))
    flops = {tr_["name"]: tr_["y"] for tr_ in charts(at, "cost_chart_")["flops"]["data"]}
    assert flops[tr("cost.flops_total")] == [2 * n * n * 64 + 6 * n * n + 2 * n * n * 64 for n in CHART_NS]
    assert flops[tr("cost.flops_softmax")] == [6 * n * n for n in CHART_NS]
    table = table_with(at, tr("cost.flops_total"))
    assert list(table[tr("cost.flops_scores")]) == [2 * n * n * 64 for n in CHART_NS]
    assert list(table_with(at, tr("cost.flops_total")).columns)[0] == "n"
    mem_table = next(
        df.value for df in at.dataframe if list(df.value.columns)[1:] == [ln["name"] for ln in memory[:3]]
    )
    assert list(mem_table.iloc[:, 1]) == [4 * n * n for n in CHART_NS]
    check(strings, lang, "cost.flops_ratio", dict(ratio="4.00"))  # every part ∝ n²: ×2 in n is ×4
    check(strings, lang, "cost.explain_measure", dict(d="64", limit="4,096"))


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_cost_tiled_window_linear_and_ring_numbers(cost_runs, lang) -> None:
    at = cost_runs[lang]
    strings = page_strings(at)
    from attention_core.labs import efficient as lab_efficient
    from attention_core.labs import ring as lab_ring
    from attention_core.labs.cost import tiled_check

    # the tiled check at n = 512, b = 64, no mask: 8 × 8 tiles, all computed
    chk = tiled_check(512, 64, False)
    check(strings, lang, "cost.check_ok", dict(diff=f"{chk.max_abs_diff:.2e}"))
    assert [m.value for m in at.metric if m.label == translate(lang, "cost.check_tile_share")] == [
        "4,096 / 262,144"
    ]
    assert [m.value for m in at.metric if m.label == translate(lang, "cost.check_diff")] == [
        f"{chk.max_abs_diff:.2e}"
    ]
    check(strings, lang, "cost.alt_tiles", dict(tiles="8", block="64", n="512"))
    tiles = table_with(at, "#")
    assert list(tiles["#"]) == [str(i) for i in range(8)]
    assert set(tiles.iloc[:, 1:].to_numpy().ravel()) == {translate(lang, "cost.tile_computed")}
    assert np.array(z(charts(at, "cost_chart_")["tiles"])).size == 64
    # the sliding window at its defaults: n = 1,024, w = 64, b = 64
    win = lab_efficient.window_check(1024, 64, 64)
    check(strings, lang, "cost.win_ok", dict(diff=f"{win.max_abs_diff:.2e}"))
    check(strings, lang, "cost.win_model", dict(diff=f"{win.diff_to_causal:.2e}", w="64"))
    check(strings, lang, "cost.alt_window_tiles", dict(tiles="16", block="64", n="1024", w="64"))
    grid = z(charts(at, "cost_chart_")["window_tiles"])
    needed = [[any(i - 64 < j <= i for i in (q * 64, q * 64 + 63) for j in (k * 64, k * 64 + 63)) or k == q - 1 or k == q
               for k in range(16)] for q in range(16)]  # fmt: skip  # the diagonal tile and the one before it
    assert (
        grid.shape == (16, 16)
        and (np.nan_to_num(grid) > 0).tolist()
        == [[q - 1 <= k <= q for k in range(16)] for q in range(16)]
        == needed
    )
    check(
        strings,
        lang,
        "cost.explain_window_time",
        dict(block="128", top=f"{lab_efficient.WINDOW_SWEEP_NS[-1]:,}"),
    )
    # linear attention on the page's sentence
    lin = lab_efficient.linear_lab(at.session_state["cost_text"])
    n = len(lin.tokens)
    check(
        strings,
        lang,
        "cost.lin_ok",
        dict(diff=f"{lin.recurrence_vs_quadratic:.2e}", n=str(n), d=str(lin.d_k)),
    )
    check(strings, lang, "cost.alt_softmax_weights", dict(n=str(n)))
    check(strings, lang, "cost.alt_linear_weights", dict(n=str(n)))
    check(strings, lang, "cost.alt_linear_row", dict(row=str(n - 1)))  # a new sentence shows its last query
    row = {tr_["name"]: tr_["y"] for tr_ in charts(at, "cost_chart_")["linear_row"]["data"]}
    np.testing.assert_allclose(
        row[translate(lang, "cost.softmax_weights")], lin.softmax_weights[n - 1], rtol=1e-9
    )
    np.testing.assert_allclose(
        row[translate(lang, "cost.linear_weights")], lin.linear_weights[n - 1], rtol=1e-9
    )
    check(strings, lang, "cost.alt_linear_flops", dict(d="64"))
    lines = {tr_["name"]: tr_["y"] for tr_ in charts(at, "cost_chart_")["linear_flops"]["data"]}
    ns = [2**k for k in range(7, 17)]
    per_score = 2 * 64 + 6 + 2 * 64
    assert lines[translate(lang, "cost.flops_linear_attention")] == [
        m * (4 * 64 * 64 + 3 * 64 + 64) for m in ns
    ]
    assert lines[translate(lang, "cost.flops_softmax_attention")] == [m * m * per_score for m in ns]
    assert lines[translate(lang, "cost.flops_causal_softmax")] == [m * (m + 1) // 2 * per_score for m in ns]
    check(strings, lang, "cost.explain_exact", dict(n="256", w="32"))
    # ring attention at its defaults: n = 64, P = 4, causal, row 40; costs at n = 131,072, d = 128, BF16
    P, b_live = 4, 64 // 4
    ring = lab_ring.ring_lab(64, 16, P, True, 40)
    check(strings, lang, "ring.ok", dict(diff=f"{ring.max_abs_diff:.2e}", n="64", P="4", d="16"))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[translate(lang, "ring.metric_steps")] == "4"
    assert metrics[translate(lang, "ring.metric_busiest")] == "4 / 1"  # contiguous blocks: p + 1 each
    folded = P * (P + 1) // 2
    check(strings, lang, "ring.alt_schedule", dict(P="4", folded=str(folded)))
    device = 40 // b_live
    check(strings, lang, "ring.row_title", dict(row="40"))
    check(strings, lang, "ring.alt_row", dict(row="40", device=str(device), P="4"))
    check(strings, lang, "ring.row_note", dict(row="40", device=str(device)))
    check(strings, lang, "ring.load_causal", dict(removed=str(P * P - folded), total=str(P * P),
                                                  share=f"{(P * P - folded) / (P * P):.0%}", P="4"))  # fmt: skip
    check(strings, lang, "ring.alt_load", dict(P="4"))
    assert list(charts(at, "cost_chart_")["ring_load"]["data"][0]["y"]) == [1, 2, 3, 4]
    check(strings, lang, "ring.alt_orders", dict(n="64", P="4"))
    check(strings, lang, "ring.cost_intro", dict(P="4"))
    b, d, beta, bw, rate = 131_072 // P, 128, 2, 50e9, 200e12
    min_b = math.ceil(2 * d * beta * rate / (bw * (4 * d + 6)))
    check(strings, lang, "ring.hides", dict(b=f"{b:,}", min_b=f"{min_b:,}", min_n=f"{min_b * P:,}"))
    send = 2 * b * d * beta  # one K and one V block
    assert metrics[translate(lang, "ring.metric_send_step")] == format_bytes(P * send)  # all P at once
    assert metrics[translate(lang, "ring.metric_send_total")] == format_bytes(3 * P * send)  # P − 1 steps
    assert metrics[translate(lang, "ring.metric_compute")] == f"{b * b * (4 * d + 6) / rate * 1e3:.3g} ms"
    assert metrics[translate(lang, "ring.metric_transfer")] == f"{send / bw * 1e3:.3g} ms"
    check(strings, lang, "ring.send_note", dict(per=format_bytes(send), P="4", steps="3"))
    check(strings, lang, "ring.alt_times", dict(P="4", d="128"))
    full = 131_072**2 * beta
    (memory,) = message_values(strings, lang, "ring.memory_note")
    assert memory["b"] == f"{b:,}" and memory["full"] == format_bytes(full)
    ring_memory = table_with(at, translate(lang, "ring.col_part"))
    assert list(ring_memory[translate(lang, "ring.col_elements")])[-1] == 131_072**2


def test_cost_broken_tiled_check_is_an_error(monkeypatch) -> None:
    from dataclasses import replace

    from attention_core.labs import cost as lab_cost

    real = lab_cost.tiled_check
    monkeypatch.setattr(lab_cost, "tiled_check", lambda *a, **k: replace(real(*a, **k), max_abs_diff=0.5))
    at = open_page(COST)
    assert message_values([e.value for e in at.error], "en", "cost.check_bad") == [dict(diff="5.00e-01")]
    assert message_values([s.value for s in at.success], "en", "cost.check_ok") == []


def test_cost_measured_sweeps_show_what_was_measured(monkeypatch) -> None:
    """The two timed sweeps (n = 128, 256): what the page prints is what it measured (the measurement
    itself depends on the machine; tests/test_app_cost.py checks the n² law of the peak)."""
    from attention_core.labs import efficient

    monkeypatch.setattr(efficient, "WINDOW_SWEEP_NS", (128, 256))
    at = open_page(COST, cost_max_n=256, cost_window=16)
    at.button(key="cost_run").click().run()
    at.button(key="cost_win_run").click().run()
    strings = page_strings(at)
    points = at.session_state["cost_results"]
    assert [p.n for p in points] == [128, 256]
    peaks = [p.direct.peak_bytes for p in points]
    check(strings, "en", "cost.measure_meta", dict(max_n="256", block="128"))
    check(strings, "en", "cost.measure_lesson", dict(step=f"{peaks[1] / peaks[0]:.2f}", n="256",
                                                     direct=format_bytes(peaks[1]),
                                                     tiled=format_bytes(points[1].tiled.peak_bytes)))  # fmt: skip
    check(strings, "en", "cost.alt_peak", dict(count="2"))
    check(strings, "en", "cost.alt_time", dict(count="2"))
    found = charts(at, "cost_chart_")
    peak = found["peak"]["data"]
    assert peak[0]["y"] == peaks and peak[1]["y"] == [p.tiled.peak_bytes for p in points]
    assert peak[2]["y"] == [8 * n * n for n in (128, 256)]  # one float64 n × n matrix
    assert found["time"]["data"][0]["y"] == [p.direct.seconds for p in points]
    table = table_with(at, translate("en", "cost.col_direct_peak"))
    assert list(table[translate("en", "cost.col_step")]) == ["—", f"×{peaks[1] / peaks[0]:.2f}"]
    assert list(table[translate("en", "cost.col_in_matrices")]) == [
        f"{p.direct.peak_bytes / (8 * p.n * p.n):.1f}" for p in points
    ]
    assert list(table[translate("en", "cost.col_direct_time")]) == [
        f"{p.direct.seconds * 1000:.1f}" for p in points
    ]
    statuses = [s.label for s in at.status]
    assert statuses[0] == translate("en", "cost.measure_done", count=2), statuses
    window = at.session_state["cost_window_results"]
    assert [p.n for p in window] == [128, 256]
    check(strings, "en", "cost.win_time_meta", dict(w="16", block="128", d="64"))
    last = window[-1]
    check(
        strings,
        "en",
        "cost.win_time_lesson",
        dict(n="256", ratio=f"{last.full_tiled / last.window_tiled:.1f}"),
    )
    check(strings, "en", "cost.alt_window_time", dict(count="2"))
    lines = found["window_time"]["data"]
    assert [lines[k]["y"] for k in range(3)] == [[getattr(p, f) for p in window]
                                                  for f in ("full_direct", "full_tiled", "window_tiled")]  # fmt: skip
    wt = table_with(at, translate("en", "cost.col_window_tiled"))
    assert list(wt[translate("en", "cost.col_window_tiled")]) == [
        f"{p.window_tiled * 1000:.1f}" for p in window
    ]
    assert list(wt[translate("en", "cost.col_ratio_tiled")]) == [
        f"×{p.full_tiled / p.window_tiled:.2f}" for p in window
    ]


def test_cost_ring_charts_and_other_settings() -> None:
    """The ring's schedule, load, placements and times by hand; without a mask; over a slow link."""
    from attention_core.labs import ring as lab_ring

    at = open_page(COST, cost_tables=True)
    found = charts(at, "cost_chart_")
    P, n = 4, 64
    cells = found["ring_schedule"]["data"][0]
    blocks = [
        [(p - t) % P for t in range(P)] for p in range(P)
    ]  # device p holds block (p − t) mod P at step t
    assert cells["text"] == blocks
    assert z(found["ring_schedule"]).tolist() == [
        [float(k <= p) for k in row] for p, row in enumerate(blocks)
    ]
    lab = lab_ring.ring_lab(n, 16, P, True, 40)
    row = next(df.value for df in at.dataframe if list(df.value.columns)[-2:] == ["m", "ℓ"])
    assert list(row["m"]) == [f"{v:.6g}" for v in lab.ring.row_max]
    assert found["ring_row"]["data"][0]["y"] == pytest.approx(list(lab.ring.row_max))
    # causal pairs per device, Σ (i + 1) over its queries: contiguous, striped (i mod P), zig-zag (chunks p, 2P−1−p)
    tokens = {
        "contiguous": [list(range(16 * p, 16 * p + 16)) for p in range(P)],
        "striped": [list(range(p, n, P)) for p in range(P)],
        "zigzag": [
            list(range(8 * p, 8 * p + 8)) + list(range(8 * (7 - p), 8 * (7 - p) + 8)) for p in range(P)
        ],
    }
    pairs = {o: [sum(i + 1 for i in tk) for tk in tokens[o]] for o in tokens}
    orders = {tr["name"]: tr["y"] for tr in found["ring_orders"]["data"]}
    assert orders == {translate("en", f"ring.order_{o}"): pairs[o] for o in pairs}
    (note,) = message_values(page_strings(at), "en", "ring.orders_note", text_fields=("spread",))
    spread = ", ".join(
        f"{translate('en', f'ring.order_{o}')} ×{max(v) / min(v):.2f}" for o, v in pairs.items()
    )
    assert note == dict(n="64", P="4", spread=spread)
    times = found["ring_times"]["data"]
    ns = [2**k for k in range(10, 25)]
    b = [math.ceil(m / P) for m in ns]
    assert times[0]["x"] == ns
    assert times[0]["y"] == pytest.approx([x * x * (4 * 128 + 6) / 200e12 for x in b], rel=1e-12)
    assert times[1]["y"] == pytest.approx([2 * x * 128 * 2 / 50e9 for x in b], rel=1e-12)
    slow = open_page(COST, cost_ring_causal=False, cost_ring_bw=0.1)
    strings = page_strings(slow)
    check(strings, "en", "ring.load_full", dict(total="16"))
    min_b = math.ceil(2 * 128 * 2 * 200e12 / (0.1e9 * (4 * 128 + 6)))
    check(strings, "en", "ring.exposed", dict(b="32,768", min_b=f"{min_b:,}", min_n=f"{4 * min_b:,}"))
