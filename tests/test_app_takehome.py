"""Every take-home download where a user looks for it (issue 45), pressed in AppTest: the file the
button gives is read back. The playground's export menu (lesson, SCORM, quiz), the masks, multi-head
and √d_k labs (lesson), the quiz page (SCORM and quiz with its seed's questions); the live class's
teacher panel is in tests/test_class_pages.py."""

from __future__ import annotations

import io
import re
import zipfile
from xml.etree import ElementTree as ET

import pytest

from attention_ui.i18n import translate
from tests.apptest_pages import capture_downloads, downloaded, open_page


def _questions_xml(data: bytes) -> list[ET.Element]:
    return [q for q in ET.fromstring(data).findall("question") if q.get("type") == "multichoice"]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_playground_export_menu_gives_the_lesson_scorm_and_quiz(monkeypatch, lang) -> None:
    kept = capture_downloads(monkeypatch)
    text = 'cats & "dogs" </script> {run}'
    at = open_page(lang=lang, pg_text=text, pg_mask="causal", pg_head=1)
    page, mime, name = downloaded(at, kept, "pg_dl_lesson")
    html = page.decode("utf-8")
    assert mime == "text/html" and name == f"attention_lesson_{lang}.html"
    assert f"<html lang='{lang}'>" in html and "&lt;/script&gt;" in html and "</script> {run}" not in html
    assert translate(lang, "playground.mask_causal") in html
    assert html.count("data-figure=") >= 11
    at.number_input(key="pg_tk_count").set_value(4).run()
    at.number_input(key="pg_tk_pass").set_value(75).run()
    data, mime, name = downloaded(at, kept, "pg_tk_scorm")
    assert mime == "application/zip" and name == f"attention_lesson_scorm_{lang}.zip"
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert set(zf.namelist()) == {"imsmanifest.xml", "index.html", "lesson.html"}
        assert "<adlcp:masteryscore>75</adlcp:masteryscore>" in zf.read("imsmanifest.xml").decode()
        assert len(re.findall(r"<fieldset class='question'", zf.read("index.html").decode())) == 4
    data, mime, name = downloaded(at, kept, "pg_tk_quiz")
    assert mime == "application/xml" and name == f"attention_quiz_{lang}.xml"
    assert len(_questions_xml(data)) == 4
    at.radio(key="pg_tk_format").set_value("gift").run()
    data, mime, name = downloaded(at, kept, "pg_tk_quiz")
    assert mime == "text/plain" and name.endswith(".gift.txt") and data.decode().count("::[html]") == 4


@pytest.mark.parametrize(
    "page, key, section",
    [
        ("app_pages/masks.py", "masks_dl_lesson", "masks.h_mask"),
        ("app_pages/multihead.py", "multihead_dl_lesson", "multihead.sec_heads"),
        ("app_pages/scaling.py", "scaling_dl_lesson", "scaling.h_variance"),
    ],
)
def test_each_lab_gives_its_lesson(monkeypatch, page, key, section) -> None:
    kept = capture_downloads(monkeypatch)
    at = open_page(page, lang="ja")
    html = downloaded(at, kept, key)[0].decode("utf-8")
    assert f"<h2>{translate('ja', section)}</h2>" in html  # the lab's own section
    assert translate("ja", "playground.step_softmax") in html  # then every step
    assert html.index(translate("ja", section)) < html.index(translate("ja", "playground.step_x"))
    text = re.sub(r"<script.*?</script>|<math.*?</math>", "", html, flags=re.S)  # what is left as text
    assert "\\" not in text and "$" not in text  # every formula of the lab became MathML


def test_quiz_page_gives_the_course_files_with_its_seed(monkeypatch) -> None:
    kept = capture_downloads(monkeypatch)
    at = open_page("app_pages/quiz.py", quiz_seed=7)
    count = at.number_input(key="quiz_tk_count")
    count.set_value(int(count.max)).run()  # every question: the sentence's, then the page's computed ones
    data = downloaded(at, kept, "quiz_tk_quiz")[0]
    names = [q.findtext("name/text") for q in _questions_xml(data)]
    from attention_ui.quiz_bank import build_quiz

    computed = [it.qid for it in build_quiz(7) if it.computed is not None]
    assert [n.split(" ", 1)[1] for n in names][-len(computed) :] == computed  # the page's seed, its order
    assert downloaded(at, kept, "quiz_tk_scorm")[0][:2] == b"PK"
