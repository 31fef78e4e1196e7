"""One check, end to end: the cases, the worker's run, the traps, the verdict."""

from __future__ import annotations

from collections.abc import Sequence

from ..config import AttentionConfig
from .cases import Case, hidden_cases, reference, sentence_cases
from .sandbox import Sandbox, default_sandbox
from .traps import trap_outputs
from .verdict import Report, build_report
from .wire import encode_array


def encode_case(case: Case) -> dict:
    def maybe(a):
        return None if a is None else encode_array(a)

    arrays = {k: encode_array(getattr(case, k)) for k in ("X", "W_Q", "W_K", "W_V")}
    return {"name": case.name, **arrays, "mask": maybe(case.mask), "d_k": case.d_k, "W_O": maybe(case.W_O)}


def all_cases(text: str, config: AttentionConfig) -> tuple[Case, ...]:
    """The learner's sentence (one head, then the layer) and the hidden cases."""
    return (*sentence_cases(text, config), *hidden_cases())


def check_cases(source: str, cases: Sequence[Case], sandbox: Sandbox | None = None) -> Report:
    """Run ``source`` on ``cases`` in a worker and judge it (SandboxUnavailable if none can start).

    Only the cases' inputs go to the worker; the core's answers and the traps' stay here.
    """
    box = sandbox or default_sandbox()
    reply = box.run({"source": source, "cases": [encode_case(c) for c in cases]})
    refs = {(c.name, c.multi): reference(c) for c in cases}
    traps, multi_traps = trap_outputs(cases), trap_outputs(cases, multi=True)
    return build_report(reply.data, reply.killed, cases, refs, traps, multi_traps)


def check(source: str, text: str, config: AttentionConfig, sandbox: Sandbox | None = None) -> Report:
    return check_cases(source, all_cases(text, config), sandbox)
