"""Memory and FLOP tables against the notes' figures and hand arithmetic."""

from __future__ import annotations

import pytest

from attention_core.labs.cost import (
    MAX_DIRECT_N,
    Measurement,
    SweepPoint,
    attention_flops,
    attention_matrix_bytes,
    dtypes_by_size,
    flops_table,
    format_bytes,
    in_units,
    measure_direct_attention,
    measure_sweep,
    memory_table,
    summarise_sweep,
    sweep_sizes,
    tiled_check,
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
    assert in_units(3 * 2**60, binary=True) == (3.0, "EiB") and in_units(5e18, binary=False) == (5.0, "EB")


@pytest.mark.parametrize(
    ("num", "binary", "text"),
    [
        (8_388_608, True, "8 MiB"),
        (8_388_608, False, "8.39 MB"),
        (2 * 10**12, True, "1.82 TiB"),
        (2 * 10**12, False, "2 TB"),
        (512, True, "512 B"),
        (1536, True, "1.5 KiB"),
    ],
)
def test_format_bytes(num: int, binary: bool, text: str) -> None:
    assert format_bytes(num, binary) == text


def test_dtypes_by_size_groups_fp16_with_bf16():
    assert dtypes_by_size() == {4: ("fp32",), 2: ("fp16", "bf16"), 1: ("fp8",)}


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


def test_sweep_sizes_double_from_128_up_to_the_direct_limit():
    assert sweep_sizes(512) == (128, 256, 512)
    assert sweep_sizes(300) == (128, 256)
    assert sweep_sizes(10**6)[-1] == MAX_DIRECT_N


def test_measure_sweep_finds_the_n_squared_law():
    points = list(measure_sweep(256, block=64))
    assert [p.n for p in points] == [128, 256]
    assert all(
        p.direct.method == "direct" and p.tiled.method == "tiled" and p.tiled.block == 64 for p in points
    )
    # The n² law: doubling n multiplies the direct peak by about 4 (3.5 … 4.5 leaves room for overheads).
    assert 3.5 < points[1].direct.peak_bytes / points[0].direct.peak_bytes < 4.5
    assert points[1].tiled.peak_bytes < points[1].direct.peak_bytes
    assert summarise_sweep(points).median_step == points[1].direct.peak_bytes / points[0].direct.peak_bytes


def _point(n: int, direct_peak: int) -> SweepPoint:
    def m(method, peak):
        return Measurement(method, n, 64, False, 0.001, peak, n * n * 8, None)

    return SweepPoint(n, m("direct", direct_peak), m("tiled", 1000))


def test_summarise_sweep_by_hand():
    summary = summarise_sweep([_point(128, 100), _point(256, 400), _point(512, 1000), _point(1024, 4000)])
    assert summary.steps == (None, 4.0, 2.5, 4.0)
    assert summary.median_step == 4.0  # the median of 4, 2.5 and 4
    assert summarise_sweep([_point(128, 100)]) == summarise_sweep([_point(128, 100)])
    assert summarise_sweep([_point(128, 100)]).median_step is None


@pytest.mark.parametrize(("causal", "computed"), [(False, 64), (True, 36)])
def test_tiled_check_agrees_with_the_direct_result(causal, computed):
    check = tiled_check(256, 32, causal)
    assert check.max_abs_diff < 1e-10
    assert check.tiles_computed == computed and check.tiles_computed + check.tiles_skipped == 64
    assert int(check.grid.sum()) == computed and check.grid.shape == (8, 8)  # (256 / 32)² tiles
    assert check.max_tile_elements == 32 * 32 and check.matrix_elements == 256 * 256
