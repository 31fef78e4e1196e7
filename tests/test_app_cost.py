"""The cost lab page driven through app.py with AppTest: tables against hand arithmetic, every main
control changed, the live measurement (tiny n) only on request and kept across reruns, Japanese."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from attention_ui.i18n import translate
from tests.apptest_pages import captions, chart_spec, charts, go, no_exception, open_page, z

PAGE = "app_pages/cost.py"


# AppTest does not expose a dataframe's key, so each table is found by a column only it has.
TABLE_COLUMNS = {
    "cost_table_notes": "cost.col_notes",
    "cost_table_extended": "cost.col_gpus",
    "cost_table_measure": "cost.col_direct_peak",
}


def frame_by_key(at: AppTest, key: str, lang: str = "en"):
    column = translate(lang, TABLE_COLUMNS[key])
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table {key}")


def test_notes_table_matches_hand_arithmetic() -> None:
    at = open_page(PAGE)
    no_exception(at)
    assert at.title[0].value == translate("en", "cost.title")
    frame = frame_by_key(at, "cost_table_notes")
    assert list(frame["n"]) == [2048, 8192, 32768, 131072, 1_000_000]
    assert list(frame[translate("en", "cost.col_bytes")]) == [2 * n * n for n in frame["n"]]
    assert list(frame[translate("en", "cost.col_binary")]) == [
        "8 MiB",
        "128 MiB",
        "2 GiB",
        "32 GiB",
        "1.82 TiB",
    ]
    assert list(frame[translate("en", "cost.col_decimal")])[0] == "8.39 MB"
    assert list(frame[translate("en", "cost.col_notes")]) == ["8 MB", "128 MB", "2 GB", "32 GB", "1.9 TB"]
    note = next(i.value for i in at.info if "1.9 TB" in i.value)
    assert "2.00 TB" in note and "1.82 TiB" in note
    assert not at.get("status")  # nothing measured before the button is pressed
    assert translate("en", "cost.measure_hint") in [c.value for c in at.caption]


def test_extended_controls_multiply_the_memory() -> None:
    at = open_page(PAGE, cost_dtype="fp32", cost_heads=8, cost_batch=4, cost_layers=12)
    no_exception(at)
    frame = frame_by_key(at, "cost_table_extended")
    elements = frame[translate("en", "cost.col_elements")]
    assert list(elements) == [8 * 4 * 12 * n * n for n in frame["n"]]
    # 2048² · 4 B · 8 · 4 · 12 = 6,442,450,944 B = 6 GiB
    assert frame[translate("en", "cost.col_binary")][0] == "6 GiB"
    mem = chart_spec(at, "cost_chart_memory")
    fp32 = mem["data"][0]
    assert fp32["y"][0] == 128 * 128 * 4 * 8 * 4 * 12
    assert len(mem["data"]) == 3  # FP32, FP16/BF16, FP8


def test_flops_chart_follows_d_k() -> None:
    at = open_page(PAGE)
    at.number_input(key="cost_dk").set_value(128).run()
    no_exception(at)
    spec = chart_spec(at, "cost_chart_flops")
    n = spec["data"][0]["x"][0]
    assert spec["data"][0]["y"][0] == 2 * n * n * 128  # QKᵀ: 2 FLOPs per multiply-add
    assert spec["data"][-1]["y"][0] == 2 * (2 * n * n * 128) + 6 * n * n  # + A·V + scale/softmax
    assert "4.00" in " ".join(m.value for m in at.markdown)


def test_live_measurement_runs_on_request_and_survives_reruns() -> None:
    at = open_page(PAGE, cost_max_n=256)
    at.button(key="cost_run").click().run()
    no_exception(at)
    frame = frame_by_key(at, "cost_table_measure")
    assert list(frame["n"]) == [128, 256]
    results = at.session_state["cost_results"]
    direct = [p.direct for p in results]
    tiled = [p.tiled for p in results]
    assert [r.n for r in direct] == [128, 256] and [r.n for r in tiled] == [128, 256]
    assert {r.method for r in direct} == {"direct"} and {r.method for r in tiled} == {"tiled"}
    # The n² law: doubling n multiplies the direct peak by about 4 (3.5 … 4.5 leaves room for overheads).
    assert 3.5 < direct[1].peak_bytes / direct[0].peak_bytes < 4.5
    assert tiled[1].peak_bytes < direct[1].peak_bytes
    assert chart_spec(at, "cost_chart_peak")["data"][0]["x"] == [128, 256]
    # A rerun caused by another control keeps the results (no new measurement needed).
    at.toggle(key="cost_causal").set_value(True).run()
    no_exception(at)
    assert at.session_state["cost_results"] == results
    assert list(frame_by_key(at, "cost_table_measure")["n"]) == [128, 256]
    at.button(key="cost_clear").click().run()
    assert at.session_state["cost_results"] == []


def test_tiled_check_agrees_with_direct() -> None:
    at = open_page(PAGE, cost_check_n=256, cost_check_block=32)
    no_exception(at)
    diff = float(at.metric[0].value)
    assert diff < 1e-10
    assert at.metric[1].value == "64 / 64"  # (256 / 32)² tiles, none skipped without a mask
    at.toggle(key="cost_causal").set_value(True).run()
    no_exception(at)
    assert at.metric[1].value == "36 / 64"  # 8·9/2 tiles on or below the diagonal
    grid = chart_spec(at, "cost_chart_tiles")["data"][0]["z"]
    assert sum(map(sum, grid)) == 36


def test_japanese_page() -> None:
    at = open_page(PAGE)
    at.radio(key="lang").set_value("ja").run()  # the language switch in app.py's sidebar
    no_exception(at)
    assert at.title[0].value == translate("ja", "cost.title")
    assert [e.label for e in at.expander] == [
        translate("ja", f"cost.method_{m}_title") for m in ("flash", "gqa", "linear", "ring")
    ]


def test_tables_on_request() -> None:
    at = open_page(PAGE)
    before = len(at.dataframe)
    at.toggle(key="cost_tables").set_value(True).run()
    no_exception(at)
    assert len(at.dataframe) == before + 4  # memory chart, FLOPs chart, tile grid, ring row state
    tiles = next(df.value for df in at.dataframe if "#" in df.value.columns)
    assert tiles.shape == (8, 9)  # 512 / 64 tiles, plus the row label column


def metric(at: AppTest, key: str, lang: str = "en") -> str:
    """The value of the last metric with this label (the tile count label is also section 4's)."""
    label = translate(lang, key)
    return [m.value for m in at.metric if m.label == label][-1]


def test_sliding_window_section() -> None:
    at = open_page(PAGE, cost_win_n=512, cost_window=32, cost_win_block=64)
    no_exception(at)
    assert float(metric(at, "cost.win_diff")) <= 1e-10
    assert float(metric(at, "cost.win_model_diff")) > 1e-3  # n > w: a different model
    # query tile q sees key tiles from the one holding q·64 − 31 up to q: tile 0 one, the others two
    assert metric(at, "cost.check_tiles") == f"{1 + 2 * 7} / 64"
    grid = chart_spec(at, "cost_chart_window_tiles")["data"][0]["z"]
    assert grid[3] == [0, 0, 1, 1, 0, 0, 0, 0]
    needed = sum(min(i + 1, 32) for i in range(512))
    assert any(f"{needed:,}" in m.value for m in at.markdown)
    assert not at.session_state["cost_window_results"]  # nothing timed before the button
    at2 = open_page(PAGE, cost_win_n=256, cost_window=256)
    assert translate("en", "cost.win_same", w=256) in [m.value for m in at2.markdown]


def test_window_timing_on_request(monkeypatch) -> None:
    from attention_core.labs import efficient

    monkeypatch.setattr(efficient, "WINDOW_SWEEP_NS", (128, 256))
    at = open_page(PAGE, cost_window=16)
    at.button(key="cost_win_run").click().run()
    no_exception(at)
    points = at.session_state["cost_window_results"]
    assert [p.n for p in points] == [128, 256] and points[0].window == 16
    assert chart_spec(at, "cost_chart_window_time")["layout"]["xaxis"]["type"] == "log"
    at.run()  # kept across reruns
    assert len(at.session_state["cost_window_results"]) == 2


def test_linear_attention_section() -> None:
    at = open_page(PAGE, cost_text="a b c d e")
    no_exception(at)
    assert float(metric(at, "cost.lin_diff")) <= 1e-10
    assert metric(at, "cost.lin_state") == "16 × 16"
    row = chart_spec(at, "cost_chart_linear_row")
    assert [len(tr["y"]) for tr in row["data"]] == [5, 5]  # the last query sees all five keys
    assert all(abs(sum(tr["y"]) - 1) < 1e-9 for tr in row["data"])
    exact = next(
        df.value for df in at.dataframe if translate("en", "cost.col_same_model") in df.value.columns
    )
    assert list(exact[translate("en", "cost.col_same_model")]) == [
        translate("en", "cost.yes"),
        translate("en", "cost.no"),
        translate("en", "cost.no"),
    ]
    at.text_area(key="cost_text").input("  ").run()
    no_exception(at)
    assert translate("en", "cost.err_empty") in [e.value for e in at.error]


def test_new_sections_in_japanese() -> None:
    at = open_page(PAGE, lang="ja")
    no_exception(at)
    headers = [h.value for h in at.header]
    assert translate("ja", "cost.sec_window") in headers and translate("ja", "cost.sec_linear") in headers


def test_live_measurement_progress_counts_the_sizes(monkeypatch) -> None:
    """cost.measure_progress: the bar's text after each size (AppTest sees only the finished status,
    so the texts are recorded as kit.progress forms them)."""
    from attention_ui import kit

    texts: list[str] = []
    original = kit.progress

    def recording(steps, total, *, step, **kwargs):
        def spy(done, point):
            texts.append(step(done, point))
            return texts[-1]

        return original(steps, total, step=spy, **kwargs)

    monkeypatch.setattr(kit, "progress", recording)
    at = open_page(PAGE, cost_max_n=256)
    at.button(key="cost_run").click().run()
    no_exception(at)
    # sizes 128 and 256: none done (the first size named), then each size as it finishes
    assert texts == [
        "0 of 2 sizes done (n = 128)",
        "1 of 2 sizes done (n = 128)",
        "2 of 2 sizes done (n = 256)",
    ]


def test_the_cost_labs_linear_sentence_is_the_learners():
    at = open_page("app_pages/cost.py")
    assert at.text_area(key="cost_text").value == translate("en", "cost.default_text")
    assert translate("en", "app.sentence_own") in captions(at)
    n_own = z(charts(at)["cost_chart_softmax_weights"]).shape
    at = open_page(params={"text": "one two three"})
    go(at, "app_pages/cost.py")
    assert z(charts(at)["cost_chart_softmax_weights"]).shape == (3, 3) != n_own
    assert translate("en", "app.sentence_yours") in captions(at)
