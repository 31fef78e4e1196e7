"""Issue 18 at 1920×1080 and 1366×768 in Japanese, one page load each: raw and
scaled scores drawn on one colour range until the switch is turned off, the copy-link button, one
export menu whose CSV holds every head when asked, and the learner's sentence carried into a lab."""

from __future__ import annotations

import csv
import io
import re
from urllib.parse import parse_qs, quote_plus, urlparse

import pytest
from playwright.sync_api import Browser, Page, expect
from st_browser import (
    assert_no_exception,
    new_context,
    screenshot,
    wait_for_app_run,
    wait_for_charts,
    wait_for_path,
)

from attention_ui.i18n import translate

pytestmark = pytest.mark.browser

SENTENCE = "犬が猫を追いかけた"
RANGE_JS = """(name) => {
  const gd = document.querySelector(`.st-key-pg_chart_${name} .js-plotly-plot`);
  const t = gd._fullData[0];
  return [t.zmin, t.zmax];
}"""


def colour_range(page: Page, name: str) -> tuple[float, float]:
    return tuple(page.evaluate(RANGE_JS, name))


def wait_for_ranges(page: Page, shared: bool) -> None:
    """Until Plotly has drawn the run's figures: raw and scaled on one range, or scaled on a smaller one."""
    page.wait_for_function(
        f"""() => {{
          const r = (n) => document.querySelector(`.st-key-pg_chart_${{n}} .js-plotly-plot`)?._fullData?.[0];
          const a = r('raw'), b = r('scaled');
          return a && b && ({"a.zmax === b.zmax" if shared else "0 < b.zmax && b.zmax < a.zmax"});
        }}"""
    )


@pytest.mark.parametrize("size", [(1920, 1080), (1366, 768)], ids=["1920", "1366"])
def test_shared_scale_copy_link_export_and_the_sentence_in_a_lab(
    browser: Browser, streamlit_server: str, size: tuple[int, int]
) -> None:
    context = new_context(browser, width=size[0], height=size[1], locale="ja-JP")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=streamlit_server)
    page = context.new_page()
    page.goto(f"{streamlit_server}/?lang=ja&seed=3")
    wait_for_app_run(page)
    box = page.locator('[data-testid="stMain"] .st-key-pg_text textarea')
    box.fill(SENTENCE)
    box.press("Control+Enter")
    wait_for_app_run(page)
    wait_for_charts(page, 10)

    # steps 3 and 4 on one colour range (the raw scores' largest |score|), each its own when off
    wait_for_ranges(page, shared=True)
    raw, scaled = colour_range(page, "raw"), colour_range(page, "scaled")
    assert raw == scaled and raw[0] == -raw[1] > -1e9, (raw, scaled)
    page.locator(".st-key-pg_shared_scale label").first.click()
    wait_for_app_run(page)
    wait_for_charts(page, 10)
    wait_for_ranges(page, shared=False)
    alone = colour_range(page, "scaled")
    assert colour_range(page, "raw") == raw and 0 < alone[1] < raw[1], (raw, alone)
    assert "shared=0" in page.url

    # the copy-link button copies the address, which holds the view
    page.locator(".al-copy-link").click()
    expect(page.locator(".al-copy-status")).to_have_text(translate("ja", "playground.share_done"))
    copied = page.evaluate("navigator.clipboard.readText()")
    query = parse_qs(urlparse(copied).query)
    assert copied == page.url and query["text"] == [SENTENCE] and query["shared"] == ["0"]

    # one export menu: no download button on the page itself; CSV of every head from the menu
    assert page.locator('[data-testid="stMain"] [data-testid="stDownloadButton"]').count() == 0
    page.locator('[data-testid="stPopover"] button').first.click()
    menu = page.locator('[data-testid="stPopoverBody"]')
    # CSV, JSON, npz; the offline lesson, the SCORM package and the quiz file (issue 45)
    expect(menu.locator('[data-testid="stDownloadButton"]')).to_have_count(6)
    menu.locator(".st-key-pg_export_all").get_by_text(translate("ja", "playground.export_all_heads")).click()
    wait_for_app_run(page)
    expect(menu.locator(".st-key-pg_export_all input").nth(1)).to_be_checked()
    with page.expect_download() as info:
        menu.locator(".st-key-pg_dl_csv button").click()
    rows = list(csv.reader(io.StringIO(info.value.path().read_bytes().decode("utf-8-sig"))))
    heads = sorted({r[0] for r in rows[1:]})
    assert rows[0][:2] == ["head", "query"] and heads == ["0", "1"], rows[:2]
    n = len(rows[0]) - 2
    assert len(rows) == 1 + 2 * n and any("猫" in r[1] for r in rows[1:])
    screenshot(page, f"export_menu_{size[0]}_ja", full=False)
    # the same menu gives the view as one offline lesson (issue 45)
    with page.expect_download() as info:
        menu.get_by_role("button", name=translate("ja", "takehome.download_lesson")).click()
    lesson = info.value.path().read_text(encoding="utf-8")
    assert info.value.suggested_filename == "attention_lesson_ja.html"
    assert "<html lang='ja'>" in lesson and lesson.count("data-figure=") >= 11 and "猫" in lesson
    menu.locator(".st-key-pg_tk_quiz").scroll_into_view_if_needed()
    screenshot(page, f"export_menu_course_{size[0]}_ja", full=False)
    page.keyboard.press("Escape")

    # the sentence goes with the learner into the masks lab, and into its address
    page.locator('[data-testid="stSidebarNav"] a[href$="/masks"]').click()
    wait_for_path(page, "masks")
    wait_for_app_run(page)
    wait_for_charts(page)
    expect(page.locator('[data-testid="stSidebar"] .st-key-masks_text textarea')).to_have_value(SENTENCE)
    expect(page).to_have_url(re.compile(r"[?&]text=" + re.escape(quote_plus(SENTENCE))))
    screenshot(page, f"masks_carried_sentence_{size[0]}_ja", full=False)
    assert_no_exception(page)
    context.close()
