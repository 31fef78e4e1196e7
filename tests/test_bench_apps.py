"""The bench's reference apps through AppTest: the floor app draws exactly the charts the playground
draws for the same settings (so page_latency compares like with like), and the one-chart page runs.

The browser benchmarks themselves are smoke-tested in tests/test_bench_smoke.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60


def run(script: str, params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / script), default_timeout=TIMEOUT)
    at.query_params.update(params)
    at.run()
    assert not at.exception, at.exception
    return at


def words(n: int) -> str:
    return " ".join(["cat", "sat", "on", "a", "mat"][i % 5] for i in range(n))


@pytest.mark.parametrize(
    ("n", "mask", "all_heads"),
    [
        (6, "none", False),
        (6, "causal", False),
        (130, "none", False),
        (130, "none", True),
        (130, "causal", False),
    ],
)
def test_floor_app_draws_as_many_charts_as_the_playground(n, mask, all_heads):
    params = {"text": words(n), "max_tokens": "256", "mask": mask}
    if all_heads:
        params["all_heads"] = "1"
    playground = run("app.py", params)
    floor = run(
        "bench/floor_app.py",
        {
            "n": str(n),
            "d_model": "16",
            "heads": "2",
            "masked": str(int(mask != "none")),
            "all_heads": str(int(all_heads)),
        },
    )
    drawn = len(playground.get("plotly_chart"))
    assert drawn == len(floor.get("plotly_chart"))
    # 11 charts without a mask, 13 with one; one fewer when a large all-heads figure waits for its switch
    assert drawn == 11 + 2 * (mask != "none") - (n > 128 and not all_heads)


def test_one_chart_page_draws_one_heatmap():
    at = run("bench/one_chart_app.py", {})
    charts = at.get("plotly_chart")
    assert len(charts) == 1 and '"heatmap"' in charts[0].proto.spec
