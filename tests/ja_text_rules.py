"""The Japanese text rules of ``attention_ui/locales/glossary_ja.json`` as pure functions.

Each function takes one Japanese string (a catalog message, or LaTeX a page renders) and returns
the list of problems it finds, so a test can name every offending key at once. Used by
``tests/test_glossary.py`` (every ja catalog file) and the Japanese smoke test (rendered LaTeX).
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from pathlib import Path

GLOSSARY = Path(__file__).resolve().parent.parent / "attention_ui" / "locales" / "glossary_ja.json"

JA_CHAR = r"[\u3040-\u309f\u30a0-\u30fa\u30fc-\u30ff\u3400-\u4dbf\u4e00-\u9fff]"  # kana, kanji (not ・)
LATIN_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_'\-]*[A-Za-z0-9]|[A-Za-z]")
PLACEHOLDER = re.compile(r"\{([a-z_0-9]*)\}")
CODE_SPAN = re.compile(r"`[^`]*`")
MATH_SPAN = re.compile(r"\$[^$]+\$")
LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
# LaTeX groups whose content is read as words: \text{...} (text) and \mathrm/\operatorname (names)
LATEX_TEXT = re.compile(r"\\(text|textrm|textbf|mathrm|operatorname)\s*\{([^{}]*)\}")
# d_\text{model} and d_{\mathrm{model}}: the subscript is part of the symbol's name (only this one)
SUBSCRIPT_NAME = re.compile(r"d_\{?\\(?:text|mathrm)\{model\}\}?")
MATRIX_LETTERS = set("QKVXWASMPEHO")


@cache
def glossary() -> dict:
    return json.loads(GLOSSARY.read_text(encoding="utf-8"))


@cache
def _allowed() -> tuple[tuple[str, ...], frozenset[str]]:
    """Multi-word or punctuated names (removed first, longest first) and single allowed tokens."""
    lists = glossary()["allowed_latin"]
    names = [*lists["names"], *lists["math"], *lists["literal"]]
    phrases = tuple(sorted((n for n in names if not LATIN_TOKEN.fullmatch(n)), key=len, reverse=True))
    singles = frozenset(n for n in names if LATIN_TOKEN.fullmatch(n))
    return phrases, singles


def is_symbol(token: str) -> bool:
    """A mathematical symbol: one letter, a letter with an index (x0, d_k, d_model, q_i), or a
    product of matrix letters written side by side (QK, XW)."""
    if len(token) == 1 or "_" in token:
        return True
    if re.fullmatch(r"[A-Za-z][0-9]+", token):
        return True
    return len(token) <= 3 and set(token) <= MATRIX_LETTERS


def latin_problems(text: str) -> list[str]:
    """English words outside code, mathematics and the allow-lists (the glossary's Latin rule)."""
    text = SUBSCRIPT_NAME.sub(" ", text)  # d_\text{model} is a symbol's name, not a word
    problems = [
        f"English in LaTeX {m.group(0)!r}" for m in LATEX_TEXT.finditer(text) if _words_not_allowed(m)
    ]
    s = CODE_SPAN.sub(" ", text)
    s = MATH_SPAN.sub(" ", s)
    s = SUBSCRIPT_NAME.sub(" ", s)
    s = LATEX_TEXT.sub(" ", s)
    s = LATEX_COMMAND.sub(" ", s)
    s = PLACEHOLDER.sub(" ", s)
    s = re.sub(r"\d+(\.\d+)?e-?\d+", " ", s)  # numbers such as 1e-10
    phrases, singles = _allowed()
    for phrase in phrases:
        s = s.replace(phrase, " ")
    for token in LATIN_TOKEN.findall(s):
        if token not in singles and not is_symbol(token):
            problems.append(f"stray English {token!r}")
    return problems


def _words_not_allowed(match: re.Match) -> bool:
    kind, body = match.group(1), match.group(2)
    if kind in ("mathrm", "operatorname"):
        allowed = set(glossary()["allowed_latin"]["math"]) | {"Attention", "MultiHead", "LayerNorm", "Layer"}
        words = LATIN_TOKEN.findall(body)
        return any(w not in allowed and not is_symbol(w) for w in words)
    # \text{...}: no English word at all (numbers, symbols and Japanese are fine)
    _, singles = _allowed()
    return any(len(w) > 1 and w not in singles for w in LATIN_TOKEN.findall(body))


def forbidden_problems(text: str) -> list[str]:
    """Variants the glossary forbids, with the term to use instead."""
    problems = []
    for term in glossary()["terms"]:
        for variant in term.get("forbidden", []):
            if variant in text:
                problems.append(f"{variant!r} (use {term['ja']!r} for {term['concept']})")
        for pattern in term.get("forbidden_regex", []):
            for m in re.finditer(pattern, text):
                problems.append(f"{m.group(0)!r} (use {term['ja']!r} for {term['concept']})")
    return problems


def _visible(text: str) -> str:
    """The text as the reader sees its spacing: code and formulas stand for one Latin letter,
    placeholders for a digit (numbers) or a kana (Japanese text), Markdown emphasis removed."""
    text_ph = set(glossary()["text_placeholders"])
    s = CODE_SPAN.sub("x", text)
    s = MATH_SPAN.sub("x", s)
    s = PLACEHOLDER.sub(lambda m: "あ" if m.group(1) in text_ph else "0", s)
    return s.replace("*", "")


def spacing_problems(text: str) -> list[str]:
    """A Japanese character touching a half-width digit or Latin letter (the glossary's spacing rule)."""
    s = _visible(text)
    bad = re.findall(JA_CHAR + r"[A-Za-z0-9]|[A-Za-z0-9]" + JA_CHAR, s)
    return [f"no space in {b!r}" for b in bad]


def punctuation_problems(text: str) -> list[str]:
    """Half-width colons, ?/! after Japanese, half-width parentheses around Japanese text, a
    half-width space after full-width punctuation (``**マスク。** マスク``: write ``**マスク**。マスク``)."""
    s = _visible(text)
    problems = []
    if ":" in s:
        problems.append("half-width colon (use ：)")
    problems += [f"space after {m.strip()!r}" for m in re.findall(r"[。、] ", s)]
    problems += [f"half-width {m!r}" for m in re.findall(JA_CHAR + r"[?!]", s)]
    problems += [f"half-width parentheses {m!r}" for m in re.findall(r"\([^()]*" + JA_CHAR + r"[^()]*\)", s)]
    return problems


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "PS"


def emphasis_problems(text: str) -> list[str]:
    """``**bold**`` that CommonMark would not render: a closing ** after punctuation followed by a
    letter (e.g. ``**文（X）**を``), or an opening ** before punctuation preceded by a letter."""
    problems = []
    text_ph = set(glossary()["text_placeholders"])
    text = PLACEHOLDER.sub(lambda m: "あ" if m.group(1) in text_ph else "0", text)
    positions = [m.start() for m in re.finditer(r"\*\*", text)]
    for k, i in enumerate(positions):
        before = text[i - 1] if i > 0 else " "
        after = text[i + 2] if i + 2 < len(text) else " "
        opening = k % 2 == 0
        if opening and _is_punct(after) and not (before.isspace() or _is_punct(before)):
            problems.append(f"opening ** before {after!r} after {before!r}")
        if not opening and _is_punct(before) and not (after.isspace() or _is_punct(after)):
            problems.append(f"closing ** after {before!r} before {after!r}")
    return problems


def word_space_problems(text: str) -> list[str]:
    """A half-width space between two Japanese characters, as a filled template can make
    (「マスク 因果 での生成」): Japanese is written without spaces between words."""
    return [f"space between words in {m!r}" for m in re.findall(JA_CHAR + " +" + JA_CHAR, text)]


def code_term_problems(text: str) -> list[str]:
    """A term or name in backticks (the glossary's code rule): backticks are for code, commands and
    literal labels, so `RoPE` or `attention sink` reads as if it were code."""
    lists = glossary()["allowed_latin"]
    names = set(lists["names"]) | set(lists["math"])
    variants = {v for term in glossary()["terms"] for v in term.get("forbidden", [])}
    return [
        f"term in backticks {m.group(0)!r}"
        for m in CODE_SPAN.finditer(text)
        if m.group(0)[1:-1].strip() in names | variants
    ]
