"""Memory and FLOP tables against the notes' figures and hand arithmetic."""

from __future__ import annotations

import pytest

from attention_core.labs.cost import (
    DTYPE_BYTES,
    MAX_DIRECT_N,
    attention_flops,
    attention_matrix_bytes,
    dtype_table,
    flops_table,
    in_units,
    measure_direct_attention,
    measure_scaling,
    memory_table,
)


def test_notes_table_in_binary_units():
    rows = memory_table()
    assert [r.n for r in rows] == [2048, 8192, 32768, 131072, 1_000_000]
    # The notes: 8 MB, 128 MB, 2 GB, 32 GB (binary sizes), 1T elements.
    assert [(r.binary_value, r.binary_unit) for r in rows[:4]] == [
        (8.0, "MiB"),
        (128.0, "MiB"),
        (2.0, "GiB"),
        (32.0, "GiB"),
    ]
    last = rows[-1]
    assert last.elements == 10**12 and last.bytes == 2 * 10**12
    assert (last.decimal_value, last.decimal_unit) == (2.0, "TB")
    assert last.binary_unit == "TiB" and last.binary_value == pytest.approx(2e12 / 2**40)
    assert round(last.binary_value, 2) == 1.82
    assert rows[1].ratio_to_first == 16.0  # n x 4 -> memory x 16


def test_bytes_hand_arithmetic():
    assert attention_matrix_bytes(2048) == 2048 * 2048 * 2
    assert attention_matrix_bytes(10, bytes_per_elem=4, heads=3, batch=2, layers=5) == 100 * 4 * 3 * 2 * 5
    with pytest.raises(ValueError):
        attention_matrix_bytes(0)


def test_units():
    assert in_units(8 * 2**20, binary=True) == (8.0, "MiB")
    assert in_units(8 * 2**20, binary=False) == (pytest.approx(8.388608), "MB")
    assert in_units(999, binary=False) == (999.0, "B")


def test_dtype_table():
    rows = {r.dtype: r for r in dtype_table(1024)}
    assert set(rows) == set(DTYPE_BYTES) == {"fp32", "fp16", "bf16", "fp8"}
    assert rows["fp32"].bytes == 4 * 2**20 and rows["fp8"].bytes == 2**20
    assert (rows["bf16"].binary_value, rows["bf16"].binary_unit) == (2.0, "MiB")


def test_flops_quadruple_when_n_doubles():
    f = attention_flops(100, 8, heads=2)
    assert f.scores == 2 * 2 * 100 * 100 * 8  # heads * 2 * n^2 * d_k
    assert f.weighted_sum == f.scores
    assert f.softmax == 2 * 6 * 100 * 100
    assert f.total == f.scores + f.softmax + f.weighted_sum
    a, b = flops_table([256, 512], 16)
    assert b.total == 4 * a.total


def test_measurement_fields_and_limits():
    m = measure_direct_attention(128, 16, seed=1)
    assert (m.method, m.n, m.d, m.matrix_bytes) == ("direct", 128, 16, 128 * 128 * 8)
    assert m.seconds >= 0 and m.peak_bytes >= 128 * 128 * 8
    with pytest.raises(ValueError):
        measure_direct_attention(MAX_DIRECT_N + 1)
    ms = measure_scaling([128, 64], d=8)
    assert [(x.method, x.n) for x in ms] == [("direct", 64), ("tiled", 64), ("direct", 128), ("tiled", 128)]
