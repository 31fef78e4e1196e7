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

import io
import os
import re
import zipfile
from pathlib import Path
from urllib.parse import quote

import pytest
from st_browser import ROOT, new_context, screenshot

from attention_core import AttentionConfig, trace_text
from attention_ui.i18n import Translator
from attention_ui.takehome import build

HOSTILE = 'the "cat" </script><img src=x onerror="window.__pwned=1"> sat for $5 & $x$ <b>bold</b>'
SCORM_AGAIN = ROOT / "artifacts" / "npm" / "scorm-again-3.4.3"

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


# Every annotation of every chart (the axis titles are annotations in the lesson, lesson.titles_as_annotations;
# the grid's panel titles): [chart id, text, what is wrong] when one is empty, reaches outside its chart's
# SVG (clipped) or overlaps a tick label.
_ANNOTATION_FAULTS_JS = """() => {
  const faults = [];
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  for (const el of document.querySelectorAll('.chart[data-figure]')) {
    const box = el.querySelector('svg.main-svg').getBoundingClientRect();
    const ticks = [...el.querySelectorAll('.xtick text, .ytick text')]
      .map((t) => t.getBoundingClientRect()).filter((r) => r.width > 0);
    for (const note of el.querySelectorAll('.annotation-text')) {
      const r = note.getBoundingClientRect(), text = note.textContent;
      if (!text.trim() || r.width === 0) faults.push([el.id, text, 'empty']);
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
        faults.push([el.id, text, 'clipped']);
      if (ticks.some((t) => meets(r, t))) faults.push([el.id, text, 'on a tick label']);
    }
  }
  return faults;
}"""


def _titles_drawn(page, count: int) -> None:
    """Every chart's axis titles drawn (two or more annotations each), none clipped or on a label."""
    assert page.locator(".chart[data-figure] .annotation-text").count() >= 2 * count
    assert page.evaluate(_ANNOTATION_FAULTS_JS) == []


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
        _titles_drawn(page, count)
        screenshot(page, f"takehome_lesson_desktop_{lang}")
    finally:
        context.close()

    context, page, seen, _ = _open_lesson(browser, path, phone=True, lang=lang)
    try:
        assert seen == [path.as_uri()]
        _titles_drawn(page, count)
        wide = page.evaluate("() => document.scrollingElement.scrollWidth - window.innerWidth")
        assert wide <= 0, f"the phone scrolls sideways by {wide} px"
        screenshot(page, f"takehome_lesson_phone_{lang}")
    finally:
        context.close()


# The page a course platform would show: scorm-again's SCORM 1.2 API on window.API, the package's
# launch file in a frame below it. ``saved`` (JSON of a previous attempt's CMI, or null) is loaded
# first, as a platform does when a learner comes back.
_PLATFORM_HTML = """<!doctype html><html><head><meta charset="utf-8"><script src="scorm12.min.js"></script>
<script>
  const saved = JSON.parse(decodeURIComponent(location.hash.slice(1) || "null"));
  window.API = new Scorm12API({ autocommit: false, lmsCommitUrl: false, logLevel: 5 });
  if (saved) window.API.loadFromJSON(saved.cmi ? saved.cmi : saved, "cmi");
  window.commits = 0;
  window.API.on("LMSCommit", () => { window.commits += 1; });
  // cmi.core.session_time is write-only to a SCO: the platform sees what was set
  window.API.on("LMSSetValue.cmi.core.session_time", (element, value) => { window.sessionTime = value; });
</script></head><body><iframe id="sco" src="package/index.html" style="width:100%;height:90vh"></iframe></body></html>"""


@pytest.fixture
def served(tmp_path):
    """A loopback HTTP server for ``tmp_path`` (the platform page and its frame share one origin)."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_scorm_package_reports_to_a_scorm_runtime(browser, served) -> None:
    runtime = SCORM_AGAIN / "dist" / "scorm12.min.js"
    if not runtime.is_file():
        if os.environ.get("CI"):
            pytest.fail("scorm-again is missing: run scripts/ensure_npm_tools.sh (make browser)")
        pytest.skip("scorm-again is missing: bash scripts/ensure_npm_tools.sh")
    folder, base = served
    t = Translator("en")
    text = "the cat sat on the mat"
    trace = trace_text(text, AttentionConfig(mask="causal", heads=2))
    asked = build.quiz_questions(t, trace, head=0, count=7)  # five on the sentence, two code questions
    assert [q.code_choices for q in asked] == [False] * 5 + [True] * 2
    data = build.scorm_zip(t, trace, text, head=0, count=7, pass_mark=57)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        zf.extractall(folder / "package")
    (folder / "scorm12.min.js").write_bytes(runtime.read_bytes())
    (folder / "platform.html").write_text(_PLATFORM_HTML, encoding="utf-8")

    context = new_context(browser)
    try:
        page = context.new_page()
        page.goto(f"{base}/platform.html")
        sco = page.frame_locator("#sco")
        sco.locator("body[data-ready='lms']").wait_for()
        assert page.evaluate("() => API.cmi.core.lesson_status") == "incomplete"
        # four right (one of them a code question), three wrong: 4/7 = 57 %, exactly the pass mark
        right = (0, 1, 2, 5)
        picks = [q.correct if k in right else (q.correct + 1) % len(q.choices) for k, q in enumerate(asked)]
        for k, pick in enumerate(picks[:2]):
            sco.locator(f"fieldset[data-q='{k}'] input[value='{pick}']").check()
        suspended = page.evaluate("() => API.cmi.suspend_data")
        assert '"a":{"0":' in suspended and page.evaluate("() => commits") >= 2
        saved = page.evaluate("() => API.renderCMIToJSONString()")
        # a second visit resumes: the two answers are checked again
        page.goto(f"{base}/platform.html#" + quote(saved))
        page.reload()
        sco.locator("body[data-ready='lms']").wait_for()
        for k, pick in enumerate(picks[:2]):
            assert sco.locator(f"fieldset[data-q='{k}'] input[value='{pick}']").is_checked()
        for k, pick in enumerate(picks[2:], start=2):
            sco.locator(f"fieldset[data-q='{k}'] input[value='{pick}']").check()
        sco.locator("#al-submit").click()
        sco.locator("#al-result").wait_for()
        recorded = page.evaluate(
            """() => ({raw: API.cmi.core.score.raw, min: API.cmi.core.score.min, max: API.cmi.core.score.max,
                      status: API.cmi.core.lesson_status, time: window.sessionTime,
                      suspend: API.cmi.suspend_data})"""
        )
        assert (recorded["raw"], recorded["min"], recorded["max"]) == ("57", "0", "100")
        assert recorded["status"] == "passed"
        assert re.fullmatch(r"\d{4}:\d{2}:\d{2}\.\d{2}", recorded["time"]), recorded["time"]
        assert '"s":1' in recorded["suspend"]
        assert sco.locator(".mark.wrong").count() == 3 and sco.locator(".mark.right").count() == 4
        # each answer's own feedback is shown: a code fragment's is what it did when run
        assert sco.locator("fieldset[data-q='6'] .feedback:not([hidden])").count() == 1
        screenshot(page, "takehome_scorm_quiz")
    finally:
        context.close()
