"""Practice pages in a real browser (issue 19): a predict-then-reveal on the guided path in Japanese,
its progress restored from the address after a reload, and a Japanese worksheet downloaded and read.

Screenshots: artifacts/screenshots/practice_path_ja_{question,revealed}.png, practice_worksheet_ja.png;
the downloaded PDF: artifacts/worksheet/browser-ja.pdf (looked at by eye).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from pypdf import PdfReader
from st_browser import (
    ROOT,
    assert_no_exception,
    open_lab,
    screenshot,
    wait_for_app_run,
    wait_for_charts,
    wait_for_path,
)

from attention_core.exercise import generate_exercise
from attention_ui.i18n import translate

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def test_path_predict_reveal_reload_and_japanese_worksheet(page: Page, streamlit_server: str) -> None:
    open_lab(page, streamlit_server, "path", "ja")
    expect(page.get_by_role("heading", level=1)).to_contain_text(translate("ja", "path.path_title"))
    ex = generate_exercise(0)
    # Predict the shape of QKᵀ: nothing is drawn before the answer.
    expect(page.locator(".st-key-pr_box_path_shape")).to_be_visible()
    assert page.locator(".st-key-path_chart_scores").count() == 0
    screenshot(page, "practice_path_ja_question")
    for suffix, value in (("r", ex.n), ("c", ex.n + 1)):  # a wrong prediction
        box = page.locator(f".st-key-pr_in_path_shape_{suffix} input")
        box.fill(str(value))
        box.press("Enter")
        wait_for_app_run(page)
    page.locator(".st-key-pr_check_path_shape button").click()
    wait_for_app_run(page)
    wait_for_charts(page, minimum=1)
    wrong = translate("ja", "practice.wrong", mine=f"{ex.n} × {ex.n + 1}", answer=f"{ex.n} × {ex.n}")
    expect(page.get_by_text(wrong)).to_be_visible()
    assert_no_exception(page)
    screenshot(page, "practice_path_ja_revealed")
    expect(page).to_have_url(re.compile(r"answers=\d+x\d+"))
    # The address holds the answer: a reload shows the verdict and the map again, no question.
    page.reload()
    wait_for_app_run(page)
    wait_for_charts(page, minimum=1)
    expect(page.get_by_text(wrong)).to_be_visible()
    assert page.locator(".st-key-pr_box_path_shape").count() == 0

    # The worksheet page, in Japanese: download the PDF built on click and read it.
    page.locator('[data-testid="stSidebarNav"] a[href$="/worksheet"]').click()
    wait_for_path(page, "worksheet")
    wait_for_app_run(page)
    expect(page.get_by_role("heading", level=1)).to_contain_text(translate("ja", "worksheet.ws_title"))
    screenshot(page, "practice_worksheet_ja")
    with page.expect_download() as info:
        page.locator(".st-key-worksheet_download button").click()
    download = info.value
    assert download.suggested_filename == "attention-worksheet-ja-seeds-0-2.pdf"
    out = ROOT / "artifacts" / "worksheet"
    out.mkdir(parents=True, exist_ok=True)
    target: Path = out / "browser-ja.pdf"
    download.save_as(target)
    reader = PdfReader(io.BytesIO(target.read_bytes()))
    assert len(reader.pages) == 6  # 3 exercises, then 3 answer pages
    first = reader.pages[0].extract_text()
    assert translate("ja", "worksheet.exercise_heading", number=1, total=3) in first
    assert translate("ja", "worksheet.name_field") in first
    key = reader.pages[3].extract_text()
    assert translate("ja", "worksheet.answer_heading", sheet=1, number=1) in key
