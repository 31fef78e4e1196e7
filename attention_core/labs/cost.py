"""Lab "Why long inputs are expensive": memory and FLOPs of the n × n attention matrix.

Units. Decimal: 1 MB = 10⁶ bytes, 1 GB = 10⁹, 1 TB = 10¹². Binary: 1 MiB = 2²⁰ bytes, 1 GiB = 2³⁰,
1 TiB = 2⁴⁰. The reference notes' memory table (FP16, one head) uses the *binary* sizes with
decimal-looking names: 2,048² × 2 bytes = 8,388,608 bytes = 8 MiB (written "8 MB"), 8,192 → 128 MiB,
32,768 → 2 GiB, 131,072 → 32 GiB. For n = 1,000,000 the exact figure is 10¹² elements × 2 bytes
= 2 × 10¹² bytes = 2.00 TB = 1.82 TiB; the notes' "1.9 TB" matches neither convention exactly, so
the table here reports both. FLOPs: 2 per multiply-add (see :mod:`attention_core.labs.multihead`).
"""

from __future__ import annotations

import statistics
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from ..tiled import direct_attention, tile_grid, tiled_attention
from .multihead import SOFTMAX_FLOPS_PER_ELEMENT, matmul_flops

NOTES_SEQUENCE_LENGTHS = (2_048, 8_192, 32_768, 131_072, 1_000_000)
DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1}
DECIMAL_UNITS = ("B", "kB", "MB", "GB", "TB", "PB", "EB")
BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
# The live measurement builds float64 n × n matrices (several temporaries): keep n modest.
MAX_DIRECT_N = 4096
MAX_TILED_N = 16384
# The page's live sweep: n = 128, 256, … with d = 64; small sizes take milliseconds, so one run is
# mostly noise there: up to SWEEP_REPEAT_UP_TO the fastest of SWEEP_REPEATS runs counts.
SWEEP_MIN_N, SWEEP_D, SWEEP_REPEATS, SWEEP_REPEAT_UP_TO = 128, 64, 3, 512


def dtypes_by_size() -> dict[int, tuple[str, ...]]:
    """The dtypes of :data:`DTYPE_BYTES` grouped by their size, largest first: ``{4: ("fp32",), 2: ("fp16", "bf16"), …}``."""
    sizes = sorted(set(DTYPE_BYTES.values()), reverse=True)
    return {size: tuple(d for d, b in DTYPE_BYTES.items() if b == size) for size in sizes}


def attention_matrix_elements(n: int, heads: int = 1, batch: int = 1, layers: int = 1) -> int:
    """Number of attention weights held at once: batch · layers · heads · n²."""
    if min(n, heads, batch, layers) < 1:
        raise ValueError("all sizes must be positive")
    return batch * layers * heads * n * n


def attention_matrix_bytes(
    n: int, bytes_per_elem: int = 2, heads: int = 1, batch: int = 1, layers: int = 1
) -> int:
    """Bytes of the attention matrices: elements × bytes per element (FP16 = 2 by default)."""
    if bytes_per_elem < 1:
        raise ValueError("bytes_per_elem must be positive")
    return attention_matrix_elements(n, heads, batch, layers) * bytes_per_elem


def in_units(num_bytes: float, binary: bool) -> tuple[float, str]:
    """Largest unit in which the value is ≥ 1: ``(8.0, "MiB")`` or ``(8.388608, "MB")``."""
    base = 1024 if binary else 1000
    units = BINARY_UNITS if binary else DECIMAL_UNITS
    value, i = float(num_bytes), 0
    while abs(value) >= base and i < len(units) - 1:
        value /= base
        i += 1
    return value, units[i]


def format_bytes(num_bytes: float, binary: bool = True, digits: int = 3) -> str:
    """``8388608 -> "8 MiB"`` (binary) or ``"8.39 MB"`` (decimal), ``digits`` significant digits."""
    value, unit = in_units(num_bytes, binary)
    return f"{value:.{digits}g} {unit}"


@dataclass(frozen=True)
class MemoryRow:
    """One line of the memory table."""

    n: int
    elements: int
    bytes: int
    decimal_value: float  # e.g. 8.388608
    decimal_unit: str  # e.g. "MB"
    binary_value: float  # e.g. 8.0
    binary_unit: str  # e.g. "MiB" (the notes' convention)
    ratio_to_first: float  # bytes / bytes of the first row (×4 per doubling of n)


def memory_table(
    ns=NOTES_SEQUENCE_LENGTHS, bytes_per_elem: int = 2, heads: int = 1, batch: int = 1, layers: int = 1
) -> tuple[MemoryRow, ...]:
    """Attention-matrix memory for each n (defaults reproduce the notes' FP16 one-head table)."""
    rows = []
    first = None
    for n in ns:
        b = attention_matrix_bytes(int(n), bytes_per_elem, heads, batch, layers)
        first = first or b
        dv, du = in_units(b, binary=False)
        bv, bu = in_units(b, binary=True)
        rows.append(MemoryRow(int(n), b // bytes_per_elem, b, dv, du, bv, bu, b / first))
    return tuple(rows)


@dataclass(frozen=True)
class AttentionFlops:
    """FLOPs of the attention core (no projections) for n tokens: the parts that grow with n²."""

    n: int
    d_k: int
    d_v: int
    heads: int
    scores: int  # heads · 2·n²·d_k
    softmax: int  # heads · (1 + SOFTMAX_FLOPS_PER_ELEMENT)·n² (scaling + softmax, approximate)
    weighted_sum: int  # heads · 2·n²·d_v
    total: int


def attention_flops(n: int, d_k: int, d_v: int | None = None, heads: int = 1) -> AttentionFlops:
    """FLOPs of QKᵀ, scaling + softmax and weights·V (2 FLOPs per multiply-add)."""
    d_v = d_k if d_v is None else d_v
    scores = heads * matmul_flops(n, d_k, n)
    smax = heads * (1 + SOFTMAX_FLOPS_PER_ELEMENT) * n * n
    wsum = heads * matmul_flops(n, n, d_v)
    return AttentionFlops(n, d_k, d_v, heads, scores, smax, wsum, scores + smax + wsum)


def flops_table(ns, d_k: int, d_v: int | None = None, heads: int = 1) -> tuple[AttentionFlops, ...]:
    return tuple(attention_flops(int(n), d_k, d_v, heads) for n in ns)


@dataclass(frozen=True)
class Measurement:
    """One live run: wall time (without tracing) and peak traced memory (a second run, traced).

    ``peak_bytes`` counts only memory allocated during the run (the inputs Q, K, V already exist);
    ``matrix_bytes`` is the size of one float64 n × n matrix, for comparison. The direct peak is
    several such matrices (softmax makes temporaries). Times depend on the machine's load and
    BLAS threading; compare memory, not seconds.
    """

    method: str  # "direct" or "tiled"
    n: int
    d: int
    causal: bool
    seconds: float
    peak_bytes: int
    matrix_bytes: int
    block: int | None  # tile size for "tiled"


def peak_bytes(fn) -> int:
    """Bytes allocated at the peak while ``fn()`` runs, above what was held before (tracemalloc;
    NumPy reports its buffers to it)."""
    was = tracemalloc.is_tracing()
    if not was:
        tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return max(0, tracemalloc.get_traced_memory()[1] - base)
    finally:
        if not was:
            tracemalloc.stop()


def _inputs(n: int, d: int, seed: int):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((n, d)), rng.standard_normal((n, d))


def _measure(method, n, d, seed, causal, block, fn) -> Measurement:
    Q, K, V = _inputs(n, d, seed)
    t0 = time.perf_counter()
    fn(Q, K, V)
    seconds = time.perf_counter() - t0
    peak = peak_bytes(lambda: fn(Q, K, V))
    return Measurement(method, n, d, causal, seconds, peak, n * n * 8, block)


def measure_direct_attention(n: int, d: int = 64, seed: int = 0, causal: bool = False) -> Measurement:
    """Time and peak memory of the textbook computation (full n × n matrix). n ≤ MAX_DIRECT_N."""
    if not 1 <= n <= MAX_DIRECT_N or d < 1:
        raise ValueError(f"n must be between 1 and {MAX_DIRECT_N}, d positive")
    return _measure("direct", n, d, seed, causal, None, lambda Q, K, V: direct_attention(Q, K, V, causal))


def measure_tiled_attention(
    n: int, d: int = 64, seed: int = 0, causal: bool = False, block: int = 128
) -> Measurement:
    """Time and peak memory of :func:`attention_core.tiled.tiled_attention` (block × block tiles)."""
    if not 1 <= n <= MAX_TILED_N or d < 1:
        raise ValueError(f"n must be between 1 and {MAX_TILED_N}, d positive")
    return _measure(
        "tiled",
        n,
        d,
        seed,
        causal,
        block,
        lambda Q, K, V: tiled_attention(Q, K, V, block, block, causal=causal),
    )


def sweep_sizes(max_n: int) -> tuple[int, ...]:
    """n = SWEEP_MIN_N, 2·SWEEP_MIN_N, … up to ``max_n`` (at most MAX_DIRECT_N)."""
    top = min(int(max_n), MAX_DIRECT_N)
    sizes, n = [], SWEEP_MIN_N
    while n <= top:
        sizes.append(n)
        n *= 2
    return tuple(sizes)


@dataclass(frozen=True)
class SweepPoint:
    """Direct and tiled attention measured at one n of the live sweep."""

    n: int
    direct: Measurement  # the whole n × n matrix at once
    tiled: Measurement  # block × block tiles with the online softmax


def measure_sweep(max_n: int, block: int = 128, d: int = SWEEP_D) -> Iterator[SweepPoint]:
    """Measure direct and tiled attention for each n of :func:`sweep_sizes`, one n at a time.

    A generator, so the caller can show progress and keep what was measured if a later n fails.
    Times up to SWEEP_REPEAT_UP_TO are the fastest of SWEEP_REPEATS runs; peaks come from one run.
    """
    measure_direct_attention(64, d)  # warm-up: the first BLAS call pays one-off set-up costs
    for n in sweep_sizes(max_n):
        repeats = SWEEP_REPEATS if n <= SWEEP_REPEAT_UP_TO else 1
        direct = [measure_direct_attention(n, d) for _ in range(repeats)]
        tiled = [measure_tiled_attention(n, d, block=block) for _ in range(repeats)]
        yield SweepPoint(n, _fastest(direct), _fastest(tiled))


def _fastest(runs: list[Measurement]) -> Measurement:
    """The first run with the shortest time of all: time varies from run to run, peak memory does not."""
    return replace(runs[0], seconds=min(m.seconds for m in runs))


@dataclass(frozen=True)
class SweepSummary:
    """What a finished sweep says: how the direct peak grows from one n to the next."""

    steps: tuple[float | None, ...]  # direct peak / the previous n's direct peak (None for the first n)
    median_step: float | None  # ≈ 4 when the memory grows with n² (None with fewer than two n)


def summarise_sweep(points) -> SweepSummary:
    """The direct peak's growth factor between consecutive n of ``points`` (in n order)."""
    steps: list[float | None] = [None]
    for before, after in zip(points, points[1:], strict=False):
        peak = before.direct.peak_bytes
        steps.append(after.direct.peak_bytes / peak if peak else None)
    known = [x for x in steps if x is not None]
    return SweepSummary(tuple(steps[: len(points)]), statistics.median(known) if known else None)


@dataclass(frozen=True)
class TiledCheck:
    """Tiled attention against the direct computation on random Q, K, V ``[n, d]``."""

    n: int
    block: int
    causal: bool
    max_abs_diff: float  # largest |tiled − direct| over the output
    tiles_computed: int
    tiles_skipped: int
    max_tile_elements: int  # the largest score tile held at once
    matrix_elements: int  # n², what the direct computation holds
    grid: np.ndarray  # [tiles, tiles] bool, the tiles formed (see attention_core.tiled.tile_grid)


def tiled_check(n: int, block: int, causal: bool, d: int = SWEEP_D, seed: int = 0) -> TiledCheck:
    """Run tiled (block × block tiles) and direct attention on the same random inputs and compare."""
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))  # [n, d] each
    tiled = tiled_attention(Q, K, V, block, block, causal=causal)
    direct = direct_attention(Q, K, V, causal=causal)  # [n, d]
    grid = tile_grid(n, n, block, block, causal)
    grid.setflags(write=False)
    diff = float(np.max(np.abs(tiled.output - direct)))
    return TiledCheck(
        n,
        block,
        causal,
        diff,
        tiled.tiles_computed,
        tiled.tiles_skipped,
        tiled.max_tile_elements,
        n * n,
        grid,
    )
