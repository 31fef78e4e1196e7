"""Ring attention, simulated: P devices, each holding one query block, pass the key/value blocks around.

The sequence of n tokens is cut into P contiguous blocks. Device p keeps its query block Q_p for the
whole computation. At step t (t = 0 … P − 1) it holds key/value block (p − t) mod P, folds that block
into its running max, denominator and unnormalised output with the online softmax of
:func:`attention_core.tiled.online_softmax_merge` (the same function as the tiled lab), and then
sends the block to device p + 1 (mod P). After P steps every device has seen every block once and
holds exact attention for its own queries (up to rounding). Everything runs in one NumPy process:
the "devices" are loop indices, the "sends" are the schedule; no communication is measured here.

Causal mask: a key block wholly after a device's last query is skipped (no scores, no merge). With
contiguous blocks device p then computes p + 1 of its P blocks, so the last device works P times as
long as the first, while the ring still needs P steps. Costs (:func:`ring_costs`) are counts from
the formulas below for the sizes the learner sets, not measurements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..arrays import read_only
from ..tiled import causal_allowed, direct_attention, future_tile, online_softmax_merge, online_softmax_output
from .cost import attention_flops

P_RANGE = (2, 16)
ORDERINGS = ("contiguous", "striped", "zigzag")


def block_bounds(n: int, P: int) -> tuple[tuple[int, int], ...]:
    """The P contiguous token ranges ``[start, end)``, sizes differing by at most one (n ≥ P)."""
    if not P_RANGE[0] <= P <= P_RANGE[1]:
        raise ValueError(f"P must be between {P_RANGE[0]} and {P_RANGE[1]}")
    if n < P:
        raise ValueError("the sequence needs at least one token per device (n ≥ P)")
    edges = [p * n // P for p in range(P + 1)]
    return tuple(zip(edges[:-1], edges[1:], strict=True))


def ring_schedule(P: int) -> np.ndarray:
    """``[P devices, P steps]`` int: the key/value block device p holds at step t, (p − t) mod P.

    Each step every device passes its block one hop on, to device p + 1, so device p + 1 holds at step
    t + 1 the block device p held at step t.
    """
    p, t = np.meshgrid(np.arange(P), np.arange(P), indexing="ij")
    return (p - t) % P


@dataclass(frozen=True)
class RingAttention:
    """What the simulated ring computed, step by step (arrays read-only)."""

    output: np.ndarray  # [n, d_v] every device's query rows, in token order
    bounds: tuple[tuple[int, int], ...]  # P token ranges, device p holds queries bounds[p]
    schedule: np.ndarray  # [P, P] int, key/value block held by device p at step t
    computed: np.ndarray  # [P, P] bool, device p formed scores at step t (False: wholly future, skipped)
    row: int  # the query row whose running state is followed
    row_device: int  # the device holding that row
    row_max: np.ndarray  # [P] running max m of that row after each step (−inf before any allowed key)
    row_denom: np.ndarray  # [P] running denominator ℓ of that row after each step

    @property
    def blocks_per_device(self) -> np.ndarray:
        """``[P]`` blocks each device actually folded in (its work)."""
        return self.computed.sum(axis=1)


def ring_attention(Q, K, V, P: int, causal: bool = False, row: int = 0, schedule=None) -> RingAttention:
    """Simulate the ring: ``Q [n, d_k]``, ``K [n, d_k]``, ``V [n, d_v]`` -> :class:`RingAttention`.

    ``schedule [P, P]`` (default :func:`ring_schedule`) says which block device p folds in at step t;
    any other schedule is run as given (a wrong one gives a wrong result: that is how the tests see
    that the check can fail). Scores are divided by √d_k.
    """
    Q, K, V = (np.asarray(a, float) for a in (Q, K, V))
    if Q.ndim != 2 or K.shape != Q.shape or V.ndim != 2 or V.shape[0] != Q.shape[0]:
        raise ValueError("expected Q [n, d_k], K [n, d_k], V [n, d_v] with as many keys as queries")
    n = Q.shape[0]
    bounds = block_bounds(n, P)
    if not 0 <= row < n:
        raise ValueError("the followed row must be a query index")
    sched = ring_schedule(P) if schedule is None else np.asarray(schedule, int)
    if sched.shape != (P, P) or sched.min() < 0 or sched.max() >= P:
        raise ValueError("a schedule is [P, P] block indices between 0 and P − 1")
    divisor = math.sqrt(Q.shape[1])
    out, computed = np.zeros((n, V.shape[1])), np.zeros((P, P), bool)
    row_device = next(p for p, (q0, q1) in enumerate(bounds) if q0 <= row < q1)
    row_max, row_denom = np.full(P, -np.inf), np.zeros(P)
    for p, (q0, q1) in enumerate(bounds):  # each device on its own; the steps are in lockstep
        m = np.full(q1 - q0, -np.inf)  # [bq] running max
        denom = np.zeros(q1 - q0)  # [bq] running denominator
        acc = np.zeros((q1 - q0, V.shape[1]))  # [bq, d_v] running numerator
        for t in range(P):
            k0, k1 = bounds[sched[p, t]]
            if not (causal and future_tile(q1, k0)):  # a wholly future block is skipped
                s = Q[q0:q1] @ K[k0:k1].T / divisor  # [bq, bk] this step's score block
                if causal:
                    s = np.where(causal_allowed(np.arange(q0, q1), np.arange(k0, k1)), s, -np.inf)
                m, denom, acc = online_softmax_merge(m, denom, acc, s, V[k0:k1])
                computed[p, t] = True
            if p == row_device:
                row_max[t], row_denom[t] = m[row - q0], denom[row - q0]
        out[q0:q1] = online_softmax_output(denom, acc)
    return RingAttention(
        read_only(out),
        bounds,
        read_only(sched, copy=True),
        read_only(computed),
        row,
        row_device,
        read_only(row_max),
        read_only(row_denom),
    )


@dataclass(frozen=True)
class RingLab:
    """The ring on random Q, K, V against direct attention on the same inputs."""

    n: int
    d: int
    P: int
    causal: bool
    ring: RingAttention
    max_abs_diff: float  # |ring − direct attention|: rounding only
    blocks_total: int  # P², the blocks a ring without a mask folds in
    blocks_computed: int  # blocks actually folded in (P(P + 1)/2 under the causal mask)


def ring_lab(n: int, d: int, P: int, causal: bool, row: int, seed: int = 0) -> RingLab:
    """Draw Q, K, V ``[n, d]`` from ``default_rng(seed)``, run the ring and direct attention."""
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((n, d)) for _ in range(3))
    ring = ring_attention(Q, K, V, P, causal, row)
    diff = float(np.max(np.abs(ring.output - direct_attention(Q, K, V, causal=causal))))
    return RingLab(n, d, P, causal, ring, diff, P * P, int(ring.computed.sum()))


def device_tokens(n: int, P: int, ordering: str) -> tuple[np.ndarray, ...]:
    """The token (query) indices each device holds under an ordering.

    ``contiguous``: block p of :func:`block_bounds`; ``striped``: tokens i with i mod P = p;
    ``zigzag``: the sequence cut into 2P chunks, device p holding chunks p and 2P − 1 − p.
    """
    if ordering == "contiguous":
        return tuple(np.arange(a, b) for a, b in block_bounds(n, P))
    if ordering == "striped":
        block_bounds(n, P)  # the same limits
        return tuple(np.arange(p, n, P) for p in range(P))
    if ordering == "zigzag":
        if n < 2 * P:
            raise ValueError("zig-zag needs at least two tokens per device (n ≥ 2P)")
        edges = [c * n // (2 * P) for c in range(2 * P + 1)]
        chunk = [np.arange(edges[c], edges[c + 1]) for c in range(2 * P)]
        return tuple(np.concatenate([chunk[p], chunk[2 * P - 1 - p]]) for p in range(P))
    raise ValueError(f"unknown ordering {ordering!r}")


def causal_pairs_per_device(n: int, P: int, ordering: str) -> np.ndarray:
    """``[P]`` allowed causal (query, key) pairs whose query device p holds: Σ over its queries i of
    i + 1. Only a count of the unmasked scores; the ring itself is simulated for contiguous blocks."""
    return np.array([int((tokens + 1).sum()) for tokens in device_tokens(n, P, ordering)])


@dataclass(frozen=True)
class RingCosts:
    """Per-device memory, traffic and time of one attention head on the ring, from the formulas."""

    n: int
    d: int
    P: int
    bytes_per_element: int
    block: int  # b = ⌈n / P⌉ tokens per device (the largest block)
    memory: dict  # name -> elements held by one device: q, kv_now, kv_next, state, scores
    device_bytes: int  # Σ memory × bytes per element
    full_matrix_bytes: int  # one device holding the whole n × n score matrix
    send_bytes_per_device: int  # one K and one V block: 2·b·d elements
    send_bytes_per_step: int  # all P devices send at once
    send_steps: int  # P − 1: the last block needs no further hop
    send_bytes_total: int
    block_flops: int  # one b × b block: QKᵀ, softmax, ·V (the cost lab's count)
    compute_seconds: float  # per step, at the learner's FLOP rate
    transfer_seconds: float  # per step, at the learner's bandwidth
    min_block_to_hide: int  # smallest b with transfer ≤ compute

    @property
    def hides(self) -> bool:
        """Sending the next block can overlap computing the current one without making the step longer."""
        return self.transfer_seconds <= self.compute_seconds


def block_compute_flops(b: int, d: int) -> int:
    """FLOPs of one device's step: a b × b block of attention (d_k = d_v = d)."""
    return attention_flops(b, d, d).total


def ring_costs(
    n: int, d: int, P: int, bytes_per_element: int, bandwidth: float, flop_rate: float
) -> RingCosts:
    """Counts for ``n`` tokens, head size ``d``, ``P`` devices, a link of ``bandwidth`` bytes/s and
    ``flop_rate`` FLOP/s per device. Transfer ≤ compute is the condition for hiding the send."""
    if n < P or not P_RANGE[0] <= P <= P_RANGE[1] or d < 1 or bytes_per_element < 1:
        raise ValueError("need n ≥ P, P in range, d ≥ 1 and a positive element size")
    if bandwidth <= 0 or flop_rate <= 0:
        raise ValueError("bandwidth and FLOP rate must be positive")
    b = -(-n // P)
    memory = {
        "q": b * d,  # this device's queries, kept all along
        "kv_now": 2 * b * d,  # the K and V block being folded in
        "kv_next": 2 * b * d,  # the block arriving meanwhile (needed to overlap send and compute)
        "state": b * d + 2 * b,  # unnormalised output, running max and denominator
        "scores": b * b,  # one b × b score block
    }
    send = 2 * b * d * bytes_per_element
    flops = block_compute_flops(b, d)
    # transfer ≤ compute ⇔ 2bdβ/B ≤ b²(4d + c)/F ⇔ b ≥ 2dβF / (B(4d + c)), c the softmax FLOPs per score
    per_score = block_compute_flops(1, d)  # 4d + c: the FLOPs per score entry
    min_b = max(1, math.ceil(2 * d * bytes_per_element * flop_rate / (bandwidth * per_score) - 1e-12))
    return RingCosts(
        n,
        d,
        P,
        bytes_per_element,
        b,
        memory,
        sum(memory.values()) * bytes_per_element,
        n * n * bytes_per_element,
        send,
        P * send,
        P - 1,
        (P - 1) * P * send,
        flops,
        flops / flop_rate,
        send / bandwidth,
        min_b,
    )
