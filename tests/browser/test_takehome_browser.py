"""The files that leave the app, opened in Chromium with no server (issue 45).

- The offline lesson: every request the page attempts is recorded and refused; none is attempted
  beyond the file itself, every chart draws (its SVG is there), every formula is MathML (no raw
  ``$…$``, ``\\frac`` or ``\\text`` left), a hostile sentence shows as text and runs nothing, both
  languages, and a 390 × 844 phone shows it without sideways scrolling.
- The SCORM package: its launch file opened under scorm-again (the SCORM 1.2 runtime, pinned,
  scripts/ensure_npm_tools.sh), the quiz answered some right and some wrong, and what the runtime
  recorded read back: score raw/min/max, lesson_status at the pass mark, session_time,
  suspend_data, and a second visit that resumes from it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from st_browser import ROOT, new_context, screenshot

from attention_core import AttentionConfig, trace_text
from attention_ui.i18n import Translator
from attention_ui.takehome import build

HOSTILE = 'the "cat" </script><img src=x onerror="window.__pwned=1"> sat for $5 & $x$ <b>bold</b>'
SCORM_AGAIN = ROOT / "artifacts" / "scorm-again"

# Text of the page outside the learner's own sentence and tokens, and outside the charts.
_TEXT_OUTSIDE_USER_JS = """() => {
  const main = document.querySelector('main').cloneNode(true);
  for (const el of main.querySelectorAll('.sentence, .tokens, .chart, .pick, math')) el.remove();
  return main.innerText;
}"""


def _record(context) -> list[str]:
    """Every request the context's pages attempt; any that is not the lesson file is refused."""
    seen: list[str] = []

    def handle(route):
        seen.append(route.request.url)
        route.abort()

    context.route(re.compile(r"^(?!file:).*"), handle)
    context.on("request", lambda request: seen.append(request.url))
    return seen


def _open_lesson(browser, path: Path, *, phone: bool = False, lang: str = "en"):
    context = new_context(browser, locale="ja-JP" if lang == "ja" else "en-US",
                          **({"width": 390, "height": 844, "touch": True} if phone else {}))  # fmt: skip
    seen = _record(context)
    page = context.new_page()
    page.goto(path.as_uri())
    charts = page.locator(".chart[data-figure]")
    count = charts.count()
    page.wait_for_function(
        "(n) => document.querySelectorAll('.chart[data-drawn=\"1\"]').length === n", arg=count, timeout=60_000
    )
    return context, page, seen, count


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_offline_lesson_draws_everything_with_no_request(browser, tmp_path, lang) -> None:
    t = Translator(lang)
    text = (
        HOSTILE
        if lang == "en"
        else '猫が </script> マットに $5 座った <img src=x onerror="window.__pwned=1">'
    )
    trace = trace_text(text, AttentionConfig(mask="causal+padding", pad=1, heads=2, d_model=8))
    path = tmp_path / f"lesson_{lang}.html"
    path.write_text(build.playground_lesson(t, trace, text, head=1, cell=(2, 1)), encoding="utf-8")
    assert path.stat().st_size <= 6 * 2**20

    context, page, seen, count = _open_lesson(browser, path, lang=lang)
    try:
        assert seen == [path.as_uri()], f"requests besides the file: {seen}"
        assert count >= 11  # one chart per step (Q, K, V three), the mask's and the masked map
        svg = page.locator(".chart[data-figure] svg.main-svg")
        assert svg.count() >= count
        assert page.locator(".chart .heatmaplayer image, .chart .heatmaplayer path").count() >= count - 3
        # every formula rendered: MathML elements and no LaTeX source left as text
        assert page.locator("section math").count() >= 11 + 6
        outside = page.evaluate(_TEXT_OUTSIDE_USER_JS)
        for raw in ("$", "\\frac", "\\text", "\\sqrt", "\\mathrm", "\\begin"):
            assert raw not in outside, f"{raw!r} left in the text"
        # user text is data: shown as typed, nothing ran, no element made from it
        assert page.locator(".sentence").inner_text() == text
        assert page.evaluate("() => window.__pwned === undefined")
        assert page.locator("main img, main b:has-text('bold')").count() == 0
        assert page.evaluate("() => document.documentElement.lang") == lang
        screenshot(page, f"takehome_lesson_desktop_{lang}")
    finally:
        context.close()

    context, page, seen, _ = _open_lesson(browser, path, phone=True, lang=lang)
    try:
        assert seen == [path.as_uri()]
        wide = page.evaluate("() => document.scrollingElement.scrollWidth - window.innerWidth")
        assert wide <= 0, f"the phone scrolls sideways by {wide} px"
        screenshot(page, f"takehome_lesson_phone_{lang}")
    finally:
        context.close()
