"""The worker process: locks itself down, then compiles and runs ONE learner's code, and exits.

Started by sandbox.py as ``python -I -c <boot> ROOT CPU_SECONDS MEMORY_BYTES`` with an empty
environment, in a fresh empty temporary directory, stdin and stdout on pipes, stderr to /dev/null.
In order:

1. Imports (NumPy with one BLAS thread, RestrictedPython, the core), then clears its environment.
2. :func:`lock_down`: the result pipe moves off fd 1 (stray writes go to /dev/null); as root it
   enters a new network namespace (no network), ``chroot`` s into its empty directory and becomes
   ``nobody``; then ``resource`` limits: no file writes (FSIZE 0), no new processes (NPROC 0, which
   the kernel does not apply to root: hence ``nobody`` first), no new file descriptors (NOFILE at
   the ones open), no core files, address space :data:`MEMORY_BYTES`.
3. A warm-up run of a correct program under all of the above (lazy imports happen now, and a
   worker that cannot run it says so instead of failing a learner's check).
4. ``{"ready": …}`` on the result pipe. A warm spare waits here, its imports done.
5. Reads one job (JSON) from stdin until EOF, arms a CPU timer of :data:`CPU_SECONDS` (SIGPROF,
   whose default action ends the process; RLIMIT_CPU one second later as a backstop), runs it,
   writes one JSON reply and exits. A worker never serves a second check.
"""

from __future__ import annotations

import os
import sys

CPU_SECONDS = 2.0
MEMORY_BYTES = 512 * 1024 * 1024
MAX_JOB_BYTES = 4 * 1024 * 1024
MAX_LOCALS = 24
MAX_MESSAGE = 500


def _imports() -> None:
    # one BLAS thread: the worker shares two cores with the server and the other checks
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"
    import ctypes  # noqa: F401
    import math  # noqa: F401
    import pwd  # noqa: F401
    import resource  # noqa: F401
    import signal  # noqa: F401

    import numpy  # noqa: F401
    from RestrictedPython import compile_restricted_exec  # noqa: F401

    from . import cases, policy, wire  # noqa: F401

    os.environ.clear()


def lock_down(memory_bytes: int = MEMORY_BYTES) -> dict:
    """Apply every limit this process can apply to itself; returns what it did (for the docs' table).

    Raises OSError when the server runs as root and the worker cannot stop being root: the
    process limit would then not hold, so the check must not run (fail closed).
    """
    import resource

    done: dict = {"root": os.geteuid() == 0}
    _fill_fd_gaps()  # so that the NOFILE limit below leaves no free descriptor at all
    if done["root"]:
        done["network"] = _new_network_namespace()
        os.chroot(".")
        os.chdir("/")
        done["chroot"] = True
        nobody = _nobody()
        os.setgroups([])
        os.setgid(nobody[1])
        os.setuid(nobody[0])
        if os.geteuid() == 0 or os.getuid() == 0:  # pragma: no cover - setuid returns or raises
            raise OSError("the worker is still root")
        done["user"] = nobody[0]
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    highest = max(_open_fds())
    resource.setrlimit(resource.RLIMIT_NOFILE, (highest + 1, highest + 1))
    done["nofile"] = highest + 1
    return done


def _fill_fd_gaps() -> None:
    """Every descriptor number below the highest open one in use (by /dev/null), so that a new
    descriptor (a file, a socket, a pipe) would need a number at or above the NOFILE limit."""
    fds = _open_fds()
    spare = os.open(os.devnull, os.O_RDONLY)
    for fd in range(max(fds)):
        if fd not in fds and fd != spare:
            os.dup2(spare, fd)
    if spare > max(fds):
        os.close(spare)


def _open_fds() -> list[int]:
    found = []
    for fd in range(64):
        try:
            os.fstat(fd)
        except OSError:
            continue
        found.append(fd)
    return found


def _nobody() -> tuple[int, int]:
    try:
        import pwd

        entry = pwd.getpwnam("nobody")
        return entry.pw_uid, entry.pw_gid
    except (ImportError, KeyError):
        return 65534, 65534


def _new_network_namespace() -> bool:
    """unshare(CLONE_NEWNET): the worker sees no network at all (only a loopback that is down)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.unshare(0x40000000) == 0
    except (OSError, AttributeError):
        return False


def _arm_cpu_timer(seconds: float) -> None:
    import math
    import resource
    import signal

    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    soft = math.ceil(spent + seconds) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    signal.setitimer(signal.ITIMER_PROF, seconds)


# --- one job --------------------------------------------------------------------------------------


def error_info(err: BaseException) -> dict:
    """Where the learner's code raised ``err`` (their line, never ours) and what it says."""
    from .policy import LEARNER_FILE, NotAllowed

    lines = []
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == LEARNER_FILE:
            lines.append(tb.tb_lineno)
        tb = tb.tb_next
    # a recursion error is raised as the next call's frame starts, on its "def" line: the call that
    # recursed is the frame before it
    line = lines[-2] if isinstance(err, RecursionError) and len(lines) > 1 else (lines[-1] if lines else None)
    if isinstance(err, NotAllowed):
        return {"line": line, "code": err.code, "name": err.name}
    if isinstance(err, MemoryError):
        return {"line": line, "memory": True}
    try:
        text = str(err)
    except Exception:  # an exception whose text cannot be made
        text = ""
    message = f"{type(err).__name__}: {text}" if text else type(err).__name__
    return {"line": line, "message": message[:MAX_MESSAGE]}


def _value(result) -> dict:
    import numpy as np

    from .wire import MAX_DIMS, MAX_ELEMENTS, encode_array

    try:
        a = np.asarray(result, dtype=float)
    except (TypeError, ValueError):
        return {"not_numbers": type(result).__name__[:60]}
    if a.ndim > MAX_DIMS or a.size > MAX_ELEMENTS:
        return {"shape_only": list(a.shape)[:8]}
    return {"value": encode_array(a)}


def _learner_locals(captured: dict, arguments: tuple) -> list:
    """The learner's numeric arrays of one call, in the order the function first names them.

    A list or tuple of numeric arrays of one shape (one head's output per item, as a loop over the
    heads collects them) is sent stacked, as the head-first array it stands for.
    """
    import numpy as np

    from .wire import MAX_DIMS, encode_array

    out = []
    for name, value in captured.items():
        if name.startswith("_") or name in arguments or len(out) >= MAX_LOCALS:
            continue
        if isinstance(value, (list, tuple)) and value and len(value) <= 64:
            if all(isinstance(v, np.ndarray) and v.shape == value[0].shape for v in value):
                value = np.stack(value) if value[0].size * len(value) <= 10_000 else None
        if isinstance(value, np.ndarray) and value.dtype.kind in "fiub" and 0 < value.size <= 10_000:
            if value.ndim <= MAX_DIMS:
                out.append([name, encode_array(value)])
    return out


def call(function, args: tuple, capture: bool = False) -> dict:
    """Run one learner function on copies of ``args``; its value or its error (and its locals)."""
    import numpy as np

    fresh = tuple(np.array(a) if isinstance(a, np.ndarray) else a for a in args)
    captured: dict = {}
    code = function.__code__
    if capture:

        def profile(frame, event, arg):
            if event == "return" and frame.f_code is code:
                captured.clear()
                captured.update(frame.f_locals)

        sys.setprofile(profile)
    try:
        result = function(*fresh)
    except Exception as err:  # the learner's error, reported with their line
        return {"error": error_info(err)}
    finally:
        if capture:
            sys.setprofile(None)
    out = _value(result)
    if capture and captured:
        out["locals"] = _learner_locals(captured, code.co_varnames[: code.co_argcount])
    return out


def run_job(job: dict) -> dict:
    """Compile and run the learner's code on every case (the server computes the verdict)."""
    from . import cases as C
    from . import policy
    from .wire import decode_array, maybe_array

    code, refusals = policy.compile_learner(job["source"])
    if refusals:
        return {"refused": [{"line": r.line, "code": r.code, "name": r.name} for r in refusals]}
    printed = policy.Printed()
    namespace = policy.learner_globals(printed)
    reply: dict = {}
    try:
        exec(code, namespace)
    except Exception as err:
        reply["module_error"] = error_info(err)
    functions = {name: policy.learner_function(namespace, name) for name in C.FUNCTIONS}
    reply["defined"] = [name for name, f in functions.items() if f is not None]
    runs = reply["runs"] = []
    if "module_error" not in reply:
        for raw in job["cases"]:
            case = C.Case(
                raw["name"],
                *(decode_array(raw[k]) for k in ("X", "W_Q", "W_K", "W_V")),
                mask=maybe_array(raw["mask"]),
                d_k=int(raw["d_k"]),
                W_O=maybe_array(raw["W_O"]),
            )
            runs.extend(_run_case(case, functions))
    reply["printed"] = printed.text()
    reply["printed_cut"] = printed.cut
    return reply


def _run_case(case, functions: dict) -> list[dict]:
    from . import cases as C

    runs = []
    if case.multi:
        if functions[C.MULTI_HEAD]:
            args = (case.X, case.W_Q, case.W_K, case.W_V, case.W_O, case.mask)
            multi = call(functions[C.MULTI_HEAD], args, capture=True)
            runs.append({"fn": C.MULTI_HEAD, "case": case.name, **multi})
        return runs
    if functions[C.ONE_HEAD]:
        args = (case.X, case.W_Q, case.W_K, case.W_V, case.mask, case.d_k)
        runs.append({"fn": C.ONE_HEAD, "case": case.name, **call(functions[C.ONE_HEAD], args, capture=True)})
    ref = C.reference(case)
    inputs = C.step_inputs(case, ref)
    given = [name for name in C.STEP_FUNCTIONS if functions[name]]
    for name in given:
        runs.append({"fn": name, "case": case.name, **call(functions[name], inputs[name])})
    if given:
        runs.append({"fn": "chain", "case": case.name, **_chain(case, ref, functions)})
    return runs


def _chain(case, ref, functions: dict) -> dict:
    """The learner's step functions one after another (the core's for a step they left out): the
    one-head output their steps make together, which is what a trap is recognised by."""
    from .. import steps

    core = {
        "scores": steps.raw_scores,
        "scale": lambda s, d_k: steps.scale(s, d_k**0.5),
        "apply_mask": lambda s, m: s if m is None else steps.apply_mask(s, m),
        "softmax": steps.softmax,
        "weighted_sum": steps.weighted_sum,
    }

    def step(name, *args):
        f = functions[name]
        if f is None:
            return core[name](*args)
        out = call(f, args)
        if "value" not in out:
            raise _ChainStop(out)
        from .wire import decode_array

        return decode_array(out["value"])

    try:
        s = step("scores", ref.Q, ref.K)
        s = step("scale", s, case.d_k)
        s = step("apply_mask", s, case.mask)
        w = step("softmax", s)
        return _value(step("weighted_sum", w, ref.V))
    except _ChainStop as stop:
        return stop.args[0]
    except (ValueError, TypeError) as err:  # the core's step refusing a wrongly shaped learner array
        return {"error": {"line": None, "message": f"{type(err).__name__}: {err}"[:MAX_MESSAGE]}}


class _ChainStop(Exception):
    pass


WARM_UP = """
import numpy as np
def attention(X, W_Q, W_K, W_V, mask, d_k):
    S = (X @ W_Q) @ (X @ W_K).T / np.sqrt(d_k)
    S = np.where(mask, S, -np.inf) if mask is not None else S
    m = np.max(S, axis=-1, keepdims=True)
    E = np.exp(S - np.where(np.isfinite(m), m, 0))
    print(np.einsum("ij->i", E).round(2), E.sum(axis=-1), [1, 2][0], {"a": 1}.get("a"))
    return E / np.maximum(E.sum(axis=-1, keepdims=True), 1e-300) @ (X @ W_V)
def softmax(S):
    return np.exp(S) / np.exp(S).sum(axis=-1, keepdims=True)
"""


def _warm_up_job() -> dict:
    """A small causal case for the warm-up, made before the lock-down (NumPy's random module is
    imported lazily, and nothing can be imported once the worker is locked down)."""
    import numpy as np

    from .wire import encode_array

    rng = np.random.default_rng(0)
    arrays = {"X": rng.standard_normal((3, 4)), "W_Q": rng.standard_normal((4, 2))}
    arrays |= {"W_K": arrays["W_Q"] + 1, "W_V": rng.standard_normal((4, 3)), "mask": np.tri(3, dtype=bool)}
    raw = {k: encode_array(v) for k, v in arrays.items()}
    return {"source": WARM_UP, "cases": [{"name": "w", **raw, "d_k": 2, "W_O": None}]}


def _warm_up(job: dict) -> None:
    reply = run_job(job)
    runs = reply.get("runs") or [reply]
    if any("value" not in run for run in runs):
        raise RuntimeError(f"the warm-up run failed: {runs}"[:300])


def main(argv: list[str]) -> None:
    import json

    memory = int(argv[1]) if len(argv) > 1 else MEMORY_BYTES
    cpu = float(argv[0]) if argv else CPU_SECONDS
    results = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.close(devnull)
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the life of the process
    try:
        _imports()
        warm_up = _warm_up_job()
        isolation = lock_down(memory)
        _warm_up(warm_up)
    except BaseException as err:  # cannot lock down: say so, run nothing
        results.write(json.dumps({"ready": False, "reason": f"{type(err).__name__}: {err}"[:300]}) + "\n")
        results.flush()
        os._exit(3)
    results.write(json.dumps({"ready": True, "isolation": isolation}) + "\n")
    results.flush()
    raw = sys.stdin.buffer.read(MAX_JOB_BYTES + 1)
    if not raw or len(raw) > MAX_JOB_BYTES:
        os._exit(4)
    job = json.loads(raw)
    _arm_cpu_timer(float(job.get("cpu_seconds", cpu)))
    try:
        reply = run_job(job)
    except MemoryError:
        reply = {"memory": True}
    results.write(json.dumps(reply) + "\n")
    results.flush()
    os._exit(0)
