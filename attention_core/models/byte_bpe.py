"""Byte-level BPE (GPT-2 style) and readable labels for its tokens, in any language.

Byte-level BPE works on the UTF-8 bytes of the text, not on characters: an English word is
usually one token, but 猫 (three bytes, E7 8C AB) may become three tokens of one byte each. The
vocabulary spells each byte as a printable stand-in character (a space is ``Ġ``, a newline ``Ċ``,
the byte E7 is ``ç``), which is why raw token strings look like mojibake. This module never shows
those stand-ins: :func:`token_labels` works out which characters of the text each token holds and
labels it with them.

Label rules (one label per token; the parts are also kept as :class:`LabelPart` for figures that
group the pieces of one character):

- a whole character is shown as itself;
- part of a multi-byte character is shown as the character and which of its bytes the token holds,
  ``猫 1/3`` (first byte of three) or ``猫 2–3/3``; parts of different characters in one token are
  joined with ``+`` (``猫 3/3+は``);
- a space is ``␣`` (U+2423, the typographic sign for a space): a leading space marks the start of a
  word in this vocabulary, and a real space would be invisible (and trimmed) on a chart axis; a
  middle dot was not used because ``·``/``・`` are punctuation a text may contain. A newline is
  ``↵``, a tab ``⇥``, other control characters their Unicode control picture (NUL ``␀``);
- invisible characters (zero-width and direction marks, other spaces such as U+3000, private use)
  are shown as their code point ``⟨U+200B⟩``, as are characters that this module itself uses as
  signs (``␣ ↵ ⇥ ⟨ ⟩ ◌`` and the control pictures), so a label never means two things;
- a combining mark that starts a label is shown on a dotted circle ``◌́``;
- the start of a character whose remaining bytes are not there yet (generated text, or a candidate
  next token) is shown as the range of characters it can still become and the bytes it holds,
  ``猀…猿 1–2/3`` (E7 8C starts one of U+7300 … U+733F, see :func:`prefix_range`);
- bytes that can be no character (only possible in generated text) are shown as ``�`` and their
  hexadecimal value, ``�⟨FF⟩``, never as hexadecimal alone.

:func:`read_token` says what one more token adds to a text in characters (the one it completes, the
whole ones, the one it leaves unfinished and what that can still become): the decoder page words its
next-token candidates from it.

Building the tokenizer needs the optional ``tokenizers`` package (imported inside the function).
"""

from __future__ import annotations

import functools
import importlib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

SPACE_SIGN = "\u2423"  # ␣
NEWLINE_SIGN = "\u21b5"  # ↵
TAB_SIGN = "\u21e5"  # ⇥
DOTTED_CIRCLE = "\u25cc"  # ◌, the base a lone combining mark is drawn on
NOT_A_CHARACTER = "\ufffd"  # �, Unicode's replacement character: bytes that make no character
RANGE_SIGN = "\u2026"  # …, between the first and last character a started one can still become
PART_JOINER = "+"
# (… is not one of them: a typed … stays itself; a range is told apart by the bytes part after it)
_OWN_SIGNS = frozenset(
    {SPACE_SIGN, NEWLINE_SIGN, TAB_SIGN, DOTTED_CIRCLE, "\u27e8", "\u27e9", NOT_A_CHARACTER}
)
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})


# --------------------------------------------------------------------------------------------
# The byte alphabet
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def byte_alphabet() -> dict[int, str]:
    """GPT-2's stand-in character for each byte value 0..255.

    Bytes that are printable Latin-1 characters (``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``) stand for
    themselves; the other 68 (controls, space, soft hyphen...) get U+0100, U+0101, ... in byte
    order, so a space (0x20) is ``Ġ`` (U+0120) and a newline (0x0A) is ``Ċ`` (U+010A).
    """
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(0x100 + extra)
            extra += 1
    return table


@functools.lru_cache(maxsize=1)
def _alphabet_inverse() -> dict[str, int]:
    return {ch: b for b, ch in byte_alphabet().items()}


def token_bytes(token: str) -> bytes:
    """The bytes a vocabulary entry stands for: ``"Ġcat" -> b" cat"``, ``"ç" -> b"\\xe7"``.

    Raises ``ValueError`` for a string outside the byte alphabet (a special token such as
    ``<|endoftext|>`` is spelled in plain characters and has no bytes of its own).
    """
    inverse = _alphabet_inverse()
    try:
        return bytes(inverse[ch] for ch in token)
    except KeyError:
        raise ValueError(f"{token!r} is not spelled in the byte alphabet") from None


def is_byte_token(token: str) -> bool:
    inverse = _alphabet_inverse()
    return all(ch in inverse for ch in token)


# --------------------------------------------------------------------------------------------
# The tokenizer
# --------------------------------------------------------------------------------------------

PRE_TOKENIZERS = ("smollm",)


def build_tokenizer(tokens: Sequence[str], merges: Sequence[str], pre: str = "smollm"):
    """A ``tokenizers.Tokenizer`` for a byte-level BPE vocabulary and its merge list.

    ``tokens``: the vocabulary in id order; ``merges``: ``"a b"`` strings, best first (both as a
    GGUF file stores them). ``pre`` names the pre-tokenizer the vocabulary was trained with:
    ``"smollm"`` (llama.cpp's name) cuts every digit apart, then splits with GPT-2's rule
    (contractions, `` ?letters``, `` ?digits``, `` ?other symbols``, runs of spaces), then maps
    bytes to the alphabet. This gives llama.cpp's ids on every text tested (tests/data/
    smollm2_llama_cpp.npz); Hugging Face transformers' GGUF loader skips the digit step, which
    changes nothing for ASCII digits (the vocabulary has no token of two digits) but splits
    numerals such as ½, ² or the full-width ２ differently. Special tokens (``<|im_start|>``...)
    are *not* registered as added tokens: text a learner types is always read as plain text,
    never as a control token.
    """
    if pre not in PRE_TOKENIZERS:
        raise ValueError(f"unknown pre-tokenizer {pre!r}; known: {PRE_TOKENIZERS}")
    try:
        tk = importlib.import_module("tokenizers")
    except ImportError:
        raise ImportError("The optional library 'tokenizers' is not installed") from None
    vocab = {token: i for i, token in enumerate(tokens)}
    if len(vocab) != len(tokens):
        raise ValueError("the vocabulary has duplicate entries")
    pairs = []
    for merge in merges:
        left, sep, right = merge.partition(" ")
        if not sep or not left or not right:
            raise ValueError(f"a merge must be two tokens separated by one space, got {merge!r}")
        pairs.append((left, right))
    tokenizer = tk.Tokenizer(tk.models.BPE(vocab=vocab, merges=pairs))
    tokenizer.pre_tokenizer = tk.pre_tokenizers.Sequence(
        [
            tk.pre_tokenizers.Digits(individual_digits=True),
            tk.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tokenizer.decoder = tk.decoders.ByteLevel()
    return tokenizer


# --------------------------------------------------------------------------------------------
# Readable labels
# --------------------------------------------------------------------------------------------


def visible(ch: str) -> str:
    """How one character is shown in a label (see the module docstring)."""
    if ch == " ":
        return SPACE_SIGN
    if ch == "\n":
        return NEWLINE_SIGN
    if ch == "\t":
        return TAB_SIGN
    cp = ord(ch)
    if cp < 0x20:
        return chr(0x2400 + cp)  # control pictures: NUL ␀, BEL ␇, ESC ␛, CR ␍ ...
    if cp == 0x7F:
        return "\u2421"  # ␡
    if (
        ch in _OWN_SIGNS
        or 0x2400 <= cp <= 0x2426  # the control pictures themselves
        or unicodedata.category(ch) in _INVISIBLE_CATEGORIES
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors: invisible on their own
        or 0xE0100 <= cp <= 0xE01EF
    ):
        return f"\u27e8U+{cp:04X}\u27e9"
    return ch


def _is_combining(ch: str) -> bool:
    return unicodedata.category(ch) in ("Mn", "Mc", "Me") and not (
        0xFE00 <= ord(ch) <= 0xFE0F or 0xE0100 <= ord(ch) <= 0xE01EF
    )


@dataclass(frozen=True)
class LabelPart:
    """What one token holds of one character (or of an invalid byte run).

    ``char`` is the character (``None`` for bytes that are not valid UTF-8); ``char_index`` its
    index in the decoded text (``-1`` for invalid bytes); the token holds bytes ``first..last``
    (1-based) of the character's ``of`` bytes. ``whole`` when it holds all of them.
    """

    char: str | None
    char_index: int
    first: int
    last: int
    of: int
    raw: bytes
    # for the unfinished start of a character (char None, at the end of the text): what it can become
    becomes: CharRange | None = None

    @property
    def whole(self) -> bool:
        return self.char is not None and self.first == 1 and self.last == self.of

    def text(self, at_start: bool) -> str:
        if self.char is None:
            if self.becomes is not None:
                return f"{self.becomes.span} {_part(self.first, self.last, self.of)}"
            hexes = " ".join(f"{b:02X}" for b in self.raw)
            return f"{NOT_A_CHARACTER}\u27e8{hexes}\u27e9"
        shown = visible(self.char)
        if at_start and _is_combining(self.char):
            shown = DOTTED_CIRCLE + shown
        if self.whole:
            return shown
        return f"{shown} {_part(self.first, self.last, self.of)}"


@dataclass(frozen=True)
class CharRange:
    """The characters the start of a UTF-8 sequence can still become: code points ``lo`` … ``hi``, of
    which ``count`` are assigned characters (in this Python's Unicode database), ``first`` … ``last``
    the first and last of those that show as themselves (not as a code point, see :func:`visible`)
    and that a font is likely to have (:func:`_in_fonts`), the names of the range on a label."""

    lo: int
    hi: int
    count: int
    first: str
    last: str

    @property
    def span(self) -> str:
        """``ぁ…み``; a single character when only one is left."""
        return self.first if self.count == 1 else f"{self.first}{RANGE_SIGN}{self.last}"


# The code points each UTF-8 length can spell (shorter spellings, "overlong" ones, are invalid).
_UTF8_SPANS = {2: (0x80, 0x7FF), 3: (0x800, 0xFFFF), 4: (0x10000, 0x10FFFF)}
_SURROGATES = (0xD800, 0xDFFF)  # code points reserved for UTF-16, never spelled in UTF-8


@functools.lru_cache(maxsize=4096)
def prefix_range(prefix: bytes) -> CharRange | None:
    """What a started character can still become: the assigned characters whose UTF-8 begins with
    ``prefix`` (a lead byte and fewer continuation bytes than it announces); None if there is none
    (not such a start, or only unassigned or invalid code points follow it).

    E3 starts a three-byte character with the top four of its 16 bits 0011: U+3000 … U+3FFF. E3 81
    fixes six more bits: U+3040 … U+307F, the hiragana ぁ … み (U+3040 is unassigned: 63 characters).
    """
    if not prefix:
        return None
    length = _utf8_length(prefix[0])
    if length < 2 or len(prefix) >= length or any(not 0x80 <= b <= 0xBF for b in prefix[1:]):
        return None
    value = prefix[0] & (0x7F >> length)  # the lead byte's payload bits
    for b in prefix[1:]:
        value = value << 6 | (b & 0x3F)  # each continuation byte adds six bits
    free = 6 * (length - len(prefix))  # bits still to come
    lo, hi = (
        max(value << free, _UTF8_SPANS[length][0]),
        min(value << free | ((1 << free) - 1), _UTF8_SPANS[length][1]),
    )
    if _SURROGATES[0] <= lo and hi <= _SURROGATES[1]:
        return None
    if lo < _SURROGATES[0] <= hi:
        hi = min(hi, _SURROGATES[0] - 1)  # ED: U+D000 … U+D7FF, the rest are surrogates
    assigned = (
        [chr(cp) for cp in range(lo, hi + 1) if unicodedata.category(chr(cp)) != "Cn"] if lo <= hi else []
    )
    if not assigned:
        return None
    shown = [ch for ch in assigned if visible(ch) == ch] or assigned  # name the range by visible ones
    named = [ch for ch in shown if _in_fonts(ch) and not _is_combining(ch)] or shown  # ... drawable alone
    return CharRange(lo, hi, len(assigned), visible(named[0]), visible(named[-1]))


# Blocks of Unicode 3.2 that common fonts still lack: CJK Extension A (U+3400 … U+4DBF, most Japanese
# and Korean system fonts have a few of its 6,582 ideographs) and the Specials (U+FFFC, the object
# replacement character, draws as a box saying "OBJ").
_NOT_IN_FONTS = ((0x3400, 0x4DBF), (0xFFF0, 0xFFFF))


def _in_fonts(ch: str) -> bool:
    """Whether ``ch`` is a character the common fonts draw: in Unicode 3.2 already (2002) and not in
    :data:`_NOT_IN_FONTS` (private use never gets here: :func:`visible` names it by its code point). The ends of a started character's range were often the newest
    of a block, which fonts lack: E9 alone can become U+9000 … U+9FFF, whose last character (鿿, Unicode
    14) drew as a box in "退…鿿"; the last such ideograph of Unicode 3.2 is 龥 (U+9FA5)."""
    cp = ord(ch)
    return unicodedata.ucd_3_2_0.category(ch) != "Cn" and not any(lo <= cp <= hi for lo, hi in _NOT_IN_FONTS)


def unfinished_tail(data: bytes) -> bytes:
    """The bytes of a character started at the end of ``data`` and not finished (``b""`` if none):
    ``"猫".encode()[:2]`` -> ``b"\\xe7\\x8c"``; ``b"a"`` or a finished character -> ``b""``."""
    for j in range(len(data) - 1, max(-1, len(data) - 4), -1):
        if data[j] < 0x80:
            return b""
        if data[j] >= 0xC0:  # a lead byte: the start, if it is one and still waits for bytes
            return data[j:] if prefix_range(data[j:]) is not None else b""
    return b""


@dataclass(frozen=True)
class TokenReading:
    """What one more token adds to a text, in characters (:func:`read_token`).

    In order: ``completes``, the character the text so far began and this token finishes (None if
    none); ``text``, the whole characters it adds (as :func:`visible` shows them, ``�`` for bytes
    that can be no character here; ``stray`` counts those bytes); ``becomes``, for a character it
    leaves unfinished, what that can still become, with ``known`` of its ``of`` bytes written.
    """

    completes: str | None
    text: str
    becomes: CharRange | None
    known: int
    of: int
    stray: int


def read_token(before: bytes, piece: bytes) -> TokenReading:
    """Read ``piece`` (a token's bytes) as it continues a text whose UTF-8 ends with ``before``.

    Given the text so far, a token that finishes a started character adds exactly that character
    (after E7 8C, the byte AB completes 猫); a token that leaves a character unfinished adds one of a
    range of characters, which the next tokens decide (E3 81 is one of ぁ … み).
    """
    tail = unfinished_tail(before)
    data = tail + piece
    completes, text, becomes, known, of, stray = None, [], None, 0, 0, 0
    for unit in _units(data):
        if unit.end <= len(tail):
            continue  # the started character was broken off (the token does not continue it)
        if unit.char is not None:
            if unit.start < len(tail):
                completes = visible(unit.char)
            else:
                shown = visible(unit.char)
                text.append(DOTTED_CIRCLE + shown if not text and _is_combining(unit.char) else shown)
            continue
        started = data[unit.start : unit.end]
        rng = prefix_range(started) if unit.end == len(data) else None
        if rng is not None:
            becomes, known, of = rng, len(started), unit.of
        else:
            text.append(NOT_A_CHARACTER)
            stray += unit.end - max(unit.start, len(tail))
    return TokenReading(completes, "".join(text), becomes, known, of, stray)


def _part(first: int, last: int, of: int) -> str:
    return f"{first}/{of}" if first == last else f"{first}\u2013{last}/{of}"


def _utf8_length(lead: int) -> int:
    """Bytes of the character this lead byte starts: 1..4, or 0 for a byte that cannot start one."""
    if lead < 0x80:
        return 1
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 0


@dataclass(frozen=True)
class _Unit:
    start: int  # byte offset
    end: int
    char: str | None
    char_index: int
    of: int  # expected length (0: unknown)


def _units(data: bytes) -> list[_Unit]:
    """Cut a byte string into characters, and runs of bytes that are not valid UTF-8."""
    units: list[_Unit] = []
    i, char_index = 0, 0
    while i < len(data):
        length = _utf8_length(data[i])
        if length and i + length <= len(data):
            try:
                ch = data[i : i + length].decode("utf-8")
            except UnicodeDecodeError:
                ch = None
            if ch is not None:
                units.append(_Unit(i, i + length, ch, char_index, length))
                i += length
                char_index += 1
                continue
        # an invalid or cut-off sequence: take the lead byte and the continuation bytes that follow
        j = i + 1
        while j < len(data) and j - i < max(length, 1) and 0x80 <= data[j] <= 0xBF:
            j += 1
        units.append(_Unit(i, j, None, -1, length))
        i = j
    return units


def label_parts(pieces: Sequence[bytes]) -> tuple[tuple[LabelPart, ...], ...]:
    """For each token's bytes, the parts of characters it holds, read in the context of all tokens.

    ``pieces``: the bytes of each token in order (their concatenation is the text's UTF-8).
    """
    data = b"".join(pieces)
    units = _units(data)
    out: list[tuple[LabelPart, ...]] = []
    u = 0
    offset = 0
    for piece in pieces:
        start, end = offset, offset + len(piece)
        offset = end
        parts = []
        while u < len(units) and units[u].end <= start:
            u += 1
        k = u
        while k < len(units) and units[k].start < end:
            unit = units[k]
            lo, hi = max(start, unit.start), min(end, unit.end)
            if unit.char is None:
                becomes = prefix_range(data[unit.start : unit.end]) if unit.end == len(data) else None
                parts.append(
                    LabelPart(None, -1, lo - unit.start + 1, hi - unit.start, unit.of, data[lo:hi], becomes)
                )
            else:
                parts.append(
                    LabelPart(
                        unit.char, unit.char_index, lo - unit.start + 1, hi - unit.start, unit.of, data[lo:hi]
                    )
                )
            k += 1
        out.append(tuple(parts))
    return tuple(out)


def format_label(parts: Sequence[LabelPart]) -> str:
    """One token's label from its parts: whole characters run together, parts joined with ``+``."""
    chunks: list[str] = []
    run: list[str] = []
    for i, part in enumerate(parts):
        text = part.text(at_start=(i == 0 or not parts[i - 1].whole))
        if part.whole:
            run.append(text)
            continue
        if run:
            chunks.append("".join(run))
            run = []
        chunks.append(text)
    if run:
        chunks.append("".join(run))
    return PART_JOINER.join(chunks)


def token_labels(pieces: Sequence[bytes]) -> tuple[str, ...]:
    """Readable labels for consecutive tokens given as their bytes (see the module docstring)."""
    return tuple(format_label(parts) for parts in label_parts(pieces))
