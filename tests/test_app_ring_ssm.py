"""Issue 29 through app.py with AppTest: the cost lab's ring attention section and the look-alikes lab's
state-space section, in English and Japanese, their drawn numbers against loops written here, and
each page's equality check failing when the core is broken on purpose."""

from __future__ import annotations

import math

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core import AttentionConfig, trace_text
from attention_core.labs import ring as lab_ring
from attention_core.labs import ssm as lab_ssm
from attention_core.labs.cost import format_bytes
from attention_ui.cost import ring_view as cost_ring
from attention_ui.i18n import translate
from attention_ui.lookalikes import ssm_view as lookalikes_ssm
from tests.apptest_pages import charts, message_values, open_page, page_strings, z

COST, LOOKALIKES = "app_pages/cost.py", "app_pages/lookalikes.py"


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_ring_section_in_english_matches_the_loops() -> None:
    at = open_page(COST, cost_ring_p=5, cost_ring_n=32, cost_ring_row=20, cost_ring_causal=True)
    t = lambda key, **v: translate("en", key, **v)  # noqa: E731
    assert t("ring.title") in [h.value for h in at.header]
    assert float(metric(at, t("ring.metric_diff"))) <= 1e-12
    assert metric(at, t("ring.metric_blocks")) == "15 / 25"  # P(P + 1)/2 of P² under the causal mask
    assert any(s.value.startswith(t("ring.ok", diff="x", n=32, P=5, d=16)[:30]) for s in at.success)
    found = charts(at, "cost_chart_")
    grid = found["ring_schedule"]["data"][0]
    for p in range(5):
        for step in range(5):
            block = (p - step) % 5
            assert grid["text"][p][step] == block
            assert z(found["ring_schedule"])[p, step] == (
                1.0 if block <= p else 0.0
            )  # skipped: wholly future
    load = found["ring_load"]["data"][0]["y"]
    assert list(load) == [1, 2, 3, 4, 5]
    # row 20 is on device 3 (tokens 19–25 of 32 over 5 devices): after each step its running max by hand
    rng = np.random.default_rng(0)
    Q, K, _ = (rng.standard_normal((32, 16)) for _ in range(3))
    edges = [p * 32 // 5 for p in range(6)]
    seen: list[float] = []
    drawn = found["ring_row"]["data"][0]["y"]
    for step in range(5):
        b = (3 - step) % 5
        seen += [float(Q[20] @ K[j]) / 4.0 for j in range(edges[b], edges[b + 1]) if j <= 20]
        assert drawn[step] == pytest.approx(max(seen), abs=1e-12)
    memory = next(df.value for df in at.dataframe if t("ring.col_part") in df.value.columns)
    b, d = math.ceil(131_072 / 5), 128  # the default cost sizes
    assert list(memory[t("ring.col_elements")])[:5] == [b * d, 2 * b * d, 2 * b * d, b * d + 2 * b, b * b]
    assert list(memory[t("ring.col_elements")])[-1] == 131_072**2


def test_ring_memory_per_device_total_and_note() -> None:
    """The memory per device (docs/architecture.md's walk): the table's total row and the note's
    number against β · (6bd + 2b + b²) by hand, at sizes where n / P is not whole."""
    at = open_page(COST, cost_ring_p=8, cost_ring_cost_n=10_000, cost_ring_cost_d=64, cost_ring_dtype="fp32")
    t = lambda key, **v: translate("en", key, **v)  # noqa: E731
    b = 1250  # ⌈10,000 / 8⌉
    elements = 6 * b * 64 + 2 * b + b * b  # q, two K/V blocks, the state, one b × b score block
    assert elements == 2_045_000
    memory = next(df.value for df in at.dataframe if t("ring.col_part") in df.value.columns)
    total = list(memory[t("ring.col_part")]).index(t("ring.part_total"))
    assert list(memory[t("ring.col_elements")])[total] == elements
    assert list(memory[t("ring.col_bytes")])[total] == format_bytes(4 * elements)  # FP32: 4 bytes
    (note,) = message_values(page_strings(at), "en", "ring.memory_note")
    assert note == dict(
        b="1,250", device=format_bytes(8_180_000), full=format_bytes(400_000_000), ratio="49"
    )  # 4 · 10,000² bytes against 8,180,000: ×48.9


def test_ring_section_in_japanese_without_a_mask() -> None:
    at = open_page(COST, lang="ja", cost_ring_p=8, cost_ring_n=128, cost_ring_causal=False)
    t = lambda key, **v: translate("ja", key, **v)  # noqa: E731
    assert t("ring.title") in [h.value for h in at.header]
    assert metric(at, t("ring.metric_blocks")) == "64 / 64"
    assert t("ring.load_full", total=64) in [m.value for m in at.markdown]
    assert any(s.value.startswith("どのデバイスも") for s in at.success)


def test_a_broken_merge_turns_the_ring_check_red(monkeypatch) -> None:
    def forgets_the_rescale(m, denom, acc, s, v):
        m_new = np.maximum(m, s.max(axis=1))
        p = np.exp(s - m_new[:, None])
        return m_new, denom + p.sum(axis=1), acc + p @ v

    monkeypatch.setattr(lab_ring, "online_softmax_merge", forgets_the_rescale)
    cost_ring.cached_ring.clear()
    try:
        at = open_page(COST, cost_ring_p=4, cost_ring_n=64, cost_ring_causal=False)
        assert any(e.value.startswith(translate("en", "ring.bad", diff="x")[:20]) for e in at.error)
        assert float(metric(at, translate("en", "ring.metric_diff"))) > 1e-6
    finally:
        cost_ring.cached_ring.clear()  # no broken result left for the other tests


def test_ssm_section_in_english_draws_the_models_weights() -> None:
    at = open_page(
        LOOKALIKES, lookalikes_text_a="the cat sat on the mat", lookalikes_ssm_n=4, lookalikes_ssm_delta=0.5
    )
    t = lambda key, **v: translate("en", key, **v)  # noqa: E731
    assert t("ssm.title") in [h.value for h in at.header]
    assert float(metric(at, t("ssm.metric_diff"))) <= 1e-12
    found = charts(at, "lookalikes_chart_")
    fixed, selective = z(found["ssm_ssm_fixed"]), z(found["ssm_ssm_selective"])
    n = 6
    assert fixed.shape == (n, n) and np.all(np.triu(fixed, 1) == 0)
    for k in range(n):  # the same number along each diagonal: a convolution
        assert np.ptp(np.diagonal(fixed, -k)) <= 1e-12
    assert max(np.ptp(np.diagonal(selective, -k)) for k in range(n)) > 1e-3
    trace = trace_text("the cat sat on the mat", AttentionConfig(d_model=16, heads=1, mask="causal", seed=0))
    Q, K = trace.Q[0], trace.K[0]
    for i in range(n):  # softmax attention map by hand
        s = [float(Q[i] @ K[j]) / 4.0 for j in range(i + 1)]
        e = [math.exp(x - max(s)) for x in s]
        assert z(found["ssm_attention"])[i, : i + 1] == pytest.approx([x / sum(e) for x in e], abs=1e-9)
    state = next(df.value for df in at.dataframe if "n" in df.value.columns and len(df.value.columns) == 4)
    assert list(state.iloc[:, 1]) == [2 * m * 16 for m in lab_ssm.STATE_NS]
    assert set(state.iloc[:, 3]) == {4 * 16}


def test_ssm_section_in_japanese() -> None:
    at = open_page(LOOKALIKES, lang="ja")
    t = lambda key, **v: translate("ja", key, **v)  # noqa: E731
    assert t("ssm.title") in [h.value for h in at.header]
    assert any(s.value.startswith("各再帰を") for s in at.success)
    assert t("ssm.simplified") in [i.value for i in at.info]


def test_a_broken_scan_turns_the_ssm_check_red(monkeypatch) -> None:
    real = lab_ssm.diagonal_ssm_scan

    def drops_the_decay(x, a, b, c):
        return real(x, np.ones_like(np.asarray(a)) * 0.999, b, c)

    monkeypatch.setattr(lab_ssm, "diagonal_ssm_scan", drops_the_decay)
    lookalikes_ssm.cached_ssm.clear()
    try:
        at = open_page(LOOKALIKES, lookalikes_text_a="a broken scan is caught")
        assert any(e.value.startswith(translate("en", "ssm.bad", diff="x")[:20]) for e in at.error)
    finally:
        lookalikes_ssm.cached_ssm.clear()
