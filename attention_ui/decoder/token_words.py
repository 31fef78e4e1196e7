"""A next-token candidate in words (the core's :class:`attention_core.models.byte_bpe.TokenReading`).

A byte-level model may write one character as several tokens. Given the text so far, a candidate
that finishes a character the text began adds exactly that character, so it is named ("猫
(completes)"); a candidate that begins a character, or adds to one without finishing it, adds one of
a range of characters that the next tokens decide, so the range is named ("part of ぁ…み"). Both
are read in context: without it, the byte AB alone could finish thousands of characters. Raw bytes
are never shown on their own.
"""

from __future__ import annotations

from attention_core.models.byte_bpe import NOT_A_CHARACTER, TokenReading

SHORT_JOINER = "+"  # between the pieces of one short label, as in the core's labels (猫 3/3+は)


def in_parts(reading: TokenReading | None) -> bool:
    """Whether a token adds part of a character (it finishes, begins or continues one, or adds bytes
    that make none), so its label needs the explanation under the chart."""
    return reading is not None and (
        reading.completes is not None or reading.becomes is not None or reading.stray > 0
    )


def short_label(t, reading: TokenReading | None, special: str | None = None) -> str:
    """The label on the bar: ``猫 (completes)+は``, ``part of ぁ…み``, ``␣cat``, a special token's name."""
    if reading is None:
        return special or ""
    pieces = []
    if reading.completes is not None:
        pieces.append(t("decoder.tok_completes_short", char=reading.completes))
    if reading.text:
        pieces.append(reading.text)
    if reading.becomes is not None:
        pieces.append(t("decoder.tok_part_short", span=reading.becomes.span))
    return SHORT_JOINER.join(pieces)


def long_label(t, reading: TokenReading | None, special: str | None = None) -> str:
    """The candidate in a sentence (hover text, the next step's note)."""
    if reading is None:
        return t("decoder.tok_special", name=special or "")
    pieces = []
    if reading.completes is not None:
        pieces.append(t("decoder.tok_completes", char=reading.completes))
    if reading.text.strip(NOT_A_CHARACTER):  # (bytes that make no character are said in words below)
        pieces.append(f"«{reading.text}»")
    if reading.stray:
        pieces.append(t("decoder.tok_stray", count=reading.stray))
    if reading.becomes is not None:
        r = reading.becomes
        pieces.append(t("decoder.tok_part", known=reading.known, of=reading.of, count=f"{r.count:,}",
                        from_code=f"{r.lo:04X}", to_code=f"{r.hi:04X}", first=r.first, last=r.last))  # fmt: skip
    return " + ".join(pieces)
