"""Predict-then-reveal, the guided path and the worksheet page, driven through app.py with AppTest.

Right answers are worked out here from the trace's numbers with plain loops (never through
``attention_core.predict``, which the pages use).
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from attention_core import worked_example_trace
from attention_core.exercise import generate_exercise
from attention_ui.i18n import translate
from attention_ui.worksheet import worksheet_view
from tests.apptest_pages import charts, messages, no_exception, open_page, texts
from tests.test_app_hostile import BY_ID, MD_LIVE

PATH, WORKSHEET, MASKS, COST = (
    "app_pages/path.py",
    "app_pages/worksheet.py",
    "app_pages/masks.py",
    "app_pages/cost.py",
)
EXAMPLE = dict(pg_preset="example", pr_mode=True)


def boxes(at: AppTest) -> set[str]:
    """The qids of the questions waiting for an answer."""
    return {b.key.removeprefix("pr_check_") for b in at.button if b.key and b.key.startswith("pr_check_")}


def naive_winners(scores_row, allowed_row) -> set[int]:
    best = max(s for s, ok in zip(scores_row, allowed_row, strict=True) if ok)
    return {j for j, (s, ok) in enumerate(zip(scores_row, allowed_row, strict=True)) if ok and s == best}


def answer_shape(at: AppTest, qid: str, rows: int, cols: int) -> AppTest:
    at.number_input(key=f"pr_in_{qid}_r").set_value(rows)
    at.number_input(key=f"pr_in_{qid}_c").set_value(cols)
    at.button(key=f"pr_check_{qid}").click().run()
    no_exception(at)
    return at


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_playground_shape_prediction_right_then_map(lang):
    tr = worked_example_trace()
    at = open_page(lang=lang, **EXAMPLE)
    assert boxes(at) == {"pg_raw"} and "pg_chart_raw" not in charts(at)  # held back
    assert "pg_chart_x" in charts(at)  # steps without a question are drawn
    assert "pg_chart_scaled" not in charts(at)  # a later map would show the shape: it waits too
    assert "pg_chart_all_heads" in charts(at)  # beyond the per-head steps nothing waits
    answer_shape(at, "pg_raw", tr.n, tr.n)
    assert "pg_chart_raw" in charts(at) and "pg_raw" not in boxes(at)
    right = translate(lang, "practice.right", mine=f"{tr.n} × {tr.n}")
    assert [s.value for s in at.success] == [right]


def test_playground_shape_prediction_wrong_is_marked_wrong():
    tr = worked_example_trace()
    at = answer_shape(open_page(lang="ja", **EXAMPLE), "pg_raw", tr.n, tr.Q.shape[2] + tr.n)
    assert "pg_chart_raw" in charts(at)
    assert any(e.value.startswith("不正解") and f"{tr.n} × {tr.n}" in e.value for e in at.error)


def test_playground_winner_prediction_right_and_wrong():
    tr = worked_example_trace()
    at = open_page(**EXAMPLE)
    at.button(key="pr_skip_pg_raw").click().run()  # shown without predicting: no verdict
    assert "pg_chart_raw" in charts(at) and not at.success and not at.error
    assert "pg_chart_scaled" in charts(at) and boxes(at) == {"pg_mask"}
    at.button(key="pr_skip_pg_mask").click().run()
    assert "pg_softmax" in boxes(at) and "pg_chart_weights" not in charts(at)
    prompt = next(m.value for m in at.markdown if "largest attention weight" in m.value)
    row = int(prompt.split("row ")[1].split(" ")[0])
    winners = naive_winners(tr.scores_masked[0][row].tolist(), tr.mask[row].tolist())
    loser = next(j for j in range(tr.n) if j not in winners and tr.mask[row, j])
    at.selectbox(key="pr_in_pg_softmax").set_value(loser)
    at.button(key="pr_check_pg_softmax").click().run()
    assert "pg_chart_weights" in charts(at)
    assert any(e.value.startswith("Not right") for e in at.error)
    # a new session answering right
    at = open_page(**EXAMPLE)
    for qid in ("pg_raw", "pg_mask"):
        at.button(key=f"pr_skip_{qid}").click().run()
    at.selectbox(key="pr_in_pg_softmax").set_value(min(winners))
    at.button(key="pr_check_pg_softmax").click().run()
    assert any(s.value.startswith("Right") for s in at.success)


def test_playground_asks_nothing_by_default_nor_in_presenter_mode():
    at = open_page(pg_preset="example")
    assert not boxes(at) and "pg_chart_raw" in charts(at)
    at = open_page(pg_preset="example", pg_present=True, pg_step=3)
    assert not boxes(at) and "pg_chart_raw" in charts(at)
    # presenter mode asks only when practice mode was switched on before (as its help says)
    at = open_page(pg_preset="example", pg_present=True, pg_step=3, pr_mode=True)
    assert boxes(at) == {"pg_raw"} and "pg_chart_raw" not in charts(at)


def test_missing_prediction_asks_again():
    at = open_page(**EXAMPLE)
    at.button(key="pr_check_pg_raw").click().run()
    assert translate("en", "practice.missing") in messages(at)["warning"]
    assert "pg_chart_raw" not in charts(at)


def test_masks_lab_predictions_then_maps():
    at = open_page(MASKS, pr_mode=True)
    assert boxes(at) == {"masks_mask", "masks_sums"} and "mask" not in charts(at, "masks_chart_")
    prompt = next(m.value for m in at.markdown if "does the mask remove" in m.value)
    row = int(prompt.split("row ")[1].split(" ")[0])
    n = 8  # the default sentence: 6 words and 2 [PAD]s; causal with padding hides later keys and pads
    removed = sorted({j for j in range(n) if j > row or j >= 6})
    at.multiselect(key="pr_in_masks_mask").set_value(removed)
    at.button(key="pr_check_masks_mask").click().run()
    assert "mask" not in charts(at, "masks_chart_")  # one question still open
    at.radio(key="pr_in_masks_sums").set_value(False)
    at.button(key="pr_check_masks_sums").click().run()
    assert {"mask", "masked_scores", "weights"} <= set(charts(at, "masks_chart_"))
    assert len(at.success) == 1 and len(at.error) == 1  # removed keys right, "does not sum to 1" wrong


def test_cost_lab_doubling_prediction():
    at = open_page(COST, lang="ja", pr_mode=True)
    assert boxes(at) == {"cost_double"} and not charts(at)
    at.radio(key="pr_in_cost_double").set_value(4)
    at.button(key="pr_check_cost_double").click().run()
    assert at.success[0].value == translate("ja", "practice.right", mine="× 4")
    assert "memory" in charts(at, "cost_chart_")


@pytest.mark.parametrize("text_id", ["markdown", "plotly_link", "img_pwned", "latex", "streamlit_directives"])
def test_hostile_tokens_in_predictions_stay_text(text_id):
    at = open_page(MASKS, pr_mode=True, masks_text=BY_ID[text_id]["text"])
    # every hostile sentence is tokenized (cut to the lab's 16 tokens), so the question must be asked:
    # a missing box is a failure, not a reason to pass silently
    assert "masks_mask" in boxes(at), boxes(at)
    at.multiselect(key="pr_in_masks_mask").set_value([0])
    at.button(key="pr_check_masks_mask").click().run()
    no_exception(at)
    shown = texts(at) + "\n".join(s.value for s in at.success)
    assert not MD_LIVE.search(shown)


# --- the guided path -------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_path_answers_go_into_the_url_and_come_back(lang):
    ex = generate_exercise(11)
    at = open_page(PATH, lang=lang, params={"seed": "11"})
    assert at.title[0].value == translate(lang, "path.path_title")
    assert boxes(at) == {"path_shape"}
    answer_shape(at, "path_shape", ex.n, ex.n)
    assert "path_chart_scores" in charts(at)
    at.button(key="path_next").click().run()
    assert boxes(at) == {"path_winner"}
    # the middle row, numbered from 1 like the worksheet's rows
    assert translate(lang, "practice.q_winner", row=ex.n // 2 + 1) in [m.value for m in at.markdown]
    wrong = next(
        j for j in range(ex.n) if j not in naive_winners(ex.scores[ex.n // 2].tolist(), [True] * ex.n)
    )
    at.selectbox(key="pr_in_path_winner").set_value(wrong)
    at.button(key="pr_check_path_winner").click().run()
    params = {
        k: at.query_params[k][0] if isinstance(at.query_params[k], list) else at.query_params[k]
        for k in at.query_params
    }
    assert params["seed"] == "11" and params["stop"] == "2"
    assert params["answers"] == f"{ex.n}x{ex.n}~{wrong}"
    # a reload (a new session with the same address) restores both verdicts and the stop
    back = open_page(PATH, lang=lang, params=params)
    assert not boxes(back) and "path_chart_softmax" in charts(back)
    winners = naive_winners(ex.scores[ex.n // 2].tolist(), [True] * ex.n)
    # keys are shown from 1, as the worksheet prints the same exercise (issue 24); the URL keeps indices
    wrong_text = translate(
        lang, "practice.wrong", mine=str(wrong + 1), answer=", ".join(str(w + 1) for w in sorted(winners))
    )
    assert [e.value for e in back.error] == [wrong_text]
    # stop 2 asks 1 of the path's 5 questions; the mask stop asks 2 (the count beside "of 4 stops")
    assert translate(lang, "path.path_stop_questions", count=1, all=5) in [c.value for c in back.caption]
    back.button(key="path_back").click().run()
    assert "path_chart_scores" in charts(back) and len(back.success) == 1


def test_path_summary_counts_right_answers():
    ex = generate_exercise(0)
    params = {"seed": "0", "stop": "5", "answers": f"{ex.n}x{ex.n}~s~~y~8"}
    at = open_page(PATH, params=params)
    assert translate("en", "path.summary_line", right=2, total=5) in texts(at)
    table = at.dataframe[0].value
    marks = [translate("en", f"path.mark_{m}") for m in ("right", "skipped", "open", "right", "wrong")]
    assert [cell.split(" ", 1)[1] for cell in table.iloc[:, 2]] == marks


def test_path_ignores_a_malformed_url():
    at = open_page(PATH, params={"seed": "x", "stop": "99", "answers": "<b>~~~"})
    assert boxes(at) == {"path_shape"}


# --- the worksheet page ----------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_worksheet_page_previews_exercise_one(lang):
    at = open_page(WORKSHEET, lang=lang, worksheet_first_seed=42)
    ex = generate_exercise(42)
    assert at.title[0].value == translate(lang, "worksheet.ws_title")
    assert translate(lang, "worksheet.ws_preview", seed=42) in [s.value for s in at.header]
    q_table = at.dataframe[0].value
    assert q_table.to_numpy().tolist() == ex.Q.tolist()
    assert at.get("download_button")
    assert at.selectbox(key="worksheet_lang").value == lang  # the worksheet starts in the page's language


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_worksheet_preview_writes_the_tasks_as_the_pdf_does(lang):
    """Issue 42, point 15: the preview said 「[i, j) 成分」 where the PDF says [i, j]; only the brackets
    of an exponent (e^[x − max]) become parentheses on the page."""
    at = open_page(WORKSHEET, lang=lang)
    shown = [m.value.replace("\\", "") for m in at.markdown]
    scores = translate(lang, "worksheet.task_scores").replace("^T", "ᵀ")
    assert scores in shown and "[i, j]" in scores
    assert not any("[i, j)" in text for text in shown)
    assert worksheet_view.on_paper("e^[x − max] and e^x, QK^T [i, j]") == "e^(x − max) and eˣ, QKᵀ [i, j]"


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_worksheet_page_explains_a_too_large_class(lang):
    at = open_page(WORKSHEET, lang=lang, worksheet_students=60, worksheet_exercises=4)
    assert messages(at)["error"] == [
        translate(lang, "worksheet.err_total", hi=180, students=60, exercises=4, total=240)
    ]
    assert not at.get("download_button")
