"""Split a sentence into display tokens.

The rules are chosen for teaching, not for a real model: words and numbers for scripts that use
spaces, one token per character for Han, Hiragana, Katakana and Hangul (which do not), and every
punctuation mark or symbol on its own. Tokens keep exactly the characters the user typed.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from .config import AttentionConfigError

DEFAULT_MAX_TOKENS = 64
# Longer input is cut before it is scanned, so a pasted web page costs nothing.
MAX_INPUT_CHARS = 20_000

_ZWJ = "\u200d"

# Blocks whose characters are written without spaces: each character becomes a token.
_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3005, 0x3007),  # 々 〆 〇
    (0x3040, 0x30FF),  # Hiragana, Katakana (including ー)
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xA960, 0xA97F),  # Hangul Jamo extended A
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xD7B0, 0xD7FF),  # Hangul Jamo extended B
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x3134F),  # CJK extensions B–G
)


@dataclass(frozen=True)
class Tokenization:
    """The tokens kept, plus what was cut or dropped so the UI can say so."""

    tokens: tuple[str, ...]
    total_tokens: int  # tokens found before truncation
    max_tokens: int
    removed_controls: int  # control / invisible characters that were dropped
    chars_cut: int  # characters beyond MAX_INPUT_CHARS that were not read

    @property
    def truncated(self) -> bool:
        return self.total_tokens > len(self.tokens) or self.chars_cut > 0


def is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() and not is_cjk(ch)


def _joins_previous(ch: str) -> bool:
    """Characters that never stand alone: combining marks, variation selectors, emoji modifiers."""
    cp = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Mc", "Me")
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors
        or 0xE0100 <= cp <= 0xE01EF
        or 0x1F3FB <= cp <= 0x1F3FF  # skin-tone modifiers
        or 0xE0020 <= cp <= 0xE007F  # tag characters (subdivision flags)
    )


def _is_regional_indicator(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _is_tag(ch: str) -> bool:
    """Tag characters (format, so otherwise invisible) spell a subdivision flag after 🏴 (U+1F3F4)."""
    return 0xE0020 <= ord(ch) <= 0xE007F


def _is_invisible(ch: str) -> bool:
    # Cc: control (NUL, tab is handled as space before this), Cf: format (zero-width space, bidi
    # overrides), Cs/Co/Cn: surrogates, private use, unassigned. ZWJ is handled separately.
    return unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") and ch != _ZWJ


_INNER_MARKS = "'’.,"


def _mark_joins(before: str, mark: str, after: str) -> bool:
    if mark in "'’":
        return before.isalpha() and after.isalpha()
    return before.isdigit() and after.isdigit()


def tokenize(text: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> Tokenization:
    """Split ``text`` into tokens, keeping at most ``max_tokens`` of them.

    Returns a :class:`Tokenization` whose ``tokens`` are substrings of the input (control and
    invisible characters removed) and which reports how many tokens were found in all.
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    chars_cut = max(0, len(text) - MAX_INPUT_CHARS)
    text = text[:MAX_INPUT_CHARS]

    tokens: list[str] = []
    current: list[str] = []  # characters of the token being built
    kind = ""  # "word", "single" (one symbol, may take modifiers) or ""
    removed = 0

    def flush() -> None:
        nonlocal kind, removed
        if kind == "zwj":  # a ZWJ with nothing after it joins nothing: drop it like other invisibles
            current.pop()
            removed += 1
        if kind == "word-mark":  # a held mark that nothing joined: it is a token of its own
            mark = current.pop()
            tokens.append("".join(current))
            current[:] = [mark]
        if current:
            tokens.append("".join(current))
            current.clear()
        kind = ""

    for ch in text:
        if ch.isspace():
            flush()
            continue
        if ch == _ZWJ:
            # Joins two emoji into one picture; elsewhere it is invisible and dropped.
            if current and kind == "single":
                current.append(ch)
                kind = "zwj"
            else:
                removed += 1  # like any other invisible character: dropped, and it does not glue words
                flush()
            continue
        if _is_invisible(ch) and not (kind == "single" and current[0] == "\U0001f3f4" and _is_tag(ch)):
            removed += 1  # dropped, and treated like a space so it cannot glue words together
            flush()
            continue
        if current and _joins_previous(ch):
            current.append(ch)
            continue
        if kind == "zwj":
            if unicodedata.category(ch) == "So":  # another emoji: part of the same picture
                current.append(ch)
                kind = "single"
                continue
            current.pop()  # a letter, digit or mark cannot be joined to an emoji: drop the ZWJ
            removed += 1
            kind = "single"
        if (
            kind == "single"
            and len(current) == 1
            and _is_regional_indicator(current[0])
            and _is_regional_indicator(ch)
        ):
            current.append(ch)  # two regional indicators make one flag
            flush()
            continue
        if _is_word_char(ch):
            if kind == "word-mark" and _mark_joins(current[-2], current[-1], ch):
                kind = "word"
            elif kind != "word":
                flush()
                kind = "word"
            current.append(ch)
            continue
        if kind == "word" and ch in _INNER_MARKS:
            # "don't", "3.14" and "1,000" stay whole; whether the mark joins depends on the next
            # character, so hold it and decide when that comes.
            current.append(ch)
            kind = "word-mark"
            continue
        flush()
        current.append(ch)
        kind = "single"
        if is_cjk(ch):
            kind = "cjk"  # may still take combining marks (e.g. dakuten), never a ZWJ
    flush()
    return Tokenization(
        tokens=tuple(tokens[:max_tokens]),
        total_tokens=len(tokens),
        max_tokens=max_tokens,
        removed_controls=removed,
        chars_cut=chars_cut,
    )


def tokenize_sentence(text: str, max_tokens: int = DEFAULT_MAX_TOKENS) -> Tokenization:
    """:func:`tokenize` for a learner's sentence, which must give at least one token: the one
    refusal of blank text for the trace and every lab that runs on the sentence."""
    tok = tokenize(text, max_tokens=max_tokens)
    if not tok.tokens:
        raise AttentionConfigError("The sentence is empty: type at least one word.")
    return tok
