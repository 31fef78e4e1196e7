"""The "Why √d_k" page driven through app.py with Streamlit's AppTest (no browser).

Expected numbers are computed here from first principles (softmax by hand, powers of two), not
read back from the page's own helpers.
"""

from __future__ import annotations

import math
import time

import pytest
from streamlit.testing.v1 import AppTest

from attention_ui.i18n import translate
from tests.apptest_pages import charts, open_page

PAGE = "app_pages/scaling.py"


@pytest.fixture(scope="module")
def default_page() -> AppTest:
    return open_page(PAGE)


def test_page_loads_with_every_chart(default_page: AppTest) -> None:
    at = default_page
    assert at.title[0].value == translate("en", "scaling.title")
    found = charts(at, "scaling_chart_")
    assert len(found) == 7
    assert not at.error
    # Default range 1 … 256: one measured point per power of two.
    var = next(s for s in found.values() if s["data"][0].get("name") == "theory: d_k")
    assert var["data"][1]["x"] == [2**i for i in range(9)]
    # Theory line y = d_k; the measurements lie within 15 % of it at N = 2000.
    for d_k, v in zip(var["data"][1]["x"], var["data"][1]["y"], strict=True):
        assert v == pytest.approx(d_k, rel=0.15)


def test_default_row_metrics_match_a_hand_softmax(default_page: AppTest) -> None:
    at = default_page
    scores = [8, 4, 2, 0, -2, -6]
    z = sum(math.exp(s) for s in scores)
    p = [math.exp(s) / z for s in scores]
    assert at.metric[0].value == f"{max(p):.3f}"
    assert at.metric[1].value == f"{-sum(x * math.log(x) for x in p):.3f}"


def test_changing_the_experiment_controls() -> None:
    at = open_page(PAGE)
    at.select_slider(key="scaling_dk_range").set_range(4, 64).run()
    at.slider(key="scaling_keys").set_value(8).run()
    at.number_input(key="scaling_samples").set_value(600).run()
    at.number_input(key="scaling_seed").set_value(7).run()
    assert not at.exception and not at.error
    specs = list(charts(at, "scaling_chart_").values())
    var = specs[0]
    assert var["data"][1]["x"] == [4, 8, 16, 32, 64]
    # The max-weight chart's "uniform" reference moved to 1/8.
    max_w = next(s for s in specs if len(s["data"]) == 3 and s["data"][2]["y"][0] < 0.5)
    assert max_w["data"][2]["y"] == [0.125, 0.125]
    # The histogram d_k follows the new range (64 is still in it).
    assert at.select_slider(key="scaling_hist_dk").value == 64
    at.select_slider(key="scaling_hist_dk").set_value(4).run()
    assert not at.exception
    assert any(
        "d_k = 4" in (s["layout"].get("title", {}) or {}).get("text", "")
        for s in charts(at, "scaling_chart_").values()
    )


def test_a_new_seed_draws_new_numbers() -> None:
    at = open_page(PAGE)
    before = list(charts(at, "scaling_chart_").values())[0]["data"][1]["y"]
    at.number_input(key="scaling_seed").set_value(1).run()
    after = list(charts(at, "scaling_chart_").values())[0]["data"][1]["y"]
    assert before != after


def test_largest_settings_stay_bounded_and_say_so() -> None:
    at = open_page(PAGE)
    at.select_slider(key="scaling_dk_range").set_range(1, 1024).run()
    at.slider(key="scaling_keys").set_value(64).run()
    start = time.perf_counter()
    at.number_input(key="scaling_samples").set_value(20_000).run()
    elapsed = time.perf_counter() - start
    assert not at.exception and not at.error
    assert any("samples per d_k instead of 20000" in i.value for i in at.info)
    assert elapsed < 60  # generous: the box is shared, the point is "not minutes"


def test_one_row_widget_validates_and_divides() -> None:
    at = open_page(PAGE)
    at.text_input(key="scaling_row").set_value("1, two, 3").run()
    assert not at.exception
    assert any("“two”" in e.value for e in at.error)
    at.text_input(key="scaling_row").set_value("0 0 0 0").run()
    assert not at.error
    assert at.metric[0].value == "0.250"
    assert at.metric[1].value == f"{math.log(4):.3f}"
    # Two scores 8 and 0 divided by 8: weights e/(e+1) and 1/(e+1).
    at.text_input(key="scaling_row").set_value("8, 0").run()
    at.slider(key="scaling_divisor").set_value(8.0).run()
    assert at.metric[0].value == f"{math.e / (math.e + 1):.3f}"
    p = math.e / (math.e + 1)
    # ‖diag(p) − ppᵀ‖_F for two classes: every entry is ±p(1−p), so the norm is 2p(1−p).
    assert at.metric[2].value == f"{2 * p * (1 - p):.3g}"
    at.text_input(key="scaling_row").set_value("1").run()
    assert any("1 numbers given" in e.value for e in at.error)


def test_tables_on_request() -> None:
    at = open_page(PAGE)
    assert len(at.dataframe) == 0
    at.toggle(key="scaling_tables").set_value(True).run()
    assert not at.exception
    assert len(at.dataframe) == 5


def test_japanese_page() -> None:
    at = open_page(PAGE, lang="ja")
    assert at.title[0].value == translate("ja", "scaling.title")
    assert at.header[0].value == translate("ja", "scaling.h_variance")
    at.text_input(key="scaling_row").set_value("1 x").run()
    assert any("「x」" in e.value for e in at.error)
