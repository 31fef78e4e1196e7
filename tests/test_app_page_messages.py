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
        at = open_page(INFERENCE, lang=lang, if_tables=True)
        s = at.session_state
        lab = lab_inference.inference_lab(
            lab_inference.InferenceSettings(s["if_text"], int(s["if_d_model"]), int(s["if_heads"]),
                                            int(s["if_kv_heads"]), int(s["if_seed"]))
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
    at = open_page(INFERENCE, if_preset=4, if_calc_n=100_000)
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
    bars = charts(at, "if_chart_")["size"]["data"][0]
    assert list(bars["x"]) == ["1", "2", "4", "8", "16", "32"]  # every g that divides h = 32
    assert list(bars["y"]) == [cache(MISTRAL, 8192, int(g), held=4096) for g in bars["x"]]


def test_inference_charts_and_flops_table(inference_runs) -> None:
    at, lab, _ = inference_runs["en"]
    found = charts(at, "if_chart_")
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
    assert all(s[f"bl_{k}"] == v for k, v in dict(d_model=16, heads=2, norm="layer", placement="pre").items())
    trace = lab_block.block_lab(s["bl_text"], cfg)
    n = len(trace.tokens)
    check(strings, lang, "block.formula_note", dict(norm=translate(lang, "block.norm_layer")))
    check(strings, lang, "block.alt_stages", dict(count="7"))  # x, N₁, Attn, h, N₂, FFN, y
    check(strings, lang, "block.shapes_note", dict(n=str(n), d="16", d_ff="64", h="2"))  # d_ff = 4 · 16
    check(strings, lang, "block.residual_pre", dict(diff=f"{lab_block.residual_gap(trace):.2e}"))
    run = lab_block.depth_run(s["bl_text"], cfg, 12)
    check(strings, lang, "block.alt_depth", dict(depth="12"))
    check(strings, lang, "block.depth_lesson", dict(depth="12", pre=Near(run.pre_rms[-1]), start=Near(run.pre_rms[0]),
                                                    post=Near(run.post_rms[-1])))  # fmt: skip
    cross = n_star(768, 12, 3072)
    check(strings, lang, "block.crossover_label", dict(n=f"{cross:,.0f}"))
    check(strings, lang, "block.alt_flops", dict(d="768", h="12", d_ff="3072"))
    check(strings, lang, "block.crossover", dict(n=f"{cross:,.0f}", d="768", h="12", d_ff="3072", mult="4",
                                                 limit="6"))  # fmt: skip  # (8 + 4 · 4) / 4
    stages = charts(at, "bl_chart_")["stages"]["data"]
    shown = [y for tr in stages for y in tr["y"]]
    assert sorted(shown) == pytest.approx(
        sorted(st.mean_rms for st in lab_block.stage_stats(trace)), rel=1e-9
    )
    depth = charts(at, "bl_chart_")["depth"]["data"]
    assert list(depth[0]["y"]) == pytest.approx(list(run.pre_rms)) and list(depth[1]["y"]) == pytest.approx(
        list(run.post_rms)
    )
    flops = charts(at, "bl_chart_")["flops"]["data"]
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
    at = open_page(BLOCK, bl_text=text, bl_placement="post")
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

    page = kit.Page("bl", "block", {})
    shown: list[str] = []
    monkeypatch.setattr(kit.st, "session_state", {"bl_flops_d": 8})
    monkeypatch.setattr(kit.st, "error", shown.append)
    assert page.whole(Translator("en"), "bl_flops_d", "d_model", (16, 16384)) is None
    assert message_values(shown, "en", "block.err_range") == [dict(name="d_model", lo="16", hi="16384")]
