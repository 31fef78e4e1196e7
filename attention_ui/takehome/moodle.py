"""The quiz for a question bank: Moodle XML and GIFT, multiple choice with a feedback per option.

Both write :class:`attention_ui.quiz_bank.Worded` questions and nothing else. Texts are HTML (Moodle's
``format="html"``, GIFT's ``[html]``) made from the catalogs' Markdown with user text escaped; the
formulas stay TeX between ``\\(…\\)``, which Moodle's MathJax filter (on by default) draws — Moodle's
HTML cleaning would strip MathML. Escaping: ElementTree writes XML's ``& < >`` (and ``"`` in
attributes); GIFT's special characters ``~ = # { } :`` and the backslash get a backslash before them,
and a line break is written ``\\n``, as the GIFT documentation asks.
"""

from __future__ import annotations

import html
import re
from xml.etree import ElementTree as ET

from attention_ui.quiz_bank import Worded
from attention_ui.takehome.markup import markdown_html

FORMATS = ("moodle", "gift")
MIME = {"moodle": "application/xml", "gift": "text/plain"}
EXTENSION = {"moodle": "xml", "gift": "gift.txt"}


def _prompt_html(q: Worded) -> str:
    program = f"<pre><code>{html.escape(q.program)}</code></pre>" if q.program else ""
    return markdown_html(q.prompt, math="tex").strip() + program


def _choice_html(q: Worded, text: str) -> str:
    return f"<pre><code>{html.escape(text)}</code></pre>" if q.code_choices else html.escape(text)


def _text(parent: ET.Element, tag: str, value: str, fmt: str | None = "html") -> ET.Element:
    element = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(element, "text").text = value
    return element


def moodle_xml(questions: list[Worded], category: str) -> str:
    """Moodle XML: a category, then one ``multichoice`` question (one right answer) per question."""
    quiz = ET.Element("quiz")
    cat = ET.SubElement(quiz, "question", {"type": "category"})
    head = ET.SubElement(cat, "category")
    ET.SubElement(head, "text").text = f"$course$/top/{category}"
    for number, q in enumerate(questions, 1):
        question = ET.SubElement(quiz, "question", {"type": "multichoice"})
        name = ET.SubElement(question, "name")
        ET.SubElement(name, "text").text = f"{number:02d} {q.qid}"
        _text(question, "questiontext", _prompt_html(q))
        _text(question, "generalfeedback", markdown_html(q.explanation, math="tex"))
        for tag, value in (("defaultgrade", "1"), ("penalty", "0"), ("hidden", "0"), ("single", "true"),
                           ("shuffleanswers", "false"), ("answernumbering", "ABCD")):  # fmt: skip
            ET.SubElement(question, tag).text = value
        for k, choice in enumerate(q.choices):
            answer = ET.SubElement(
                question, "answer", {"fraction": "100" if k == q.correct else "0", "format": "html"}
            )
            ET.SubElement(answer, "text").text = _choice_html(q, choice.text)
            _text(answer, "feedback", markdown_html(choice.feedback, math="tex"))
    ET.indent(quiz)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(quiz, encoding="unicode") + "\n"


_GIFT_SPECIAL = re.compile(r"([\\~=#{}:])")


def gift_escape(text: str) -> str:
    """GIFT's special characters and the backslash escaped; line breaks as ``\\n``."""
    return _GIFT_SPECIAL.sub(r"\\\1", text).replace("\r\n", "\n").replace("\n", "\\n")


def gift(questions: list[Worded], category: str) -> str:
    """GIFT: a category line, then per question ``::name::[html]text{=right#feedback ~wrong#feedback}``
    and its general feedback after ``####``; a blank line between questions."""
    blocks = [f"// Attention Lab\n$CATEGORY: $course$/top/{gift_escape(category)}"]
    for number, q in enumerate(questions, 1):
        lines = [f"::{gift_escape(f'{number:02d} {q.qid}')}::[html]{gift_escape(_prompt_html(q))}{{"]
        for k, choice in enumerate(q.choices):
            mark = "=" if k == q.correct else "~"
            feedback = gift_escape(markdown_html(choice.feedback, math="tex").strip())
            lines.append(f"\t{mark}[html]{gift_escape(_choice_html(q, choice.text))}#[html]{feedback}")
        lines.append(f"\t####[html]{gift_escape(markdown_html(q.explanation, math='tex').strip())}")
        lines.append("}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def quiz_file(questions: list[Worded], fmt: str, category: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown quiz format {fmt!r}; one of {', '.join(FORMATS)}")
    if not questions:
        raise ValueError("a quiz needs at least one question")
    return moodle_xml(questions, category) if fmt == "moodle" else gift(questions, category)
