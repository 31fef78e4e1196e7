"""Numbers the teaching text states, recomputed from the core.

Each test names the catalog message it holds to account, checks that the number is still written
there (in both languages), and recomputes it independently or with the core's own functions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_core.config import AttentionConfig
from attention_core.labs.cost import MAX_DIRECT_N, measure_direct_attention, memory_table
from attention_core.labs.masks import LAB_MASK_KINDS, allowed_mask
from attention_core.labs.scaling import one_row
from attention_ui.i18n import LANGUAGES, translate


def text(key: str, lang: str = "en", **values) -> str:
    return translate(lang, key, **values)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_sqrt_128_is_about_11_3(lang):
    assert "\\sqrt{128} \\approx 11.3" in text("scaling.explain_row", lang)
    assert "\\sqrt{64} = 8" in text("scaling.explain_row", lang)
    assert f"{AttentionConfig(d_model=128, heads=1).divisor:.1f}" == "11.3" == f"{math.sqrt(128):.1f}"
    assert AttentionConfig(d_model=64, heads=1).divisor == 8


def test_the_default_row_behaves_as_the_hint_says():
    """scaling.row_hint: divisor 1 gives one bar near 1 and a tiny ‖J‖; divisor 8 makes ‖J‖ several times larger."""
    row = [8, 4, 2, 0, -2, -6]
    assert "8, 4, 2, 0, -2, -6" in text("scaling.row_scores_help") and "8, 4, 2, 0, -2, -6" in text(
        "scaling.row_scores_help", "ja"
    )
    raw, scaled = one_row(row, 1.0), one_row(row, 8.0)
    assert raw.max_weight > 0.95
    assert scaled.jacobian_norm > 3 * raw.jacobian_norm


def test_exp_overflows_above_709_8():
    """quiz.comp_softmax_shift: float64 exp overflows above about 709.8."""
    assert "709.8" in text("quiz.comp_softmax_shift", scores="s", col=0)
    limit = math.log(np.finfo(np.float64).max)
    assert f"{limit:.1f}" == "709.8"
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(709.8)) and np.isfinite(np.exp(709.7))


def test_the_notes_table_reading():
    """cost.units_note: 8.39 MB in decimal units, and the notes' "1.9 TB" between 2.00 TB and 1.82 TiB."""
    note = text("cost.units_note", decimal="D", binary="B")
    assert "8.39 MB" in note and "1.9 TB" in note
    rows = memory_table()
    assert f"{rows[0].decimal_value:.2f} {rows[0].decimal_unit}" == "8.39 MB"
    last = rows[-1]
    assert last.bytes == 2 * 10**12
    assert (
        last.binary_value < 1.9 < last.decimal_value
        and last.decimal_unit == "TB"
        and last.binary_unit == "TiB"
    )
    # "in the first four rows each ×4 in n costs ×16 in memory"
    for a, b in zip(rows[:3], rows[1:4], strict=True):
        assert b.n == 4 * a.n and b.bytes == 16 * a.bytes


def test_the_largest_measurement_needs_about_0_3_gb():
    """cost.max_n_help: n = 4,096 needs about 0.3 GB. The direct peak is a fixed number of n × n float64
    matrices, so it is measured at n = 512 (cheap) and scaled to n = 4,096. (It was about 0.7 GB, five
    matrices, until steps.softmax stopped making two more n × n temporaries, issue 33.)"""
    assert "4,096" in text("cost.max_n_help") and "0.3 GB" in text("cost.max_n_help")
    assert MAX_DIRECT_N == 4096
    small = measure_direct_attention(512, d=64)
    matrices = small.peak_bytes / small.matrix_bytes
    assert 1.5 <= matrices <= 3
    predicted = matrices * 4096 * 4096 * 8
    assert 0.25e9 <= predicted <= 0.35e9


def test_no_row_of_the_masks_lab_is_fully_masked():
    """masks.explain_mask: every row keeps at least one allowed key (at least one real token, window ≥ 1)."""
    assert "at least one allowed key" in text("masks.explain_mask")
    for kind in LAB_MASK_KINDS:
        for n_real in range(1, 17):
            for pads in range(0, 5):
                for window in range(1, 9):
                    allowed = allowed_mask(kind, n_real + pads, pads, window)
                    assert allowed.any(axis=1).all(), (kind, n_real, pads, window)


def test_gqa_example():
    """cost.method_gqa: 32 query heads in 8 groups share 8 key/value heads: 4× fewer K and V."""
    for lang in LANGUAGES:
        assert "32" in text("cost.method_gqa", lang) and "8" in text("cost.method_gqa", lang)
    query_heads, groups = 32, 8
    assert query_heads // groups == 4 and "4×" in text("cost.method_gqa")


def test_without_positions_reordering_only_reorders_the_outputs():
    """playground.x_no_positional: with positional encoding off and no causal mask, attention is
    permutation-equivariant; with a causal mask it is not."""
    from attention_core import trace_tokens

    assert "reorders the outputs" in text("playground.x_no_positional")
    tokens = ("the", "cat", "sat", "on", "a", "mat")
    perm = [3, 0, 5, 1, 4, 2]
    for mask, equivariant in (("none", True), ("causal", False)):
        cfg = AttentionConfig(d_model=8, heads=2, positional=False, mask=mask)
        out = trace_tokens(tokens, cfg).output
        out_perm = trace_tokens(tuple(tokens[i] for i in perm), cfg).output
        assert np.allclose(out_perm, out[perm], atol=1e-12) == equivariant
