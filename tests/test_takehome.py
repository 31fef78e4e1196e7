"""The take-home files as data (issue 45): the lesson's HTML, the quiz's questions, the SCORM zip and
its manifest (read with an XML parser), Moodle XML (an XML parser) and GIFT (gift-pegjs, a maintained
GIFT parser, run with node; pinned by scripts/ensure_npm_tools.sh), with a sentence full of the
formats' special characters. The browser side is tests/browser/test_takehome_browser.py."""

from __future__ import annotations

import html
import io
import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pytest

from attention_core import AttentionConfig, trace_text
from attention_ui.i18n import Translator
from attention_ui.takehome import build, lesson, markup, moodle, questions, scorm

ROOT = Path(__file__).resolve().parent.parent
GIFT_PARSER = ROOT / "artifacts" / "npm" / "gift-pegjs-1.0.2" / "lib" / "gift-parser.js"
# Every special character of GIFT (~ = # { } : and the backslash) and of XML/HTML (< > & " '), and $.
SPECIAL = "a {b} ~c =d #e :f \\g <h> & \"i\" 'j' $k </script>"
CP = "{http://www.imsproject.org/xsd/imscp_rootv1p1p2}"
ADLCP = "{http://www.adlnet.org/xsd/adlcp_rootv1p2}"


@pytest.fixture(scope="module")
def trace():
    return trace_text(SPECIAL, AttentionConfig(mask="causal+padding", pad=1, heads=2, d_model=8))


def _special_cell(trace) -> tuple[int, int]:
    """A cell whose query and key tokens are special characters (the prompt names both)."""
    i = trace.tokens.index("#")
    return i, trace.tokens.index("{")


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_lesson_is_one_offline_file(trace, lang) -> None:
    t = Translator(lang)
    page = build.playground_lesson(t, trace, SPECIAL, head=1, cell=_special_cell(trace))
    assert len(page.encode("utf-8")) <= lesson.MAX_BYTES
    assert page.count(lesson.plotly_js()) == 1  # plotly.js inside, once
    # nothing to fetch: no src/href to another place, no @import, no url(), a CSP that forbids requests
    ours = page.replace(lesson.plotly_js(), "")  # plotly.js itself: the browser test records its requests
    assert not re.search(r"""(?:src|href)\s*=\s*['"]?(?!#)[a-z]+:""", ours, re.I)
    assert "@import" not in ours and "url(" not in ours
    assert "default-src 'none'" in page
    # the sentence only as text: the one </script> closes the page's own scripts; the figures' JSON
    # holds the tokens escaped
    assert page.count("</script>") == 3
    assert html.escape(SPECIAL, quote=True) in page
    figures = json.loads(re.search(r"id='al-figures'>(.*?)</script>", page, re.S).group(1))
    assert len(figures) == page.count("data-figure=") >= 11
    assert f"<html lang='{lang}'>" in page
    assert page.count("<math") >= 11 + 6  # a formula per step, the cell's six lines
    assert "\\frac" not in re.sub(r"<script.*?</script>", "", page, flags=re.S)


def test_lesson_numbers_come_from_the_trace(trace) -> None:
    i, j = _special_cell(trace)
    page = build.playground_lesson(Translator("en"), trace, SPECIAL, head=1, cell=(i, j))
    weight = float(trace.weights[1, i, j])
    assert f"The weight in the map above: {weight:.6g}." in page
    figures = json.loads(re.search(r"id='al-figures'>(.*?)</script>", page, re.S).group(1))
    softmax = np.array(
        figures[8]["data"][0]["z"], dtype=float
    )  # x, Q, K, V, raw, scaled, mask, masked, softmax
    allowed = trace.mask
    assert np.allclose(softmax[allowed], trace.weights[1][allowed], atol=5e-4)  # as drawn (rounded)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_questions_have_one_right_answer_and_a_feedback_per_option(trace, lang) -> None:
    t = Translator(lang)
    cell = _special_cell(trace)
    asked = questions.lesson_questions(t, trace, 0, cell)
    kinds = [q.qid for q in asked]
    assert kinds[:5] == ["cell_weight", "divisor", "scores_shape", "masked_keys", "winning_key"]
    assert len(kinds) == len(set(kinds))
    for q in asked:
        labels = [c.text for c in q.choices]
        assert len(labels) == len(set(labels)) >= 2, q.qid
        assert len({c.feedback for c in q.choices}) == len(labels), q.qid  # one per option
        if q.code_choices:  # a code question: each fragment's feedback is what it did when run
            letter = t("code.q_option", letter="ABCD"[q.correct])
            assert q.program and all(letter in c.feedback for c in q.choices), q.qid
        else:
            assert q.answer in q.choices[q.correct].feedback
    code = [k for k in kinds if k.startswith("code_")]
    assert code and kinds[5 : 5 + len(code)] == code  # the exam code questions (issue 43) come next
    weight = asked[0]
    assert weight.answer == f"{trace.weights[0, cell[0], cell[1]]:.3f}"
    assert "#" in weight.prompt and "{" in weight.prompt


def test_count_and_pass_mark_are_checked(trace) -> None:
    t = Translator("en")
    cell = lesson.default_cell(trace)
    every = questions.lesson_questions(t, trace, 0, cell)
    most = questions.most_questions(trace, 0, cell)  # an upper bound: a code template may drop out
    assert len(every) <= most and build.quiz_questions(t, trace, count=most) == every
    for bad in (0, most + 1, True, 2.5):
        with pytest.raises(ValueError, match=f"between 1 and {most}"):
            build.quiz_questions(t, trace, count=bad)
    for bad in (-1, 101, 50.0):
        with pytest.raises(ValueError, match="pass mark"):
            build.scorm_zip(t, trace, SPECIAL, count=3, pass_mark=bad)
    with pytest.raises(ValueError, match="head 5"):
        build.quiz_questions(t, trace, head=5)
    with pytest.raises(ValueError, match="outside"):
        build.playground_lesson(t, trace, SPECIAL, cell=(0, trace.n))


def test_scorm_zip_and_its_manifest(trace) -> None:
    t = Translator("ja")
    data = build.scorm_zip(t, trace, SPECIAL, head=1, count=6, pass_mark=70)
    assert data == build.scorm_zip(t, trace, SPECIAL, head=1, count=6, pass_mark=70)  # reproducible
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = set(zf.namelist())
        root = ET.fromstring(zf.read("imsmanifest.xml"))
        quiz = zf.read("index.html").decode("utf-8")
    assert names == {"imsmanifest.xml", "index.html", "lesson.html"}
    assert root.tag == f"{CP}manifest" and root.get("identifier")
    assert root.findtext(f"{CP}metadata/{CP}schema") == "ADL SCORM"
    assert root.findtext(f"{CP}metadata/{CP}schemaversion") == "1.2"
    orgs = root.find(f"{CP}organizations")
    org = orgs.find(f"{CP}organization[@identifier='{orgs.get('default')}']")
    item = org.find(f"{CP}item")
    assert org.findtext(f"{CP}title") and item.findtext(f"{CP}title")
    assert item.findtext(f"{ADLCP}masteryscore") == "70"
    resource = root.find(f"{CP}resources/{CP}resource[@identifier='{item.get('identifierref')}']")
    assert resource.get(f"{ADLCP}scormtype") == "sco" and resource.get("type") == "webcontent"
    assert resource.get("href") == "index.html"
    assert {f.get("href") for f in resource.findall(f"{CP}file")} <= names
    data_json = json.loads(re.search(r"id='al-quiz'>(.*?)</script>", quiz, re.S).group(1))
    assert data_json["passMark"] == 70 and len(data_json["correct"]) == 6
    for call in ("LMSInitialize", "cmi.core.score.raw", "cmi.core.lesson_status", "cmi.core.session_time",
                 "cmi.suspend_data", "LMSFinish"):  # fmt: skip
        assert call in quiz
    assert "<html lang='ja'>" in quiz


def _choice(q, text: str) -> str:
    """An option as the quiz files must hold it: escaped text, code in a <pre> block."""
    return f"<pre><code>{html.escape(text)}</code></pre>" if q.code_choices else html.escape(text)


def _prompt(q) -> str:
    program = f"<pre><code>{html.escape(q.program)}</code></pre>" if q.program else ""
    return markup.markdown_html(q.prompt, math="tex").strip() + program


def _moodle_questions(text: str) -> list[ET.Element]:
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "quiz"
    category, *rest = root.findall("question")
    assert category.get("type") == "category"
    return rest


def _asked_and_written(trace, lang: str, fmt: str) -> tuple[list, str]:
    """The first 8 questions (five on the sentence, three code questions) and the file written of them."""
    t, cell = Translator(lang), _special_cell(trace)
    asked = build.quiz_questions(t, trace, head=0, cell=cell, count=8)
    assert [q.code_choices for q in asked] == [False] * 5 + [True] * 3
    return asked, build.quiz_file(t, trace, fmt, head=0, cell=cell, count=8)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_moodle_xml_reads_back(trace, lang) -> None:
    asked, written = _asked_and_written(trace, lang, "moodle")
    read = _moodle_questions(written)
    assert len(read) == len(asked)
    for q, element in zip(asked, read, strict=True):
        assert element.get("type") == "multichoice" and element.findtext("single") == "true"
        answers = element.findall("answer")
        assert [a.get("fraction") for a in answers] == [
            "100" if k == q.correct else "0" for k in range(len(q.choices))
        ]
        assert [a.findtext("text") for a in answers] == [_choice(q, c.text) for c in q.choices]
        feedback = [a.findtext("feedback/text") for a in answers]
        assert feedback == [markup.markdown_html(c.feedback, math="tex") for c in q.choices]
        assert element.findtext("questiontext/text") == _prompt(q)
    prompt = html.unescape(re.sub(r"<[^>]+>", "", read[0].findtext("questiontext/text")))
    i, j = _special_cell(trace)
    assert f"{i} ({trace.tokens[i]})" in prompt.replace("（", " (").replace("）", ")")


def _gift_parse(text: str) -> list[dict]:
    node = shutil.which("node")
    if node is None or not GIFT_PARSER.is_file():
        if os.environ.get("CI"):
            pytest.fail("node or gift-pegjs is missing: run scripts/ensure_npm_tools.sh (make browser)")
        pytest.skip("node or gift-pegjs is missing: bash scripts/ensure_npm_tools.sh")
    script = "const p=require(process.argv[1]);let s='';process.stdin.on('data',d=>s+=d);" \
             "process.stdin.on('end',()=>console.log(JSON.stringify(p.parse(s))));"  # fmt: skip
    out = subprocess.run([node, "-e", script, str(GIFT_PARSER)], input=text, capture_output=True, text=True,
                         check=True, timeout=60)  # fmt: skip
    return json.loads(out.stdout)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_gift_reads_back_with_a_gift_parser(trace, lang) -> None:
    asked, written = _asked_and_written(trace, lang, "gift")
    parsed = _gift_parse(written)
    assert parsed[0] == {"type": "Category", "title": "$course$/top/Attention Lab"}
    read = parsed[1:]
    assert len(read) == len(asked)
    for q, item in zip(asked, read, strict=True):
        assert item["type"] == "MC"
        assert item["stem"] == {"format": "html", "text": _prompt(q)}
        choices = item["choices"]
        assert [c["isCorrect"] for c in choices] == [k == q.correct for k in range(len(q.choices))]
        assert [c["text"]["text"] for c in choices] == [_choice(q, c.text) for c in q.choices]
        assert [c["feedback"]["text"] for c in choices] == [
            markup.markdown_html(c.feedback, math="tex").strip() for c in q.choices
        ]
        assert item["globalFeedback"]["text"] == markup.markdown_html(q.explanation, math="tex").strip()


def test_gift_escape_every_special_character() -> None:
    assert moodle.gift_escape("a~b=c#d{e}f:g\\h\ni") == "a\\~b\\=c\\#d\\{e\\}f\\:g\\\\h\\ni"


def test_formulas_become_mathml_or_tex() -> None:
    out = markup.markdown_html(r"x $\frac{a}{b}$ and $$S = QK^\top$$ <b>no</b> \$5")
    assert out.count("<math") == 2 and "\\frac" not in out and "<b>" not in out and "$5" in out
    assert r"\(\frac{a}{b}\)" in markup.markdown_html(r"x $\frac{a}{b}$", math="tex")
    with pytest.raises(ValueError, match="at least one question"):
        scorm.quiz_html(Translator("en"), [], title="x", pass_mark=1)


def test_script_json_cannot_close_its_script() -> None:
    text = lesson.script_json({"label": "</script><script>alert(1)</script> & <!--"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"label": "</script><script>alert(1)</script> & <!--"}


def test_the_lesson_carries_plotlys_cartesian_bundle_when_it_draws_every_chart(trace) -> None:
    """The 1.5-MB cartesian build, not the 4.8-MB full one, for the lab's heatmaps, bars and lines:
    the same version as the installed plotly package's, the file as taken from npm (its hash)."""
    import hashlib

    small = lesson.cartesian_plotly_js()
    assert hashlib.sha256(small.encode("utf-8")).hexdigest() == lesson.CARTESIAN_SHA256
    assert lesson.js_version(small) == lesson.js_version(lesson.full_plotly_js()) == lesson.CARTESIAN_VERSION
    assert (
        (lesson.ASSETS / "plotly-cartesian-LICENSE.txt").read_text(encoding="utf-8").startswith("MIT License")
    )
    page = build.playground_lesson(Translator("en"), trace, SPECIAL)
    figures = json.loads(re.search(r"id='al-figures'>(.*?)</script>", page, re.S).group(1))
    assert lesson.trace_types(figures) <= lesson.CARTESIAN_TRACES
    assert small in page and lesson.full_plotly_js() not in page
    assert len(page.encode("utf-8")) < 2 * 2**20


def test_the_lessons_charts_do_not_check_their_tick_labels_for_overflow(trace) -> None:
    """Every axis and drawn colour bar of the lesson says ticklabeloverflow "allow" (Plotly's default
    re-measures every label after placing each one); a setting a figure makes itself is kept."""
    page = build.playground_lesson(Translator("en"), trace, SPECIAL)
    figures = json.loads(re.search(r"id='al-figures'>(.*?)</script>", page, re.S).group(1))
    axes = [v for f in figures for k, v in f["layout"].items() if re.fullmatch(r"[xy]axis\d*", k)]
    assert len(axes) >= 2 * len(figures)
    assert all(axis["ticklabeloverflow"] == "allow" for axis in axes)
    bars = [
        tr
        for f in figures
        for tr in f["data"]
        if tr["type"] == "heatmap" and tr.get("showscale") is not False
    ]
    bars = [tr for tr in bars if not tr.get("coloraxis")]
    assert bars and all(tr["colorbar"]["ticklabeloverflow"] == "allow" for tr in bars)
    shared = [f["layout"]["coloraxis"] for f in figures if "coloraxis" in f["layout"]]
    assert shared and all(c["colorbar"]["ticklabeloverflow"] == "allow" for c in shared)
    spec = lesson.labels_unchecked(
        {
            "data": [{"type": "bar"}, {"type": "heatmap", "showscale": False}],
            "layout": {"yaxis": {"ticklabeloverflow": "hide past domain"}},
        }
    )
    assert spec["layout"] == {
        "xaxis": {"ticklabeloverflow": "allow"},
        "yaxis": {"ticklabeloverflow": "hide past domain"},
    }
    assert "colorbar" not in spec["data"][1]  # a bar that is not drawn is left alone
    assert lesson.labels_unchecked({"data": [{"type": "pie"}], "layout": {}})["layout"] == {}


def test_a_chart_the_cartesian_bundle_cannot_draw_or_another_version_gets_the_full_build(monkeypatch) -> None:
    full, small = lesson.full_plotly_js(), lesson.cartesian_plotly_js()
    assert lesson.plotly_js({"heatmap", "bar", "scatter", "histogram"}) == small
    assert lesson.plotly_js({"heatmap", "sankey"}) == full  # a type outside the bundle
    assert lesson.trace_types([{"data": [{"x": [1]}, {"type": "bar"}]}, {"data": []}]) == {"scatter", "bar"}
    monkeypatch.setattr(lesson, "CARTESIAN_VERSION", "4.1.0")  # plotly upgraded, the asset not
    assert lesson.plotly_js({"heatmap"}) == full
    assert lesson.js_version("/**\n* plotly.js (cartesian - minified) v12.3.45\n*/") == "12.3.45"
    assert lesson.js_version("/* some other v1.2.3 script */") == ""


def _titles(layout: dict) -> list[str]:
    return [
        v["title"]["text"]
        for k, v in layout.items()
        if re.fullmatch(r"[xy]axis\d*", k) and (v.get("title") or {}).get("text")
    ]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_lessons_axis_titles_are_annotations_plotly_does_not_measure_labels_for(trace, lang) -> None:
    """A title (or the template's standoff) on an axis makes Plotly measure every tick label's box to
    place it; the lesson draws each title as an annotation instead, every one of them kept."""
    t = Translator(lang)
    sections = lesson.step_sections(t, trace, 1, _special_cell(trace))
    page = lesson.build_lesson(t, trace, sections, title="x", text=SPECIAL)
    figures = json.loads(re.search(r"id='al-figures'>(.*?)</script>", page, re.S).group(1))
    sources = [f.figure for s in sections for f in s.figures]
    assert len(figures) == len(sources) >= 10
    for spec, source in zip(figures, sources, strict=True):
        layout = spec["layout"]
        assert _titles(layout) == []
        template = layout["template"]["layout"]
        assert all("standoff" not in (template.get(k) or {}).get("title", {}) for k in ("xaxis", "yaxis"))
        wanted = _titles(json.loads(source.to_json())["layout"])
        notes = [a["text"] for a in layout.get("annotations", []) if a.get("font", {}).get("size") == 14]
        assert wanted and sorted(notes) == sorted(wanted)


def test_an_axis_title_sits_in_the_band_its_margin_keeps() -> None:
    """x: in the middle of the bottom margin's title band (above a colour bar below the plot); y: of
    the left margin's; each beside its own panel. A margin Plotly grows itself keeps its title, and so
    does a figure whose margins were not sized for a title band (another template, or too narrow)."""
    from attention_ui.figures import heatmaps

    def spec(margin=None, template=None, **trace):
        return {
            "data": [{"type": "heatmap", "xaxis": "x2", "yaxis": "y2", **trace}],
            "layout": {
                "margin": margin or {"l": 70, "b": 60},
                "xaxis": {"title": {"text": "k", "font": {"color": "red"}}},
                "xaxis2": {"anchor": "y2", "title": {"text": "key"}},
                "yaxis2": {"anchor": "x2", "title": {"text": "query"}},
                "yaxis": {"automargin": True, "title": {"text": "grown"}},
                "template": lesson._plain_template() if template is None else template,
            },
        }

    out = lesson.titles_as_annotations(spec())["layout"]
    notes = {a["text"]: a for a in out["annotations"]}
    assert set(notes) == {"k", "key", "query"}
    assert notes["key"]["xref"] == "x2 domain" and notes["key"]["yref"] == "y2 domain"
    assert (notes["key"]["x"], notes["key"]["y"], notes["key"]["yshift"]) == (0.5, 0, -(60 - 16))
    assert notes["k"]["font"] == {"size": 14, "color": "red"} and notes["k"]["yref"] == "y domain"
    q = notes["query"]
    assert (q["xref"], q["x"], q["xshift"], q["yref"], q["y"], q["textangle"]) == (
        "x2 domain", 0, -(70 - 16), "y2 domain", 0.5, -90,
    )  # fmt: skip
    assert out["yaxis"]["title"] == {"text": "grown"}  # automargin: Plotly measures anyway
    assert out["template"]["layout"]["xaxis"]["title"]["standoff"] == 8  # a title is left: kept
    below = lesson.titles_as_annotations(spec(colorbar={"orientation": "h"}))["layout"]
    key = next(a for a in below["annotations"] if a["text"] == "key")
    assert key["yshift"] == -(60 - heatmaps.COLORBAR_BELOW_PX - 16)
    for kept in (spec(margin={"l": 10, "b": 10}), spec(template={"layout": {}}), spec(margin={"t": 5})):
        unchanged = json.loads(json.dumps(kept))
        assert lesson.titles_as_annotations(kept) == unchanged


def test_an_axis_that_keeps_its_title_grows_its_margin_for_it() -> None:
    """The √d_k lab's charts (10-px margins, not PLAIN_TEMPLATE) clipped their labels in the lesson."""
    spec = {"layout": {"xaxis": {"title": {"text": "d_k"}}, "yaxis": {"automargin": False, "title": {"text": "v"}},
                       "xaxis2": {}}}  # fmt: skip
    out = lesson.margins_for_titles(spec)["layout"]
    assert out["xaxis"]["automargin"] is True and out["yaxis"]["automargin"] is False
    assert "automargin" not in out["xaxis2"]
