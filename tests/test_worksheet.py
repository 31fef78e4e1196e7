"""Worksheet PDFs (issue 19): they open, have one exercise page and one answer page per exercise,
carry the seeds and the Japanese text as text, embed the font, and every glyph they need exists."""

from __future__ import annotations

import functools
import io
import math
import re
from fractions import Fraction

import pytest
from pypdf import PdfReader

from attention_core.exercise import generate_exercise
from attention_core.exercise_text import MINUS, dot_product_text
from attention_ui.i18n import translate
from attention_ui.worksheet import font as font_module
from attention_ui.worksheet.worksheet import (
    MAX_TOTAL,
    WorksheetSettings,
    WorksheetSettingsError,
    build_worksheet,
    render_worksheet,
    worksheet_filename,
)


def pages_text(pdf_bytes: bytes) -> list[str]:
    reader = PdfReader(io.BytesIO(pdf_bytes))
    return [page.extract_text() for page in reader.pages]


def squash(text: str) -> str:
    """Extracted text without spaces and line breaks (their placement is the viewer's business)."""
    return re.sub(r"\s+", "", text)


@pytest.fixture(scope="module")
def ja_causal() -> tuple[WorksheetSettings, list[str]]:
    settings = WorksheetSettings(exercises=2, students=3, first_seed=40, lang="ja", causal=True)
    return settings, pages_text(build_worksheet(settings))


def test_japanese_worksheet_pages_seeds_and_text(ja_causal):
    settings, pages = ja_causal
    assert len(pages) == 2 * 6  # 6 exercise pages, then 6 answer pages
    exercise_pages, answer_pages = pages[:6], pages[6:]
    expected = [
        (sheet, number, 40 + (sheet - 1) * 2 + number - 1) for sheet in (1, 2, 3) for number in (1, 2)
    ]
    assert [(s, e, seed) for s, e, seed in settings.items()] == expected
    for (sheet, number, seed), page in zip(expected, exercise_pages, strict=True):
        flat = squash(page)
        assert f"問題{number}（全2問）" in flat
        assert f"用紙{sheet}" in flat and f"シード{seed}" in flat and "因果マスク" in flat
        assert "氏名" in flat and "注意重み" in flat and "手で計算する" in flat
        assert "解答" not in flat
    for (sheet, number, seed), page in zip(expected, answer_pages, strict=True):
        flat = squash(page)
        assert f"解答：用紙{sheet}の問題{number}" in flat
        assert f"--seed{seed}--maskcausal" in flat  # the command that prints it again
        assert "ステップ4：行ごとのsoftmax" in flat


def test_every_printed_number_is_the_exercises(ja_causal):
    settings, pages = ja_causal
    for k, (_, _, seed) in enumerate(settings.items()):
        ex = generate_exercise(seed, "causal")
        sheet_text, key_text = squash(pages[k]), squash(pages[6 + k])
        # the exercise page shows Q row by row, and the key the worked sums and the weights
        for row in ex.Q.tolist():
            assert "".join(str(v).replace("-", MINUS) for v in row) in sheet_text
        for i in range(ex.n):
            for j in range(ex.n):
                total = str(int(ex.scores[i, j])).replace("-", MINUS)
                assert (
                    squash(f"S[{i + 1},{j + 1}]={dot_product_text(ex.Q[i], ex.K[j], MINUS)}={total}")
                    in key_text
                )
            assert "".join(f"{w:.3f}" for w in ex.weights[i]) in key_text


def test_english_worksheet_without_mask():
    settings = WorksheetSettings(exercises=1, students=2, first_seed=7, lang="en")
    pages = pages_text(build_worksheet(settings))
    assert len(pages) == 4
    assert "Exercise 1 of 1" in pages[0] and "seed 7" in pages[0] and "seed 8" in pages[1]
    assert "no mask" in pages[0] and "Name" in pages[0]
    assert "Answer key: sheet 1, exercise 1" in pages[2] and "Answer key: sheet 2, exercise 1" in pages[3]
    assert "--seed 8 --mask none" in pages[3]
    assert worksheet_filename(settings) == "attention-worksheet-en-seeds-7-8.pdf"


@functools.cache
def _heaviest_seeds(count: int) -> list[int]:
    """Seeds whose answer page holds the most: n = 4, d_k = 9, d_v = 3, the longest worked sums."""
    heavy = []
    for seed in range(1500):
        ex = generate_exercise(seed)
        if (ex.n, ex.d_k, ex.d_v) == (4, 9, 3):
            longest = max(len(dot_product_text(ex.Q[i], ex.K[j])) for i in range(4) for j in range(4))
            heavy.append((longest, seed))
    return [seed for _, seed in sorted(heavy)[-count:]]


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("causal", [False, True])
def test_the_fullest_exercises_fit_one_page_each_and_no_glyph_is_missing(lang, causal):
    doc = None
    for seed in _heaviest_seeds(2):
        doc = render_worksheet(
            WorksheetSettings(exercises=1, students=1, first_seed=seed, lang=lang, causal=causal)
        )
        assert doc.page_no() == 2, f"seed {seed} overflowed its page"
        assert max(doc.content_bottom.values()) <= doc.h - doc.b_margin
        doc.output()  # subsetting the font is where missing glyphs are collected
        for font in doc.fonts.values():
            assert not font.missing_glyphs, [chr(c) for c in font.missing_glyphs]


def test_the_font_is_embedded_as_truetype():
    data = build_worksheet(WorksheetSettings(exercises=1, lang="ja"))
    reader = PdfReader(io.BytesIO(data))
    fonts = reader.pages[0]["/Resources"]["/Font"]
    for ref in fonts.values():
        font = ref.get_object()
        assert font["/Subtype"] == "/Type0" and "IPAexGothic" in font["/BaseFont"]
        descriptor = font["/DescendantFonts"][0].get_object()["/FontDescriptor"].get_object()
        assert "/FontFile2" in descriptor  # the TrueType program is inside the file
        assert "/ToUnicode" in font  # what makes the text extractable
    assert reader.metadata.title == translate("ja", "worksheet.doc_title")


@pytest.mark.parametrize(
    "kwargs, key",
    [
        ({"exercises": 0}, "worksheet.err_exercises"),
        ({"exercises": 7}, "worksheet.err_exercises"),
        ({"exercises": 2.0}, "worksheet.err_exercises"),
        ({"students": 0}, "worksheet.err_students"),
        ({"students": 61}, "worksheet.err_students"),
        ({"students": 60, "exercises": 4}, "worksheet.err_total"),
        ({"first_seed": -1}, "worksheet.err_seed"),
        ({"first_seed": 2**63 - 1, "exercises": 2}, "worksheet.err_seed"),
        ({"first_seed": True}, "worksheet.err_seed"),
        ({"lang": "fr"}, "worksheet.err_language"),
    ],
)
def test_bad_settings_are_refused_with_a_catalog_message(kwargs, key):
    with pytest.raises(WorksheetSettingsError) as info:
        WorksheetSettings(**kwargs)
    err = info.value
    assert err.key == key
    for lang in ("en", "ja"):
        assert translate(lang, err.key, **err.values)  # every placeholder is supplied
    assert str(err) == translate("en", key, **err.values)


def test_limits_allow_the_largest_class():
    assert WorksheetSettings(exercises=3, students=60).total == MAX_TOTAL
    assert WorksheetSettings(exercises=1, first_seed=2**63 - 1).seed(1, 1) == 2**63 - 1


def test_a_missing_font_package_gives_a_clear_error(monkeypatch):
    monkeypatch.setattr(font_module.importlib.util, "find_spec", lambda name: None)
    font_module.japanese_font_path.cache_clear()
    try:
        with pytest.raises(font_module.FontMissingError, match="requirements.txt"):
            font_module.japanese_font_path()
    finally:
        font_module.japanese_font_path.cache_clear()


def test_the_tolerances_the_answer_key_states_hold_for_a_student_who_follows_the_sheet():
    """The key says weights from the 4-decimal table may differ by 1 in the 3rd decimal, and outputs
    (from 3-decimal weights, given to 2 decimals) by at most 0.02. Simulate that student here.

    Bound: table values are off by ≤ 5e-5 and a row's sum is ≥ 1 (its maximum gives e^0 = 1
    exactly), so a weight before rounding is off by ≤ 2e-4 < 0.001; an output is off by
    ≤ n · (0.0005 + 0.0002) · 3 < 0.009 before rounding, and two roundings add ≤ 0.01.
    """
    assert "0.02" in translate("en", "worksheet.output_note") and "0.02" in translate(
        "ja", "worksheet.output_note"
    )
    for seed in range(400):
        for mask in ("none", "causal"):
            ex = generate_exercise(seed, mask)
            root = math.isqrt(ex.d_k)
            S = ex.Q.astype(int) @ ex.K.astype(int).T
            for i in range(ex.n):
                kept = [j for j in range(ex.n) if mask == "none" or j <= i]
                top = max(S[i, j] for j in kept)
                # the printed table (its values are checked against math.exp in test_exercise.py)
                table = {e.x: e.value for e in ex.exp_table}
                looked_up = [
                    table[Fraction(int(S[i, j] - top), root)] if j in kept else 0.0 for j in range(ex.n)
                ]
                weights = [round(v / sum(looked_up), 3) for v in looked_up]
                for j in range(ex.n):
                    assert abs(weights[j] - round(float(ex.weights[i, j]), 3)) <= 0.001 + 1e-12
                for c in range(ex.d_v):
                    student = round(sum(weights[j] * int(ex.V[j, c]) for j in range(ex.n)), 2)
                    assert abs(student - round(float(ex.output[i, c]), 2)) <= 0.02 + 1e-12
