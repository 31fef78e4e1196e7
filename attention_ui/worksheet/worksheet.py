"""Printable worksheets: hand-sized attention exercises for a class, then the answer key.

One call builds the PDF::

    pdf_bytes = build_worksheet(WorksheetSettings(exercises=3, students=30, first_seed=100, lang="ja"))

Sheet s (counting from 1) gets the consecutive seeds ``first_seed + (s−1)·exercises`` onwards, one
per exercise, so every student has a different variant and any sheet can be printed again from its
seed (``python -m attention_core exercise --seed S``). The exercise pages come first, one exercise
per page with room to write, sheet after sheet; the answer key follows on its own pages, one
exercise per page in the same order, with every worked step. Matrices are drawn as tables.

Every number comes from :func:`attention_core.exercise.generate_exercise`; this module only lays
them out. Texts come from the ``worksheet`` catalog; ``^T`` / ``^[x − max]`` mark superscripts and
``_k`` a subscript (one character), because the font has no ready-made ᵀ or ₖ glyph.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from fpdf import FPDF
from fpdf.enums import WrapMode, XPos, YPos

from attention_core.config import MAX_SEED
from attention_core.exercise import WEIGHT_DECIMALS, Exercise, generate_exercise
from attention_core.exercise_text import MINUS, decimal_text, dot_product_text, fraction_text, int_text
from attention_core.exercise_text import weighted_sum_text as _weighted_sum_text
from attention_ui.i18n import LANGUAGES, translate
from attention_ui.program.consequences import LETTERS, consequences
from attention_ui.worksheet.font import FONT_FAMILY, japanese_font_path

# Limits: a class of 60, up to 6 exercises each, but at most 180 exercises (360 pages) per file so
# one download stays a few seconds of work on a shared server.
MAX_EXERCISES = 6
MAX_STUDENTS = 60
MAX_TOTAL = 180
OUTPUT_DECIMALS = 2  # what the sheet asks for; the weights' 3 come from the core module

# Page layout, in millimetres and points. A4 portrait with 15 mm margins leaves 180 x 267 mm.
PAGE_FORMAT = "A4"
MARGIN = 15.0
TITLE_PT = 15.0
TEXT_PT = 9.5
SMALL_PT = 8.0
GRID_PT = 9.0
LINE = 4.6  # line height of TEXT_PT text
SMALL_LINE = 3.5  # line height of SMALL_PT text
CELL_H = 5.3  # a printed number's table row
WORK_CELL_W = 17.0  # an empty cell to write a 3-decimal number into by hand
WORK_CELL_H = 10.0
LABEL_W = 6.0  # the row-label column (q1, k2, ...)
CELL_PAD = 2.2  # horizontal room around the widest number of a column
GAP = 4.5  # between blocks on one line
TITLE_H = 5.0  # a table's title above it
GREY = (110, 110, 110)
RULE = (150, 150, 150)

_MARKUP = re.compile(r"\^\[([^\]]*)\]|\^(.)|_(.)")
# Markup characters inside inserted values stand for themselves: they travel as private-use
# characters through the markup parser and are turned back afterwards.
_PROTECT = str.maketrans({"^": "\ue000", "_": "\ue001"})
_UNPROTECT = str.maketrans({"\ue000": "^", "\ue001": "_"})


class WorksheetSettingsError(ValueError):
    """Settings the worksheet refuses. ``key``/``values`` give the message in the page's language."""

    def __init__(self, key: str, **values: object) -> None:
        self.key = key
        self.values = values
        super().__init__(translate("en", key, **values))


@dataclass(frozen=True)
class WorksheetSettings:
    """What a teacher chooses; validated once. Hashable, so a page can cache the PDF on it."""

    exercises: int = 3  # per student
    students: int = 1  # one sheet (variant) each
    first_seed: int = 0
    lang: str = "en"
    causal: bool = False  # causal mask on every exercise, or none
    code: bool = False  # a page of exam code questions per sheet, and their key with every consequence

    def __post_init__(self) -> None:
        _check_whole("worksheet.err_exercises", self.exercises, 1, MAX_EXERCISES)
        _check_whole("worksheet.err_students", self.students, 1, MAX_STUDENTS)
        if self.total > MAX_TOTAL:
            raise WorksheetSettingsError(
                "worksheet.err_total",
                hi=MAX_TOTAL,
                students=self.students,
                exercises=self.exercises,
                total=self.total,
            )
        last_first = MAX_SEED - self.total + 1
        if isinstance(self.first_seed, bool) or not isinstance(self.first_seed, int):
            raise WorksheetSettingsError("worksheet.err_seed", hi=last_first)
        if not 0 <= self.first_seed <= last_first:
            raise WorksheetSettingsError("worksheet.err_seed", hi=last_first)
        if self.lang not in LANGUAGES:
            raise WorksheetSettingsError("worksheet.err_language")
        if not isinstance(self.causal, bool):
            raise TypeError("causal must be True or False")

    @property
    def total(self) -> int:
        return self.exercises * self.students

    @property
    def mask(self) -> str:
        return "causal" if self.causal else "none"

    def seed(self, sheet: int, number: int) -> int:
        """The seed of exercise ``number`` on sheet ``sheet`` (both from 1)."""
        return self.first_seed + (sheet - 1) * self.exercises + (number - 1)

    def items(self) -> list[tuple[int, int, int]]:
        """(sheet, exercise number, seed) in print order."""
        return [
            (s, e, self.seed(s, e)) for s in range(1, self.students + 1) for e in range(1, self.exercises + 1)
        ]


def worksheet_filename(settings: WorksheetSettings) -> str:
    last = settings.seed(settings.students, settings.exercises)
    return f"attention-worksheet-{settings.lang}-seeds-{settings.first_seed}-{last}.pdf"


def build_worksheet(settings: WorksheetSettings) -> bytes:
    """The worksheet PDF: all exercise pages, then all answer pages (one page per exercise each)."""
    return bytes(render_worksheet(settings).output())


def render_worksheet(settings: WorksheetSettings) -> FPDF:
    """The laid-out document (``build_worksheet`` without serialising it, for tests)."""
    items = [
        (sheet, number, generate_exercise(seed, settings.mask)) for sheet, number, seed in settings.items()
    ]
    pdf = _Document(settings.lang)
    pdf.set_title(pdf.t("worksheet.doc_title"))
    pdf.set_subject(pdf.t("worksheet.doc_subject"))
    pdf.set_author("Attention Lab")
    pdf.set_creator("Attention Lab")
    pdf.set_lang(settings.lang)
    for sheet, number, ex in items:
        pdf.new_page("worksheet.footer_sheet")
        _exercise_page(pdf, ex, sheet, number, settings.exercises)
        pdf.content_bottom[pdf.page_no()] = pdf.get_y()
    code = (
        {sheet: _code_questions(settings, sheet) for sheet in range(1, settings.students + 1)}
        if settings.code
        else {}
    )
    for sheet, questions in code.items():
        pdf.new_page("worksheet.footer_sheet")
        _code_page(pdf, sheet, questions)
    for sheet, number, ex in items:
        pdf.new_page("worksheet.footer_key")
        _answer_page(pdf, ex, sheet, number)
        pdf.content_bottom[pdf.page_no()] = pdf.get_y()
    for sheet, questions in code.items():
        pdf.new_page("worksheet.footer_key")
        _code_key(pdf, sheet, questions)
    return pdf


# ---- exam code questions (issue 43) ----------------------------------------------------------------

CODE_PER_SHEET = 3  # questions on a sheet's code page
CODE_PT, CODE_LINE = 8.0, 3.4  # the program and the fragments, in Courier (they are ASCII)


def _code_questions(settings: WorksheetSettings, sheet: int):
    """The sheet's code questions on the page language's sample sentence (causal mask, one [PAD]),
    their options in the order of the sheet's first seed."""
    from attention_core import AttentionConfig, tokenize
    from attention_core.codegen_questions import code_questions

    tokens = tokenize(translate(settings.lang, "playground.default_text"), max_tokens=12).tokens
    config = AttentionConfig(mask="causal+padding", pad=1)
    return code_questions(config, tokens, seed=settings.seed(sheet, 1))[:CODE_PER_SHEET]


def _code(pdf: _Document, text: str) -> None:
    with pdf.local_context():
        pdf.set_font("Courier", size=CODE_PT)
        for line in text.splitlines() or [""]:
            pdf.set_x(pdf.l_margin)
            pdf.multi_cell(pdf.epw, CODE_LINE, line or " ", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(1)


def _code_page(pdf: _Document, sheet: int, questions) -> None:
    t = pdf.t
    _heading(pdf, f"{t('worksheet.doc_title')}  ·  {t('code.ws_code_title')}")
    _paragraph(pdf, t("code.ws_code_intro"))
    _paragraph(pdf, _protect(t("code.q_context_note")), SMALL_PT, SMALL_LINE, grey=True)
    for number, q in enumerate(questions, 1):
        _step_title(pdf, _protect(f"{t('code.q_title', number=number)} · {t('code.q_' + q.template)}"))
        _code(pdf, q.program_with_blank())
        for i, option in enumerate(q.options):
            _paragraph(pdf, t("code.q_option", letter=LETTERS[i]), SMALL_PT, SMALL_LINE)
            _code(pdf, "\n".join(option.fragment))


def _code_key(pdf: _Document, sheet: int, questions) -> None:
    """Each question's right fragment and what every fragment does on the sentence, from its run."""
    t = pdf.t
    _heading(pdf, f"{t('code.ws_key_title')}  ·  {sheet}")
    for number, q in enumerate(questions, 1):
        _step_title(pdf, _protect(f"{t('code.q_title', number=number)} · {t('code.q_' + q.template)}"))
        _paragraph(pdf, t("code.q_right", letter=LETTERS[q.answer_index]))
        for i, option in enumerate(q.options):
            _paragraph(pdf, t("code.q_option", letter=LETTERS[i]), SMALL_PT, SMALL_LINE)
            _code(pdf, "\n".join(option.fragment))
            for line in consequences(pdf.t, q, option):
                _paragraph(pdf, _protect("· " + line.replace("`", "")), SMALL_PT, SMALL_LINE)
            if option.mutation is not None:
                reason = t("code.c_why", why=t(f"code.mut_{option.mutation}_why"))
                _paragraph(pdf, _protect(reason.replace("`", "")), SMALL_PT, SMALL_LINE, grey=True)


def _check_whole(key: str, value: object, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise WorksheetSettingsError(key, lo=lo, hi=hi)


# ---- the document and its drawing primitives ------------------------------------------------------


class _Document(FPDF):
    def __init__(self, lang: str) -> None:
        super().__init__(orientation="P", unit="mm", format=PAGE_FORMAT)
        self.lang = lang
        self.footer_keys: dict[int, str] = {}  # page number -> footer message
        self.footer_key = "worksheet.footer_sheet"  # for a page the layout overflowed onto
        self.content_bottom: dict[int, float] = {}  # page number -> where its content ends (mm)
        self.set_margins(MARGIN, MARGIN, MARGIN)
        self.set_auto_page_break(True, margin=MARGIN)
        self.add_font(FONT_FAMILY, "", str(japanese_font_path()))
        self.set_font(FONT_FAMILY, size=TEXT_PT)
        self.wrapmode = WrapMode.CHAR if lang == "ja" else WrapMode.WORD

    def t(self, key: str, /, **values: object) -> str:
        """A catalog message; the values are protected from the markup (``attention_core`` stays whole)."""
        return translate(self.lang, key, **{k: _protect(v) for k, v in values.items()})

    def new_page(self, footer_key: str) -> None:
        """Start a page whose footer reads ``footer_key`` (fpdf draws a footer when the page ends)."""
        self.add_page()
        self.footer_keys[self.page_no()] = self.footer_key = footer_key

    def footer(self) -> None:
        with self.local_context():
            self.set_auto_page_break(False)
            self.set_font(FONT_FAMILY, size=SMALL_PT)
            self.set_text_color(*GREY)
            self.set_xy(MARGIN, self.h - MARGIN + 4)
            self.cell(
                self.epw,
                SMALL_LINE,
                self.t(self.footer_keys.get(self.page_no(), self.footer_key), page=self.page_no()),
                align="C",
            )
        self.set_auto_page_break(True, margin=MARGIN)


def _protect(value: object) -> str:
    return str(value).translate(_PROTECT)


def _segments(text: str) -> list[tuple[str, str]]:
    """``"QK^T / √d_k"`` -> [("QK", "LINE"), ("T", "SUP"), (" / √d", "LINE"), ("k", "SUB")]."""
    parts: list[tuple[str, str]] = []
    pos = 0
    for m in _MARKUP.finditer(text):
        if m.start() > pos:
            parts.append((text[pos : m.start()], "LINE"))
        group, sup, sub = m.groups()
        parts.append((group if group is not None else sup, "SUP") if sub is None else (sub, "SUB"))
        pos = m.end()
    if pos < len(text):
        parts.append((text[pos:], "LINE"))
    return [(seg.translate(_UNPROTECT), vpos) for seg, vpos in parts]


def _rich_width(pdf: FPDF, text: str) -> float:
    width = 0.0
    for seg, vpos in _segments(text):
        scale = pdf.sup_scale if vpos == "SUP" else pdf.sub_scale if vpos == "SUB" else 1.0
        width += pdf.get_string_width(seg) * scale
    return width


def _rich_cell(pdf: FPDF, x: float, y: float, text: str, h: float) -> None:
    """One line of marked-up text at (x, y), without wrapping."""
    pdf.set_xy(x, y)
    margin, pdf.c_margin = pdf.c_margin, 0.0  # segments sit flush; cell() would pad each one
    for seg, vpos in _segments(text):
        pdf.char_vpos = vpos
        pdf.cell(text=seg, h=h, new_x=XPos.RIGHT, new_y=YPos.TOP)
    pdf.char_vpos = "LINE"
    pdf.c_margin = margin


def _paragraph(
    pdf: _Document, text: str, size: float = TEXT_PT, line: float = LINE, grey: bool = False
) -> None:
    """Marked-up text across the page width, wrapped (by character in Japanese, by word in English)."""
    with pdf.local_context():
        pdf.set_font_size(size)
        if grey:
            pdf.set_text_color(*GREY)
        pdf.set_x(pdf.l_margin)
        for seg, vpos in _segments(text):
            pdf.char_vpos = vpos
            pdf.write(line, seg, wrapmode=pdf.wrapmode)
        pdf.char_vpos = "LINE"
    pdf.ln(line)


@dataclass
class _Block:
    """Something drawn at (x, y) that needs ``width`` x ``height`` millimetres."""

    width: float
    height: float
    draw: Callable[[float, float], None]


def _flow(pdf: FPDF, blocks: list[_Block], gap_after: float = 3.0) -> None:
    """Place blocks left to right from the current line, starting a new line when one does not fit."""
    x, y, line_h = pdf.l_margin, pdf.get_y(), 0.0
    right = pdf.w - pdf.r_margin
    for block in blocks:
        if x > pdf.l_margin and x + block.width > right + 0.01:
            x, y, line_h = pdf.l_margin, y + line_h + GAP * 0.6, 0.0
        block.draw(x, y)
        x += block.width + GAP
        line_h = max(line_h, block.height)
    pdf.set_xy(pdf.l_margin, y + line_h + gap_after)


def _grid(
    pdf: FPDF,
    title: str,
    cells: list[list[str]],
    row_labels: list[str],
    col_labels: list[str] | None = None,
    cell_w: float | None = None,
    cell_h: float = CELL_H,
    size: float = GRID_PT,
) -> _Block:
    """A titled table: grey row (and column) labels, the values centred in bordered cells."""
    with pdf.local_context():
        pdf.set_font_size(size)
        widest = max((pdf.get_string_width(c) for row in cells for c in row), default=0.0)
        label_w = max([LABEL_W] + [_rich_width(pdf, s) + 1.5 for s in row_labels])
        title_w = _rich_width(pdf, title)
    n_cols = len(cells[0]) if cells else len(col_labels or [])
    cw = cell_w if cell_w is not None else max(6.0, widest + CELL_PAD)
    rows = len(cells)
    head = cell_h if col_labels else 0.0
    width = max(label_w + n_cols * cw, title_w)
    height = TITLE_H + head + rows * cell_h

    def draw(x: float, y: float) -> None:
        with pdf.local_context():
            pdf.set_font_size(size)
            _rich_cell(pdf, x, y, title, TITLE_H - 0.8)
            top = y + TITLE_H
            left = x + label_w
            pdf.set_text_color(*GREY)
            if col_labels:
                for j, label in enumerate(col_labels):
                    _centred(pdf, left + j * cw, top, cw, cell_h, label)
                top += cell_h
            for i, label in enumerate(row_labels):
                if _MARKUP.search(label):
                    _rich_cell(pdf, left - 1.0 - _rich_width(pdf, label), top + i * cell_h, label, cell_h)
                else:
                    _text_at(pdf, left - 1.0 - pdf.get_string_width(label), top + i * cell_h, cell_h, label)
            pdf.set_text_color(0, 0, 0)
            for i, row in enumerate(cells):
                for j, value in enumerate(row):
                    _centred(pdf, left + j * cw, top + i * cell_h, cw, cell_h, value)
            # the rules: one line per row and column boundary rather than a box per cell
            pdf.set_draw_color(*RULE)
            pdf.set_line_width(0.2)
            right, bottom = left + n_cols * cw, top + rows * cell_h
            for i in range(rows + 1):
                pdf.line(left, top + i * cell_h, right, top + i * cell_h)
            for j in range(n_cols + 1):
                pdf.line(left + j * cw, top, left + j * cw, bottom)

    return _Block(width, height, draw)


def _text_at(pdf: FPDF, x: float, y: float, h: float, text: str) -> None:
    """Text whose line box of height ``h`` starts at (x, y), the way ``cell`` places it.

    ``FPDF.text`` skips cell()'s line-breaking machinery: about 2.5 times faster, and a class set
    draws tens of thousands of numbers.
    """
    if text:
        pdf.text(x, y + 0.5 * h + 0.3 * pdf.font_size, text)


def _centred(pdf: FPDF, x: float, y: float, w: float, h: float, text: str) -> None:
    if text:
        _text_at(pdf, x + (w - pdf.get_string_width(text)) / 2, y, h, text)


def _lines_block(pdf: FPDF, lines: list[str], max_width: float, size: float = SMALL_PT) -> _Block:
    """Short lines (the worked sums) in as many columns as fit into ``max_width``."""
    with pdf.local_context():
        pdf.set_font_size(size)
        col_w = max(pdf.get_string_width(s) for s in lines) + GAP
    columns = max(1, min(len(lines), int((max_width + GAP) // col_w)))
    per_col = -(-len(lines) // columns)
    width = columns * col_w - GAP
    height = per_col * SMALL_LINE

    def draw(x: float, y: float) -> None:
        with pdf.local_context():
            pdf.set_font_size(size)
            for k, text in enumerate(lines):
                _text_at(pdf, x + (k // per_col) * col_w, y + (k % per_col) * SMALL_LINE, SMALL_LINE, text)

    return _Block(width, height, draw)


def _text_block(pdf: _Document, text: str, width: float) -> _Block:
    """A short paragraph (no markup) wrapped into ``width``, its top level with a table's title."""
    with pdf.local_context():
        pdf.set_font_size(TEXT_PT)
        lines = pdf.multi_cell(width, LINE, text, dry_run=True, output="LINES", wrapmode=pdf.wrapmode)

    def draw(x: float, y: float) -> None:
        with pdf.local_context():
            pdf.set_font_size(TEXT_PT)
            pdf.set_xy(x, y)
            pdf.multi_cell(width, LINE, text, wrapmode=pdf.wrapmode)

    return _Block(width, len(lines) * LINE, draw)


def _beside(pdf: FPDF, grid: _Block, lines: list[str]) -> list[_Block]:
    """A table and its worked sums: the sums right of the table if they fit there, else below it."""
    room = pdf.epw - grid.width - GAP
    block = _lines_block(pdf, lines, room)
    if block.width > room:
        block = _lines_block(pdf, lines, pdf.epw)
    return [grid, block]


def _heading(pdf: _Document, text: str) -> None:
    with pdf.local_context():
        pdf.set_font_size(TITLE_PT)
        pdf.set_x(pdf.l_margin)
        pdf.cell(pdf.epw, 8, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_draw_color(*RULE)
    pdf.line(pdf.l_margin, pdf.get_y() + 0.5, pdf.w - pdf.r_margin, pdf.get_y() + 0.5)
    pdf.ln(2.5)


def _step_title(pdf: _Document, text: str) -> None:
    pdf.ln(0.8)
    with pdf.local_context():
        pdf.set_font_size(TEXT_PT + 0.5)
        _rich_cell(pdf, pdf.l_margin, pdf.get_y(), text, LINE + 0.4)
    pdf.set_xy(pdf.l_margin, pdf.get_y() + LINE + 1.2)


# ---- the two kinds of page -------------------------------------------------------------------------


def _labels(prefix: str, count: int) -> list[str]:
    return [f"{prefix}{i + 1}" for i in range(count)]


def _blank(rows: int, cols: int) -> list[list[str]]:
    return [[""] * cols for _ in range(rows)]


def _ints(a) -> list[list[str]]:
    return [[int_text(v, MINUS) for v in row] for row in a.tolist()]


def _exercise_page(pdf: _Document, ex: Exercise, sheet: int, number: int, total: int) -> None:
    t, n = pdf.t, ex.n
    mask_name = t(f"worksheet.mask_{ex.mask}")
    _heading(
        pdf, f"{t('worksheet.doc_title')}  ·  {t('worksheet.exercise_heading', number=number, total=total)}"
    )
    y = pdf.get_y()
    pdf.cell(text=t("worksheet.sheet_line", sheet=sheet, seed=ex.seed, mask=mask_name))
    name = t("worksheet.name_field")
    name_x = pdf.w - pdf.r_margin - 70
    pdf.set_xy(name_x, y)
    pdf.cell(text=name)
    pdf.set_draw_color(0, 0, 0)
    pdf.line(name_x + pdf.get_string_width(name) + 2, y + LINE, pdf.w - pdf.r_margin, y + LINE)
    pdf.set_xy(pdf.l_margin, y + LINE + 2.5)

    _paragraph(pdf, t("worksheet.given", n=n, d_k=ex.d_k, root=ex.root_d_k, d_v=ex.d_v))
    pdf.ln(1)
    _paragraph(pdf, t("worksheet.task_intro"))
    for key in ("task_scores", "task_scale", f"task_mask_{ex.mask}", "task_softmax", "task_output"):
        _paragraph(pdf, t(f"worksheet.{key}", root=ex.root_d_k))
    pdf.ln(2)

    _flow(
        pdf,
        [
            _grid(pdf, t("worksheet.grid_q"), _ints(ex.Q), _labels("q", n)),
            _grid(pdf, t("worksheet.grid_k"), _ints(ex.K), _labels("k", n)),
            _grid(pdf, t("worksheet.grid_v"), _ints(ex.V), _labels("v", n)),
        ],
    )
    table = ex.exp_table
    _flow(
        pdf,
        [
            _grid(
                pdf,
                t("worksheet.exp_table_title"),
                [[fraction_text(e.x, MINUS) for e in table], [f"{e.value:.4f}" for e in table]],
                ["x", "e^x"],
            )
        ],
        gap_after=4,
    )
    work = dict(cell_w=WORK_CELL_W, cell_h=WORK_CELL_H)
    _flow(
        pdf,
        [
            _grid(pdf, t("worksheet.grid_scores"), _blank(n, n), _labels("q", n), _labels("k", n), **work),
            _grid(pdf, t("worksheet.grid_scaled"), _blank(n, n), _labels("q", n), _labels("k", n), **work),
            _grid(pdf, t("worksheet.grid_weights"), _blank(n, n), _labels("q", n), _labels("k", n), **work),
            _grid(
                pdf,
                t("worksheet.grid_output"),
                _blank(n, ex.d_v),
                _labels("o", n),
                _labels("", ex.d_v),
                **work,
            ),
        ],
    )


def _answer_page(pdf: _Document, ex: Exercise, sheet: int, number: int) -> None:
    t, n = pdf.t, ex.n
    _heading(pdf, t("worksheet.answer_heading", sheet=sheet, number=number))
    mask_name = t(f"worksheet.mask_{ex.mask}")
    command = f"python -m attention_core exercise --seed {ex.seed} --mask {ex.mask}"
    _paragraph(
        pdf, t("worksheet.answer_seed", seed=ex.seed, mask=mask_name, command=command), SMALL_PT, SMALL_LINE
    )
    pdf.ln(1)
    qk = _labels("q", n), _labels("k", n)

    _step_title(pdf, t("worksheet.step_scores"))
    sums = [
        f"S[{i + 1},{j + 1}] = {dot_product_text(ex.Q[i], ex.K[j], MINUS)} = {int_text(ex.scores[i, j], MINUS)}"
        for i in range(n)
        for j in range(n)
    ]
    _flow(
        pdf, _beside(pdf, _grid(pdf, t("worksheet.grid_scores"), _ints(ex.scores), *qk), sums), gap_after=0.5
    )
    _paragraph(pdf, t("worksheet.zero_terms"), SMALL_PT, SMALL_LINE, grey=True)

    scaled = [[fraction_text(ex.scaled_exact(i, j), MINUS) for j in range(n)] for i in range(n)]
    _step_title(pdf, t("worksheet.step_scaled", root=ex.root_d_k))
    blocks = [_grid(pdf, t("worksheet.grid_scaled"), scaled, *qk)]
    if ex.mask == "causal":
        masked = [[scaled[i][j] if ex.allowed[i, j] else f"{MINUS}∞" for j in range(n)] for i in range(n)]
        blocks.append(_grid(pdf, t("worksheet.step_masked_causal"), masked, *qk))
    else:  # the sentence takes the place of the masked table, beside the scaled one
        blocks.append(_text_block(pdf, t("worksheet.step_masked_none"), pdf.epw - blocks[0].width - GAP))
    _flow(pdf, blocks, gap_after=1)

    _step_title(pdf, t("worksheet.step_softmax"))
    shifted = [
        [fraction_text(x, MINUS) if (x := ex.shifted_exact(i, j)) is not None else "—" for j in range(n)]
        for i in range(n)
    ]
    exps = [
        [f"{ex.exp_terms[i, j]:.4f}" if ex.allowed[i, j] else "0" for j in range(n)]
        + [f"{ex.row_sums[i]:.4f}"]
        for i in range(n)
    ]
    weights = [[decimal_text(w, WEIGHT_DECIMALS, MINUS) for w in row] for row in ex.weights.tolist()]
    _flow(
        pdf,
        [
            _grid(pdf, t("worksheet.grid_shifted"), shifted, *qk),
            _grid(pdf, t("worksheet.grid_exp"), exps, qk[0], qk[1] + [t("worksheet.sum_column")]),
            _grid(pdf, t("worksheet.grid_weights"), weights, *qk),
        ],
        gap_after=0.5,
    )
    _paragraph(pdf, t("worksheet.weights_note"), SMALL_PT, SMALL_LINE, grey=True)

    _step_title(pdf, t("worksheet.step_output"))
    rounded = ex.output_from_rounded_weights
    sums = [
        f"O[{i + 1},{c + 1}] = {_weighted_sum_text(ex.weights[i], ex.V[:, c], WEIGHT_DECIMALS, MINUS)}"
        f" = {decimal_text(rounded[i, c], WEIGHT_DECIMALS, MINUS)}"
        for i in range(n)
        for c in range(ex.d_v)
    ]
    output = [[decimal_text(v, OUTPUT_DECIMALS, MINUS) for v in row] for row in ex.output.tolist()]
    grid = _grid(pdf, t("worksheet.grid_output"), output, _labels("o", n), _labels("", ex.d_v))
    _flow(pdf, _beside(pdf, grid, sums), gap_after=0.5)
    _paragraph(pdf, t("worksheet.output_note"), SMALL_PT, SMALL_LINE, grey=True)
