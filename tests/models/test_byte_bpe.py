"""Readable labels of byte-level BPE tokens (attention_core/models/byte_bpe.py) at the edges the
mutation run found unpinned (issue 28): UTF-8 lead-byte lengths, runs of invalid bytes, variation
selectors and the other combining classes, the byte alphabet's own signs. Every expected label is
worked out by hand from the rules in byte_bpe's docstring and the UTF-8 definition. No model."""

from __future__ import annotations

import pytest

from attention_core.models import byte_bpe as B


def utf8_length_by_definition(lead: int) -> int:
    # RFC 3629: 00-7F one byte, C2-DF two, E0-EF three, F0-F4 four; 80-C1 and F5-FF start nothing
    for lo, hi, n in ((0x00, 0x7F, 1), (0xC2, 0xDF, 2), (0xE0, 0xEF, 3), (0xF0, 0xF4, 4)):
        if lo <= lead <= hi:
            return n
    return 0


def test_lead_byte_lengths_for_every_byte():
    assert [B._utf8_length(b) for b in range(256)] == [utf8_length_by_definition(b) for b in range(256)]


def test_is_byte_token():
    assert B.is_byte_token("Ġcat") and B.is_byte_token("ç") and B.is_byte_token("")
    assert not B.is_byte_token("猫") and not B.is_byte_token("a猫")


@pytest.mark.parametrize(
    "pieces, labels",
    [
        # a started character cut off by a normal one: its bytes in hexadecimal, not a range
        ([b"\xe7\x8c", b"a"], ("\ufffd\u27e8E7 8C\u27e9", "a")),
        ([b"\xe7\xbf", b"a"], ("\ufffd\u27e8E7 BF\u27e9", "a")),  # BF is a continuation byte
        ([b"\xe7\xc0"], ("\ufffd\u27e8E7\u27e9+\ufffd\u27e8C0\u27e9",)),  # C0 is not one
        # a surrogate's three bytes are one invalid run; the fourth byte is a run of its own
        ([b"\xed\xa0\x80\x80"], ("\ufffd\u27e8ED A0 80\u27e9+\ufffd\u27e880\u27e9",)),
        ([b"\xff\x80"], ("\ufffd\u27e8FF\u27e9+\ufffd\u27e880\u27e9",)),  # FF starts nothing: alone
        # whole characters around an invalid byte
        ([b"a\xffb"], ("a+\ufffd\u27e8FF\u27e9+b",)),
        # whole characters run together before a part
        ([b"ab\xe7", b"\x8c\xab"], ("ab+猫 1/3", "猫 2\u20133/3")),
        # a combining mark after a whole character of the same token gets no dotted circle
        ([b"\xe7\x8c", "\xab".encode("latin-1") + "a\u0301".encode()], ("猫 1\u20132/3", "猫 3/3+a\u0301")),
        # an empty piece has an empty label
        ([b"a", b""], ("a", "")),
        # combining marks of the classes Mc and Me at the start of a label
        (["\u0903".encode()], ("\u25cc\u0903",)),
        (["\u20dd".encode()], ("\u25cc\u20dd",)),
        # variation selectors are shown as code points and never on a dotted circle
        (["\ufe00".encode()], ("\u27e8U+FE00\u27e9",)),
        (["\ufe0f".encode()], ("\u27e8U+FE0F\u27e9",)),
        (["\U000e0100".encode()], ("\u27e8U+E0100\u27e9",)),
        (["\U000e01ef".encode()], ("\u27e8U+E01EF\u27e9",)),
    ],
)
def test_labels_by_hand(pieces, labels):
    assert B.token_labels(pieces) == labels


def test_visible_at_the_edges_of_its_ranges():
    # the control pictures U+2400 … U+2426 are this module's own signs: shown as code points
    assert B.visible("\u2400") == "\u27e8U+2400\u27e9" and B.visible("\u2426") == "\u27e8U+2426\u27e9"
    assert B.visible("\u23ff") == "\u23ff"  # the character before them is itself
    assert B.visible("\ufe10") == "\ufe10"  # after the variation selectors: a visible comma form
    assert B.visible("\u001f") == "\u241f" and B.visible("!") == "!"


def test_invalid_bytes_have_no_character_and_an_unknown_length():
    ((part,),) = B.label_parts([b"\x80"])
    assert part.char is None and part.char_index == -1 and part.of == 0 and part.raw == b"\x80"
    ((part,),) = B.label_parts([b"\xff"])
    assert part.char_index == -1 and part.of == 0


def test_unfinished_tail_reads_continuation_byte_80():
    assert B.unfinished_tail(b"\xe3\x80") == b"\xe3\x80"  # U+3000 … U+303F can still follow
    assert B.unfinished_tail(b"a\xe3") == b"\xe3"


def test_read_token_marks_a_leading_combining_mark_only():
    assert B.read_token(b"", "\u0301".encode()).text == "\u25cc\u0301"
    assert B.read_token(b"", "a\u0301".encode()).text == "a\u0301"


def test_read_token_counts_every_stray_byte():
    r = B.read_token(b"", b"\xff\xfe")
    assert r.stray == 2 and r.text == "\ufffd\ufffd" and r.becomes is None
    # a started character followed by a normal one is stray, not a range
    r = B.read_token(b"", b"\xe7\x8ca")
    assert r.text == "\ufffda" and r.stray == 2 and r.becomes is None
    # at the end it is a range: 猀 … 猿 (E7 8C starts U+7300 … U+733F), two of three bytes known
    r = B.read_token(b"", b"a\xe7\x8c")
    assert r.text == "a" and r.stray == 0 and (r.known, r.of) == (2, 3) and r.becomes.lo == 0x7300


def test_the_pre_tokenizer_splits_letters_from_punctuation():
    """GPT-2's rule cuts "a!" into "a" and "!" before any merge, so the merge a+! never applies."""
    pytest.importorskip("tokenizers")
    alphabet = B.byte_alphabet()
    tokens = [alphabet[b] for b in range(256)] + ["a!"]
    tk = B.build_tokenizer(tokens, ["a !"])
    assert tk.encode("a!").ids == [0x61, 0x21]
