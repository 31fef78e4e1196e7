"""The code check page in a real browser (issue 44), on a desktop in English and on a 390 × 844 phone
with touch in Japanese: type a right implementation -> pass; a trap -> named, with its explanation,
in the page's language; an escape -> refused. On the phone the report fits the screen: nothing in it
is wider than the screen or scrolls sideways (the cases are a list of lines, not a table).
The test server listens on 127.0.0.1, a local address: the check is on.

Screenshots: artifacts/screenshots/code_check_{desktop_en,phone_ja}_{pass,trap,refused}.png.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from st_browser import assert_no_exception, new_context, open_lab, screenshot, wait_for_app_run

from attention_ui.i18n import translate
from tests.codecheck_helpers import RIGHT

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]

TRAP = RIGHT.replace("/ np.sqrt(d_k)", "/ d_k")
ESCAPE = "import os\nprint(os.environ)\n"
# Elements of the page's main area wider than the screen (outside a box that clips them), and boxes
# in it that scroll sideways: the report must have neither on a phone.
SIDEWAYS_JS = """() => {
  const W = window.innerWidth, main = document.querySelector('[data-testid="stMain"]');
  const clipped = (el) => {
    for (let a = el.parentElement; a && a !== main; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible') return true;
    }
    return false;
  };
  const out = [];
  for (const el of main.querySelectorAll('*')) {
    const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    if (r.width === 0 || r.height === 0 || el.closest('.st-key-codecheck_code')) continue;
    const what = el.tagName + ': ' + (el.textContent || '').trim().slice(0, 40);
    if ((r.left < -1 || r.right > W + 1) && !clipped(el)) out.push('wide ' + what);
    if ((s.overflowX === 'auto' || s.overflowX === 'scroll') && el.scrollWidth > el.clientWidth + 1)
      out.push('scrolls ' + what);
  }
  if (document.documentElement.scrollWidth > W + 1) out.push('the page is wider than the screen');
  return out.slice(0, 10);
}"""


def check(page: Page, code: str, touch: bool) -> None:
    box = page.locator(".st-key-codecheck_code textarea")
    box.fill(code)
    box.press("Control+Enter")  # the text area sends its value
    wait_for_app_run(page)
    button = page.locator(".st-key-codecheck_check button")
    button.tap() if touch else button.click()
    wait_for_app_run(page, timeout_ms=60_000)
    assert_no_exception(page)


@pytest.mark.parametrize(
    "name, lang, size, touch",
    [("desktop_en", "en", (1366, 768), False), ("phone_ja", "ja", (390, 844), True)],
    ids=["desktop_en", "phone_ja"],
)
def test_pass_trap_and_escape(browser, streamlit_server: str, name, lang, size, touch) -> None:
    context = new_context(
        browser, width=size[0], height=size[1], touch=touch, locale="ja-JP" if lang == "ja" else "en-US"
    )
    page = context.new_page()
    try:
        open_lab(page, streamlit_server, "code_check", lang)
        expect(page.get_by_role("heading", level=1)).to_contain_text(translate(lang, "codecheck.title"))
        check(page, RIGHT, touch)
        expect(page.get_by_text(translate(lang, "codecheck.pass_all", cases=8))).to_be_visible()
        screenshot(page, f"code_check_{name}_pass")
        check(page, TRAP, touch)
        trap = page.locator('[data-testid="stAlertContentWarning"]')
        expect(trap.filter(has_text=translate(lang, "code.mut_divide_by_d_k")).first).to_be_visible()
        expect(trap.filter(has_text=translate(lang, "code.mut_divide_by_d_k_why")).first).to_be_visible()
        case = translate(lang, "codecheck.case_random_shapes")
        expect(page.get_by_role("listitem").filter(has_text=case).first).to_be_visible()  # the cases: lines
        expect(page.locator(".js-plotly-plot").first).to_be_visible()  # where it differs
        if size[0] < 768:
            assert page.evaluate(SIDEWAYS_JS) == []
        screenshot(page, f"code_check_{name}_trap")
        check(page, ESCAPE, touch)
        expect(page.get_by_text(translate(lang, "codecheck.refused"))).to_be_visible()
        expect(page.get_by_text("import os", exact=False).first).to_be_visible()
        screenshot(page, f"code_check_{name}_refused")
    finally:
        context.close()
