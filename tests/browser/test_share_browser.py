"""Sharing what the learner sees, in a real browser: the copy-link button, the address that holds the
view (a copied link shows the same weights in a new browser), the playground's one export menu (a CSV
of every head, the offline lesson), and the learner's sentence carried into the labs they open from the
sidebar and into each lab's own address, also when a teacher's link in Japanese is opened in an
English browser. (Issues 4, 18 and 24; the raw and scaled scores' shared colour range is checked in the
same page session as the export.)"""

from __future__ import annotations

import csv
import io
import re
from urllib.parse import parse_qs, quote, quote_plus, urlparse

import pytest
from playwright.sync_api import Browser, Page, expect
from st_browser import (
    LONG_MS,
    assert_no_exception,
    current_url,
    new_context,
    open_at,
    pg_chart,
    screenshot,
    tick_labels,
    wait_for_app_run,
    wait_for_charts,
    wait_for_path,
    z_values,
)

from attention_ui.i18n import translate

pytestmark = pytest.mark.browser

SENTENCE_JA = "犬が猫を追いかけた"
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
    wait_for_app_run(page, timeout_ms=LONG_MS)  # a first view: on a busy machine it may be slow
    box = page.locator('[data-testid="stMain"] .st-key-pg_text textarea')
    box.fill(SENTENCE_JA)
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
    assert copied == page.url and query["text"] == [SENTENCE_JA] and query["shared"] == ["0"]

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
    expect(page.locator('[data-testid="stSidebar"] .st-key-masks_text textarea')).to_have_value(SENTENCE_JA)
    expect(page).to_have_url(re.compile(r"[?&]text=" + re.escape(quote_plus(SENTENCE_JA))))
    screenshot(page, f"masks_carried_sentence_{size[0]}_ja", full=False)
    assert_no_exception(page)
    context.close()


LINK_SENTENCE = "hello world again today"


def test_a_shared_links_sentence_goes_on_into_the_sidebars_labs(
    browser: Browser, streamlit_server: str
) -> None:
    context = new_context(browser, width=1366, height=768, locale="en-US")
    page = context.new_page()
    page.goto(f"{streamlit_server}/?text={quote(LINK_SENTENCE)}&lang=ja")
    wait_for_app_run(page)
    expect(page.get_by_role("heading", level=1).first).to_contain_text(translate("en", "playground.title"))
    expect(page.locator('[data-testid="stMain"] .st-key-pg_text textarea')).to_have_value(LINK_SENTENCE)

    for url_path, key in (("masks", "masks_text"), ("lookalikes", "lookalikes_text_a")):
        page.locator(f'[data-testid="stSidebarNav"] a[href$="/{url_path}"]').click()
        wait_for_path(page, url_path)
        wait_for_app_run(page)
        wait_for_charts(page)
        expect(page.locator(f'[data-testid="stSidebar"] .st-key-{key} :is(textarea, input)')).to_have_value(
            LINK_SENTENCE
        )
        expect(page).to_have_url(re.compile(r"[?&]text=" + re.escape(LINK_SENTENCE.replace(" ", "+"))))
        assert_no_exception(page)
    expect(page.locator('[data-testid="stSidebar"]')).to_contain_text(translate("en", "app.sentence_yours"))
    screenshot(page, "issue24_lookalikes_carried_sentence_1366", full=False)
    context.close()


def test_copied_url_shows_the_same_weights_in_a_new_browser(
    page: Page, browser: Browser, streamlit_server: str
) -> None:
    app = open_at(page, streamlit_server)
    wait_for_charts(app, minimum=2, timeout_ms=LONG_MS)
    box = app.locator('[data-testid="stMain"] .st-key-pg_text textarea')
    box.fill("a dog chased the red ball")
    box.press("Control+Enter")
    wait_for_app_run(app, timeout_ms=LONG_MS)
    seed = app.locator('[data-testid="stSidebar"] .st-key-pg_seed input')
    seed.fill("9")
    seed.press("Enter")
    wait_for_app_run(app, timeout_ms=LONG_MS)
    app.locator(".st-key-pg_head").get_by_text("head 1").click()
    wait_for_app_run(app, timeout_ms=LONG_MS)
    wait_for_charts(app, minimum=2, timeout_ms=LONG_MS)
    app.wait_for_function("() => location.search.includes('head=1')", timeout=LONG_MS)
    url = current_url(app)
    query = parse_qs(urlparse(url).query)
    assert query["text"] == ["a dog chased the red ball"] and query["seed"] == ["9"]
    before = z_values(pg_chart(app, "weights"))

    other = new_context(browser)
    try:
        page = other.new_page()
        page.set_default_timeout(LONG_MS)
        page.goto(url)
        wait_for_charts(page, minimum=2, timeout_ms=LONG_MS)
        assert_no_exception(page)
        assert tick_labels(pg_chart(page, "weights"), "x") == ["a", "dog", "chased", "the", "red", "ball"]
        assert z_values(pg_chart(page, "weights")) == before
        assert page.locator(".st-key-pg_head input[type=radio]:checked").evaluate("e => e.value") is not None
    finally:
        other.close()
