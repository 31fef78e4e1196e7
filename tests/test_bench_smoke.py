"""Smoke runs of the bench scripts (classroom load, the issue-6 benchmarks, the decoder), so CI keeps them working.

Marked ``browser``: it starts its own server and Chromium, so it runs in ``pytest -m browser``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.browser


def _bench_json(script: str, timeout: int) -> dict:
    """``bench/<script> --smoke --json``: it must succeed; its one JSON object."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--smoke", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.mark.timeout(420)
def test_classroom_load_smoke_passes_and_reports_its_figures() -> None:
    result = _bench_json("classroom_load.py", 400)
    assert result["errors"] == [] and result["leaks"] == []
    assert result["sessions"] == 2 and result["changes_timed"] == 2 * (2 + 1)
    assert 0 < result["p50_s"] <= result["p95_s"]
    assert 0 < result["rss_before_mb"] <= result["rss_peak_mb"]
    assert result["active_sessions_after"] == 0


# ---------------------------------------------------------------- issue 6 benchmarks (bench/*.py --smoke)


def _run_bench(script: str, timeout: int) -> str:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def _number(pattern: str, text: str) -> float:
    import re

    match = re.search(pattern, text)
    assert match, f"{pattern!r} not in:\n{text}"
    return float(match.group(1).replace(",", ""))


@pytest.mark.timeout(120)
def test_core_overhead_smoke_reports_a_ratio_and_import_times() -> None:
    out = _run_bench("core_overhead.py", 110)
    assert 0 < _number(r"overhead ratio\s+median\s+([\d.]+)x", out) < 20
    assert _number(r"import attention_core\s+median\s+([\d.]+) ms", out) > 0
    assert _number(r"import numpy alone\s+median\s+([\d.]+) ms", out) > 0


@pytest.mark.timeout(120)
def test_tiled_vs_direct_smoke_matches_the_direct_output_in_less_memory() -> None:
    out = _run_bench("tiled_vs_direct.py", 110)
    assert _number(r"max \|direct - tiled\| ([\d.e+-]+)", out) <= 1e-10
    assert _number(r"memory ratio\s+([\d.]+) %", out) < 100  # 128-blocks at n=512: a fraction of n×n
    assert _number(r"time ratio\s+([\d.]+) x", out) > 0


@pytest.mark.timeout(400)
def test_page_latency_smoke_times_both_apps_and_counts_their_bytes() -> None:
    out = _run_bench("page_latency.py", 380)
    assert _number(r"playground\s+(\d+) ms", out) > 0 and _number(r"floor\s+(\d+) ms", out) > 0
    assert _number(r"ratio\s+([\d.]+)x", out) > 0
    assert _number(r"bytes/rerun playground\s+([\d,]+)", out) > 1000  # new figures were sent
    assert _number(r"bytes/rerun playground\s+[\d,]+\s+floor\s+([\d,]+)", out) > 1000


@pytest.mark.timeout(300)
def test_cold_start_smoke_reaches_a_drawn_chart() -> None:
    out = _run_bench("cold_start.py", 280)
    healthy = _number(r"server healthy\s+([\d.]+) s", out)
    drawn = _number(r"first chart drawn\s+([\d.]+) s", out)
    assert 0 < healthy <= drawn


# ---------------------------------------------------------------- issue 13: the SmolLM2 decoder


@pytest.mark.timeout(200)
def test_decoder_time_smoke_reports_load_time_memory_and_steps() -> None:
    from attention_core.models import smollm2

    if not smollm2.is_available():
        pytest.skip(f"optional model missing: {smollm2.INSTALL_COMMAND}")
    out = _run_bench("decoder_time.py", 180)
    assert _number(r"load \(read \+ dequantize \+ tokenizer\)\s+median ([\d.]+) s", out) > 0
    # the memory budget of issue 13 (a size, not a time: it does not depend on the machine's load)
    assert 300 < _number(r"resident memory of the loaded model\s+(\d+) MB", out) <= 600
    assert _number(r"forward pass, n=16, every step kept\s+median (\d+) ms", out) > 0
    assert _number(r"cached next-token step at n=16\s+median (\d+) ms", out) > 0
    assert _number(r"KV cache at n=16\s+([\d,]+) bytes", out) == 2 * 30 * 16 * 3 * 64 * 4


@pytest.mark.timeout(300)
def test_llama_before_after_smoke_sees_the_same_and_a_changed_core(tmp_path) -> None:
    """Against this checkout itself: the same logits bit for bit; against a copy whose layer loop
    adds half the FFN's output: "NO" and exit code 1."""
    import shutil

    from attention_core.models import smollm2

    if not smollm2.is_available():
        pytest.skip(f"optional model missing: {smollm2.INSTALL_COMMAND}")
    script = [sys.executable, str(ROOT / "bench" / "llama_before_after.py"), "--smoke", "--before"]
    same = subprocess.run([*script, str(ROOT)], cwd=ROOT, capture_output=True, text=True, timeout=140)
    assert same.returncode == 0, same.stdout[-3000:] + same.stderr[-3000:]
    assert "bit for bit (pass and step): yes" in same.stdout
    assert _number(r"pass before\s+median\s+([\d.]+) ms", same.stdout) > 0
    assert _number(r"step after\s+median\s+([\d.]+) ms", same.stdout) > 0
    shutil.copytree(
        ROOT / "attention_core", tmp_path / "attention_core", ignore=shutil.ignore_patterns("__pycache__")
    )
    llama_copy = tmp_path / "attention_core" / "models" / "llama.py"
    code = llama_copy.read_text(encoding="utf-8")
    assert code.count("x = x + ffn_out") == 1
    llama_copy.write_text(code.replace("x = x + ffn_out", "x = x + 0.5 * ffn_out"), encoding="utf-8")
    changed = subprocess.run([*script, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=140)
    assert changed.returncode == 1 and "bit for bit (pass and step): NO" in changed.stdout


@pytest.mark.timeout(300)
def test_code_check_bench_smoke_leaves_nothing_behind() -> None:
    result = _bench_json("code_check.py", 280)
    assert result["errors"] == [] and result["workers_left"] == [] and result["dirs_left"] == []
    assert (
        0 < result["warm_p50_s"] <= result["warm_p95_s"] and 0 < result["cold_p50_s"] <= result["cold_p95_s"]
    )


@pytest.mark.timeout(300)
def test_takehome_bench_smoke_opens_the_lesson_with_no_request() -> None:
    (result,) = _bench_json("takehome.py", 280)["results"]
    assert result["requests"] == 0 and result["charts_with_svg"] == 11
    assert 0 < result["lesson_bytes"] <= 6 * 2**20
    assert result["lesson_build_s"] > 0 and result["scorm_build_s"] > 0 and result["open_s"] > 0
    assert 0 < result["main_thread_s"]


# ---------------------------------------------------------------- issue 43 (bench/code_tab.py, bench/notebook_time.py)


@pytest.mark.timeout(300)
def test_code_tab_and_notebook_benches_smoke() -> None:
    out = _run_bench("code_tab.py", 280)
    assert _number(r"closed ([\d.]+) ms", out) > 0 and _number(r"open / closed = ([\d.]+)", out) > 0
    out = _run_bench("notebook_time.py", 200)
    assert 0 < _number(r"median ([\d.]+) s", out) < 200


# ---------------------------------------------------------------- issue 47: a lecture hall, protocol-level


@pytest.mark.timeout(240)
def test_hall_smoke_follows_answers_and_counts(tmp_path) -> None:
    """bench/hall.py --smoke: 20 protocol-level students behind HAProxy and a Chromium teacher. Every
    student joins and follows both steps; every answer is acknowledged, stored and counted on the
    teacher's panel; nothing about time is asserted (the machine may be loaded)."""
    out = tmp_path / "hall.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "hall.py"), "--smoke", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=220,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-3000:]
    (r,) = json.loads(out.read_text())
    assert r["students"] == r["joined"] == 20
    assert r["follow_missing"] == 0 and len(r["follow_per_step"]) == 2
    # Each step counts from the press the presenter's page got, read in the page (not the bench's call)
    assert len(r["click_parts"]) == 2 and all(
        call_to_press is not None for call_to_press, _, _ in r["click_parts"].values()
    )
    assert r["answers_sent"] == r["answers_acked"] == len(r["stored"]) == r["panel_count"] == 20
    assert sum(r["spread"].values()) == 20 and len(r["spread"]) == 2  # both processes took students
    assert all(v > 0 for v in r["rss"].values())


def test_hall_verdict_counts_a_server_going_down_not_one_coming_up() -> None:
    """HAProxy logs a server's first UP too: only a DOWN (or a failed check) fails the run."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import hall
    finally:
        sys.path.remove(str(ROOT / "bench"))
    ok = {"students": 2, "joined": 2, "follow": (0.5, 1.0, 1.2), "follow_missing": 0, "stored": [["a", 0], ["b", 1]],
          "_acked": {"a": "A", "b": "B"}, "answers_sent": 2, "panel_count": 2, "poll_on_panel_s": 0.4,
          "panel_lag": (0.1, 0.2, 0.3), "closed": [], "checks": {"r1": (0, 0), "r2": (0, 0)},
          "states": [(1.0, "r2", "UP")]}  # fmt: skip
    assert hall.verdict(ok) == []
    down = dict(ok, states=[(1.0, "r2", "UP"), (40.2, "r1", "DOWN")])
    assert any("marked a backend down" in w and "DOWN" in w for w in hall.verdict(down))
    failed_check = dict(ok, checks={"r1": (3, 1), "r2": (0, 0)})
    assert any("marked a backend down" in w for w in hall.verdict(failed_check))
    # The teacher's panel tab threw (issue 47: Streamlit's "Cannot set a node at a delta path") and
    # closed its websocket: the run fails and says so, not only "the panel counted 0".
    tab = dict(ok, tab_events=["20:15:07 panel: page error: Cannot set a node at a delta path",
                               "20:15:07 panel: websocket closed"])  # fmt: skip
    assert any("teacher's tab broke" in w and "delta path" in w for w in hall.verdict(tab))
    assert hall.verdict(dict(ok, tab_events=["20:14:30 panel: websocket opened x"])) == []
