"""Memory and FLOP tables against the notes' figures and hand arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.labs import cost as c
from attention_core.labs import efficient as e
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

TOL = 1e-10  # what a check reads as equal; a deliberately broken input gives far more


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


def test_cost_sizes_defaults_and_limits():
    from attention_core.labs import cost as c

    assert list(c.dtypes_by_size()) == [4, 2, 1]  # largest first
    assert c.dtypes_by_size()[2] == ("fp16", "bf16")
    assert c.attention_matrix_elements(10) == 100  # one head, one sequence, one layer
    assert c.attention_matrix_elements(10, 2, 3, 5) == 2 * 3 * 5 * 100
    for bad in (dict(heads=0), dict(batch=0), dict(layers=0), dict(n=0)):
        with pytest.raises(ValueError):
            c.attention_matrix_elements(**{"n": 4, **bad})
    assert c.attention_matrix_bytes(10, 1) == 100  # 1 byte per element (fp8) is allowed
    with pytest.raises(ValueError):
        c.attention_matrix_bytes(10, 0)


def test_units_switch_at_the_base_and_stop_at_the_last():
    from attention_core.labs import cost as c

    assert c.in_units(1023, True) == (1023.0, "B") and c.in_units(1024, True) == (1.0, "KiB")
    assert c.in_units(999, False) == (999.0, "B") and c.in_units(1000, False) == (1.0, "kB")
    assert c.in_units(1024**7, True) == (1024.0, "EiB")  # no unit after EiB: the value grows
    assert c.in_units(1000**7, False) == (1000.0, "EB")
    assert c.format_bytes(8 * 1024**2) == "8 MiB"  # binary by default


def test_memory_table_passes_every_size_on():
    from attention_core.labs import cost as c

    rows = c.memory_table((100, 200), 4, heads=3, batch=5, layers=7)
    assert rows[0].bytes == 3 * 5 * 7 * 100 * 100 * 4 and rows[1].ratio_to_first == 4.0
    assert rows[0].elements == 3 * 5 * 7 * 100 * 100 and type(rows[0].elements) is int


def test_attention_flops_fields_and_defaults():
    from attention_core.labs import cost as c

    f = c.attention_flops(10, 4)
    assert (f.n, f.d_k, f.d_v, f.heads) == (10, 4, 4, 1)
    assert f.scores == 2 * 10 * 10 * 4 and f.weighted_sum == 2 * 10 * 10 * 4
    g = c.attention_flops(10, 4, 8, 3)
    assert (g.d_v, g.heads, g.weighted_sum) == (8, 3, 3 * 2 * 10 * 10 * 8)
    t = c.flops_table([10, 20.0], 4, 8)
    assert [r.n for r in t] == [10, 20] and t[0].heads == 1 and t[1].d_v == 8
    assert c.flops_table([10], 4, 8, 2)[0].heads == 2


def test_peak_bytes_counts_only_the_run_and_leaves_tracing_as_it_was():
    import tracemalloc

    from attention_core.labs import cost as c

    assert c.peak_bytes(lambda: None) == 0
    assert not tracemalloc.is_tracing()
    tracemalloc.start()
    try:
        keep = np.ones(500_000)  # 4 MB held before the run
        tmp = np.ones(2_000_000)  # a 16 MB peak before the run, freed again
        del tmp
        got = c.peak_bytes(lambda: np.ones(1_000_000))  # 8 MB during the run
        assert 8_000_000 <= got < 8_100_000
        assert tracemalloc.is_tracing()  # the caller's tracing is not stopped
        del keep
    finally:
        tracemalloc.stop()
    assert c.peak_bytes(lambda: np.ones(1000)) >= 8000 and not tracemalloc.is_tracing()


def test_measurements_pass_their_settings_on(monkeypatch):
    from attention_core.labs import cost as c

    calls = []
    monkeypatch.setattr(
        c, "direct_attention", lambda Q, K, V, causal: calls.append(("direct", Q.shape, causal))
    )
    monkeypatch.setattr(
        c, "tiled_attention", lambda Q, K, V, bq, bk, causal: calls.append(("tiled", Q.shape, bq, bk, causal))
    )
    ticks = iter([10.0, 12.5, 20.0, 21.0] + [0.0] * 4)
    monkeypatch.setattr(c.time, "perf_counter", lambda: next(ticks))
    m = c.measure_direct_attention(8, causal=True)
    assert (m.method, m.n, m.d, m.causal, m.block, m.seconds, m.matrix_bytes) == (
        "direct",
        8,
        64,
        True,
        None,
        2.5,
        512,
    )
    t = c.measure_tiled_attention(8, 4, block=3)
    assert (t.method, t.n, t.d, t.causal, t.block, t.seconds) == ("tiled", 8, 4, False, 3, 1.0)
    assert calls == [("direct", (8, 64), True)] * 2 + [("tiled", (8, 4), 3, 3, False)] * 2  # timed + traced
    assert c.measure_tiled_attention(2).block == 128 and not c.measure_direct_attention(2).causal


def test_measurement_limits(monkeypatch):
    from attention_core.labs import cost as c

    monkeypatch.setattr(c, "MAX_DIRECT_N", 16)
    monkeypatch.setattr(c, "MAX_TILED_N", 16)
    for f in (c.measure_direct_attention, c.measure_tiled_attention):
        assert f(1, 1).n == 1 and f(16, 1).n == 16
        for n, d in ((0, 4), (17, 4), (4, 0)):
            with pytest.raises(ValueError):
                f(n, d)


def test_sweep_repeats_small_sizes_and_passes_d_and_block_on(monkeypatch):
    from attention_core.labs import cost as c

    calls = []

    def fake(method):
        def run(n, d=64, seed=0, causal=False, block=None):
            calls.append((method, n, d, block))
            return c.Measurement(method, n, d, causal, 1.0 / (len(calls)), len(calls), n * n * 8, block)

        return run

    monkeypatch.setattr(c, "measure_direct_attention", fake("direct"))
    monkeypatch.setattr(c, "measure_tiled_attention", fake("tiled"))
    points = list(c.measure_sweep(1024, block=32, d=16))
    assert [p.n for p in points] == [128, 256, 512, 1024]
    per_n = {n: sum(1 for m, k, *_ in calls if k == n) for n in (128, 256, 512, 1024)}
    assert per_n == {128: 6, 256: 6, 512: 6, 1024: 2}  # 3 + 3 runs up to 512, then 1 + 1
    assert all(d == 16 for _, n, d, _ in calls if n != 64)
    assert {block for m, _, _, block in calls if m == "tiled"} == {32}
    assert all(p.direct.d == 16 and p.tiled.n == p.n for p in points)
    # calls 2, 3, 4 are the three direct runs at n = 128 (call 1 is the warm-up): the point keeps the
    # first run's peak (2) with the fastest run's time (1/4)
    assert calls[0][1] == 64 and [c_[1] for c_ in calls[1:4]] == [128] * 3
    assert points[0].direct.peak_bytes == 2 and points[0].direct.seconds == pytest.approx(1 / 4)


def test_sweep_summary_of_a_zero_peak_is_none():
    from attention_core.labs import cost as c

    def point(n, peak):
        m = c.Measurement("direct", n, 64, False, 1.0, peak, n * n * 8, None)
        return c.SweepPoint(n, m, m)

    s = c.summarise_sweep([point(128, 0), point(256, 100), point(512, 400)])
    assert s.steps == (None, None, 4.0) and s.median_step == 4.0


def test_tiled_check_fields_seed_and_frozen_grid(monkeypatch):
    from attention_core.labs import cost as c

    chk = c.tiled_check(10, 4, True)
    assert (chk.n, chk.block, chk.causal, chk.matrix_elements) == (10, 4, True, 100)
    assert not chk.grid.flags.writeable
    seen = []
    real = c.tiled_attention
    monkeypatch.setattr(c, "tiled_attention", lambda Q, *a, **k: seen.append(Q) or real(Q, *a, **k))
    c.tiled_check(6, 4, False, d=3)
    np.testing.assert_array_equal(seen[0], np.random.default_rng(0).standard_normal((6, 3)))  # seed 0


def test_cost_tiled_measurement_and_sweep_use_the_direct_defaults():
    """The page sets direct and tiled side by side: one d and the sweep's tiles are the tiled default."""
    from attention_core.labs import cost as c

    assert c.measure_tiled_attention(16).d == c.measure_direct_attention(16).d
    first = next(c.measure_sweep(c.SWEEP_MIN_N))
    assert first.tiled.block == c.measure_tiled_attention(16).block
    assert first.tiled.d == first.direct.d == c.SWEEP_D


def test_causal_softmax_flops_by_hand():
    from attention_core.labs import cost as c

    per_score = lambda d_k, d_v: 2 * d_k + (1 + c.SOFTMAX_FLOPS_PER_ELEMENT) + 2 * d_v  # noqa: E731
    assert e.causal_softmax_attention_flops(1, 2, 4) == per_score(2, 4)  # one token, one score
    assert e.causal_softmax_attention_flops(3, 2, 4) == 6 * per_score(2, 4)  # 1 + 2 + 3 allowed scores
    assert e.causal_softmax_attention_flops(4, 3, 5) == 10 * per_score(3, 5)
    assert type(e.causal_softmax_attention_flops(4, 3, 5)) is int  # a count, shown without a decimal point


@pytest.mark.parametrize("causal", [False, True])
def test_linear_crossover_against_a_count_up(causal):
    """The bisection against counting n up from 1, d_v ≠ d_k, and n_max below the crossover (None)."""
    from attention_core.labs import cost as c

    rate = 1 + c.SOFTMAX_FLOPS_PER_ELEMENT
    for d_phi, d_v, d_k in ((4, 2, 8), (3, 5, 2), (8, 1, 16)):
        linear = lambda n: n * (4 * d_phi * d_v + 3 * d_phi + d_v)  # noqa: E731, B023
        scores = lambda n: n * (n + 1) // 2 if causal else n * n  # noqa: E731, B023
        softmax = lambda n: scores(n) * (2 * d_k + rate + 2 * d_v)  # noqa: E731, B023
        first = next(n for n in range(1, 10_000) if linear(n) < softmax(n))
        for n_max in range(1, first + 3):
            expected = first if first <= n_max else None
            got = e.linear_crossover_n(d_phi, d_v, d_k, n_max=n_max, causal=causal)
            assert got == expected, (d_phi, n_max)


def test_tiled_check_of_a_maskless_tiling_is_large(monkeypatch):
    assert c.tiled_check(50, 16, True).max_abs_diff <= TOL
    real = c.tiled_attention
    monkeypatch.setattr(c, "tiled_attention", lambda Q, K, V, bq, bk, causal=False: real(Q, K, V, bq, bk))
    assert c.tiled_check(50, 16, True).max_abs_diff > 1e-3
