"""The SCORM 1.2 package: ``imsmanifest.xml``, the offline lesson (``lesson.html``) and the quiz
(``index.html``, the launch file) in one zip a course platform imports.

The quiz talks to the platform through the SCORM 1.2 run-time API (``window.API``, found in the
frames above the quiz or in its opener, as the SCORM 1.2 RTE asks):
- ``LMSInitialize``; ``cmi.core.lesson_status`` becomes ``incomplete`` on a first visit;
- every answer is kept in ``cmi.suspend_data`` (JSON, under SCORM 1.2's 4,096 characters) and
  committed, so a learner who leaves finds their answers again (``cmi.core.exit`` = ``suspend``);
- "Check my answers" writes ``cmi.core.score.raw`` (the percentage of right answers), ``.min`` 0,
  ``.max`` 100 and ``cmi.core.lesson_status`` ``passed`` or ``failed`` at the teacher's pass mark
  (also the manifest's ``adlcp:masteryscore``, so a platform that decides the status itself agrees);
- ``cmi.core.session_time`` (``HHHH:MM:SS.SS``) at the check and when the page is left, then
  ``LMSCommit`` and ``LMSFinish``.
Without a platform the quiz still works and says that nothing is recorded.

The right answers are in the quiz file (a SCORM 1.2 quiz checks in the browser): a learner who reads
the file's source can find them. docs/teachers.md says so; for a graded exam use the Moodle quiz.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from xml.etree import ElementTree as ET

from attention_ui.quiz_bank import Worded
from attention_ui.takehome import lesson
from attention_ui.takehome.lesson import PAGE_CSS, script_json
from attention_ui.takehome.markup import markdown_html, plain

LAUNCH, LESSON, MANIFEST = "index.html", "lesson.html", "imsmanifest.xml"
CP = "http://www.imsproject.org/xsd/imscp_rootv1p1p2"
ADLCP = "http://www.adlnet.org/xsd/adlcp_rootv1p2"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
# A fixed time for every zip entry: the same lesson gives the same bytes.
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


def check_pass_mark(pass_mark) -> int:
    if isinstance(pass_mark, bool) or not isinstance(pass_mark, int) or not 0 <= pass_mark <= 100:
        raise ValueError("the pass mark must be a whole number from 0 to 100")
    return pass_mark


def manifest(title: str, pass_mark: int, identifier: str) -> str:
    """``imsmanifest.xml`` (SCORM 1.2 CAM): one organisation, one SCO (the quiz), its two files."""
    for prefix, uri in (("", CP), ("adlcp", ADLCP), ("xsi", XSI)):
        ET.register_namespace(prefix, uri)
    root = ET.Element(f"{{{CP}}}manifest", {"identifier": identifier, "version": "1.0"})
    root.set(
        f"{{{XSI}}}schemaLocation",
        f"{CP} imscp_rootv1p1p2.xsd http://www.imsglobal.org/xsd/imsmd_rootv1p2p1 imsmd_rootv1p2p1.xsd "
        f"{ADLCP} adlcp_rootv1p2.xsd",
    )
    meta = ET.SubElement(root, f"{{{CP}}}metadata")
    ET.SubElement(meta, f"{{{CP}}}schema").text = "ADL SCORM"
    ET.SubElement(meta, f"{{{CP}}}schemaversion").text = "1.2"
    orgs = ET.SubElement(root, f"{{{CP}}}organizations", {"default": "org"})
    org = ET.SubElement(orgs, f"{{{CP}}}organization", {"identifier": "org"})
    ET.SubElement(org, f"{{{CP}}}title").text = title
    item = ET.SubElement(
        org, f"{{{CP}}}item", {"identifier": "item_quiz", "identifierref": "res_quiz", "isvisible": "true"}
    )
    ET.SubElement(item, f"{{{CP}}}title").text = title
    ET.SubElement(item, f"{{{ADLCP}}}masteryscore").text = str(pass_mark)
    resources = ET.SubElement(root, f"{{{CP}}}resources")
    resource = ET.SubElement(
        resources,
        f"{{{CP}}}resource",
        {"identifier": "res_quiz", "type": "webcontent", f"{{{ADLCP}}}scormtype": "sco", "href": LAUNCH},
    )
    for name in (LAUNCH, LESSON):
        ET.SubElement(resource, f"{{{CP}}}file", {"href": name})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _question_html(number: int, q: Worded, t) -> str:
    program = f"<pre><code>{plain(q.program)}</code></pre>" if q.program else ""
    options = []
    for k, choice in enumerate(q.choices):
        text = (
            f"<b>{'ABCD'[k]}</b><pre><code>{plain(choice.text)}</code></pre>"
            if q.code_choices
            else plain(choice.text)
        )
        options.append(
            f"<label class='option'><input type='radio' name='q{number}' value='{k}'> <span>{text}</span></label>"
        )
    feedback = "".join(
        f"<div class='feedback' data-choice='{k}' hidden>{markdown_html(c.feedback)}</div>"
        for k, c in enumerate(q.choices)
    )
    return (
        f"<fieldset class='question' data-q='{number - 1}'><legend>{plain(t('takehome.question_label', number=number))}"
        f"</legend><div class='prompt'>{markdown_html(q.prompt)}</div>{program}<div class='options'>{''.join(options)}</div>"
        f"<p class='mark' hidden></p>{feedback}</fieldset>"
    )


# Constant script: the quiz and its SCORM 1.2 calls (the texts and answers come from the JSON above).
_QUIZ_JS = (lesson.ASSETS / "scorm_quiz.js").read_text(encoding="utf-8")

QUIZ_CSS = (lesson.ASSETS / "scorm_quiz.css").read_text(encoding="utf-8")


def quiz_html(t, questions: list[Worded], *, title: str, pass_mark: int, lesson_href: str = LESSON) -> str:
    """The quiz page (the package's launch file), in the translator's language."""
    check_pass_mark(pass_mark)
    if not questions:
        raise ValueError("a quiz needs at least one question")
    data = {
        "correct": [q.correct for q in questions],
        "passMark": pass_mark,
        "texts": {
            "right": t("takehome.right"),
            "wrong": [t("takehome.wrong", answer=q.answer) for q in questions],
            "score": t(
                "takehome.score_line",
                correct="{correct}",
                total="{total}",
                percent="{percent}",
                pass_mark="{pass_mark}",
            ),
            "passed": t("takehome.passed"),
            "failed": t("takehome.failed"),
            "unanswered": t("takehome.unanswered", count="{count}"),
            "no_platform": t("takehome.no_platform"),
        },
    }
    body = "".join(_question_html(k, q, t) for k, q in enumerate(questions, 1))
    return (
        "<!doctype html>\n"
        f"<html lang='{plain(t.lang)}'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; script-src 'unsafe-inline'; "
        "style-src 'unsafe-inline'; img-src data:\">"
        f"<title>{plain(title)}</title><style>{PAGE_CSS}{QUIZ_CSS}</style></head><body><main>"
        f"<h1>{plain(title)}</h1><p class='status' id='al-status' role='status' hidden></p>"
        f"<p>{plain(t('takehome.quiz_intro', count=len(questions)))}</p>"
        f"<p><a href='{plain(lesson_href)}' target='_blank' rel='noopener'>{plain(t('takehome.open_lesson'))}</a></p>"
        f"<form onsubmit='return false'>{body}</form>"
        f"<p class='status' id='al-missing' role='alert' hidden></p>"
        f"<button type='button' id='al-submit'>{plain(t('takehome.submit'))}</button>"
        f"<p id='al-result' role='status' hidden></p></main>"
        f"<script type='application/json' id='al-quiz'>{script_json(data)}</script>"
        f"<script>{_QUIZ_JS}</script></body></html>\n"
    )


def package(t, lesson_html: str, questions: list[Worded], *, title: str, pass_mark: int) -> bytes:
    """The zip: manifest, quiz (launch file) and lesson; the same inputs give the same bytes."""
    quiz = quiz_html(t, questions, title=t("takehome.quiz_title", what=title), pass_mark=pass_mark)
    digest = hashlib.sha256((lesson_html + quiz).encode("utf-8")).hexdigest()[:16]
    files = {
        MANIFEST: manifest(title, pass_mark, f"attention-lab-{digest}"),
        LAUNCH: quiz,
        LESSON: lesson_html,
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in files.items():
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()
