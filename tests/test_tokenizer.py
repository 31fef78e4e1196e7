"""The display tokenizer: words for spaced scripts, one token per CJK/Hangul character, user text kept."""

from __future__ import annotations

import pytest

from attention_core import DEFAULT_MAX_TOKENS, AttentionConfig, AttentionConfigError, tokenize, trace_text
from attention_core.tokenizer import tokenize_sentence

MAX_INPUT_CHARS = 20_000


def toks(text: str, **kw) -> list[str]:
    return list(tokenize(text, **kw).tokens)


def _no_space(text: str) -> str:
    return "".join(ch for ch in text if not ch.isspace())


# ---------------------------------------------------------------- spaced scripts


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("the cat sat on the mat", ["the", "cat", "sat", "on", "the", "mat"]),
        ("Hello, world!", ["Hello", ",", "world", "!"]),
        ("(hi) [there]", ["(", "hi", ")", "[", "there", "]"]),
        ("end...", ["end", ".", ".", "."]),
        ("pi is 3.14 and 1,000 people", ["pi", "is", "3.14", "and", "1,000", "people"]),
        ("I don't know.", ["I", "don't", "know", "."]),
        ("it’s fine", ["it’s", "fine"]),
        ("'quoted'", ["'", "quoted", "'"]),
        ("3.", ["3", "."]),
        ("a,b", ["a", ",", "b"]),
        ("x2 2x 42", ["x2", "2x", "42"]),
        ("Привет, мир", ["Привет", ",", "мир"]),
        ("a+b=c", ["a", "+", "b", "=", "c"]),
        ("tab\tand\nnew\r\nline", ["tab", "and", "new", "line"]),
    ],
)
def test_spaced_scripts(text, want):
    assert toks(text) == want


def test_repeated_words_keep_separate_tokens():
    tok = tokenize("the cat sat on the mat")
    assert len(tok.tokens) == 6 and tok.total_tokens == 6
    assert tok.tokens[0] == tok.tokens[4] == "the"


def test_combining_marks_stay_with_their_letter():
    assert toks("cafe\u0301 ok") == ["cafe\u0301", "ok"]
    assert toks("\u304b\u3099") == ["\u304b\u3099"]  # か + combining dakuten = one token


# ---------------------------------------------------------------- scripts without spaces


def test_japanese_every_character_is_a_token():
    text = "猫がマットの上に座った。"
    assert toks(text) == ["猫", "が", "マ", "ッ", "ト", "の", "上", "に", "座", "っ", "た", "。"]


def test_korean_every_syllable_is_a_token():
    assert toks("고양이가 매트 위에 앉았다.") == [
        "고",
        "양",
        "이",
        "가",
        "매",
        "트",
        "위",
        "에",
        "앉",
        "았",
        "다",
        ".",
    ]


def test_mixed_scripts():
    assert toks("AIは猫が好き、100%だ「本当」") == [
        "AI",
        "は",
        "猫",
        "が",
        "好",
        "き",
        "、",
        "100",
        "%",
        "だ",
        "「",
        "本",
        "当",
        "」",
    ]
    assert toks("ｶﾀｶﾅ ー々") == ["ｶ", "ﾀ", "ｶ", "ﾅ", "ー", "々"]
    assert toks("中文句子") == ["中", "文", "句", "子"]


@pytest.mark.parametrize(
    "text",
    [
        "the cat sat on the mat",
        "Hello, world! 3.14 don't",
        "猫がマットの上に座った。",
        "고양이가 매트 위에 앉았다.",
        "  spaced   out\ttext\n",
        "👩\u200d👩\u200d👧 family 👍🏽 🇯🇵",
    ],
)
def test_tokens_keep_the_users_text(text):
    tok = tokenize(text)
    assert "".join(tok.tokens) == _no_space(text)
    assert tok.removed_controls == 0
    for t in tok.tokens:
        assert t and t in text


# ---------------------------------------------------------------- emoji


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("👩\u200d👩\u200d👧", ["👩\u200d👩\u200d👧"]),  # family: ZWJ sequence
        ("👩\u200d💻 codes", ["👩\u200d💻", "codes"]),
        ("👍🏽👍", ["👍🏽", "👍"]),  # skin tone modifier joins, the next emoji is separate
        ("🇯🇵🇫🇷", ["🇯🇵", "🇫🇷"]),  # two flags, not one blob of four indicators
        (
            "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f!",
            ["🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f", "!"],
        ),
        ("❤\ufe0f ok", ["❤\ufe0f", "ok"]),
        ("cat🐱", ["cat", "🐱"]),
    ],
)
def test_emoji_sequences_stay_one_token(text, want):
    assert toks(text) == want


# ---------------------------------------------------------------- invisible characters


@pytest.mark.parametrize(
    ("text", "want", "removed"),
    [
        ("cat\x00dog", ["cat", "dog"], 1),
        ("cat\u200bdog", ["cat", "dog"], 1),  # zero-width space
        ("cat\u200ddog", ["cat", "dog"], 1),  # zero-width joiner outside an emoji
        ("cat\u200cdog", ["cat", "dog"], 1),  # zero-width non-joiner
        ("cat\ufeffdog", ["cat", "dog"], 1),  # BOM
        ("\u202eevil\u202c", ["evil"], 2),  # bidi override
        ("a\x07\x1bb", ["a", "b"], 2),
        ("猫\x00が", ["猫", "が"], 1),
        ("\x00\x00", [], 2),
        ("👍\u200dcat", ["👍", "cat"], 1),  # a ZWJ between an emoji and a word joins nothing
        ("👍\u200d 猫", ["👍", "猫"], 1),
        ("👍\u200d\u200d👍", ["👍", "👍"], 2),
        ("!\U000e0067\U000e0062 x", ["!", "x"], 2),  # tag characters only count after 🏴
    ],
)
def test_controls_are_removed_counted_and_do_not_glue(text, want, removed):
    tok = tokenize(text)
    assert list(tok.tokens) == want
    assert tok.removed_controls == removed
    for t in tok.tokens:
        assert all(ch not in t for ch in "\x00\u200b\u200c\u200d\ufeff\u202e\u202c\x07\x1b")


# ---------------------------------------------------------------- limits


def test_default_max_tokens_truncates_and_reports():
    text = " ".join(f"w{i}" for i in range(100))
    tok = tokenize(text)
    assert DEFAULT_MAX_TOKENS == 64
    assert tok.max_tokens == 64
    assert tok.tokens == tuple(f"w{i}" for i in range(64))
    assert tok.total_tokens == 100
    assert tok.truncated


def test_custom_max_tokens():
    tok = tokenize("a b c d e f", max_tokens=4)
    assert tok.tokens == ("a", "b", "c", "d") and tok.total_tokens == 6 and tok.truncated
    exact = tokenize("a b c d", max_tokens=4)
    assert exact.total_tokens == 4 and not exact.truncated
    with pytest.raises(ValueError):
        tokenize("a", max_tokens=0)


def test_trace_text_reports_truncation():
    tr = trace_text(" ".join(["word"] * 70), AttentionConfig(d_model=4, heads=1, pad=2))
    assert tr.n == 64 + 2
    assert tr.tokenization.total_tokens == 70 and tr.tokenization.truncated


def test_input_character_cap():
    text = "a " * 15_000  # 30,000 characters
    tok = tokenize(text, max_tokens=10**6)
    assert tok.chars_cut == 30_000 - MAX_INPUT_CHARS
    assert tok.total_tokens == MAX_INPUT_CHARS // 2
    assert tok.truncated
    short = tokenize("a " * 10)
    assert short.chars_cut == 0 and not short.truncated


def test_character_cap_alone_marks_truncation():
    tok = tokenize("x" * (MAX_INPUT_CHARS + 5))
    assert tok.tokens == ("x" * MAX_INPUT_CHARS,)
    assert tok.chars_cut == 5 and tok.truncated


@pytest.mark.parametrize("text", ["", " ", "\n\t  \u3000", "\u200b"])
def test_empty_or_blank_gives_no_tokens(text):
    tok = tokenize(text)
    assert tok.tokens == () and tok.total_tokens == 0 and not tok.truncated


@pytest.mark.parametrize("text", ["", " ", "\n\t  \u3000", "\u200b"])
def test_a_blank_sentence_is_refused_in_the_learners_words(text):
    with pytest.raises(AttentionConfigError, match="^The sentence is empty: type at least one word.$"):
        tokenize_sentence(text)


def test_a_sentence_tokenizes_as_tokenize_does():
    assert tokenize_sentence("the cat sat", max_tokens=2) == tokenize("the cat sat", max_tokens=2)


# The Unicode classes at their edges (expected values from the Unicode character database, not from
# the tokenizer's own tables): mutation testing found these edges unchecked.
@pytest.mark.parametrize(
    "ch",
    [
        "々",  # U+3005, the first of 々 〆 〇
        "〇",  # U+3007, the last of them
        "ヿ",  # U+30FF, the last Katakana
        "ᄀ",  # U+1100, the first Hangul Jamo
        "一",  # U+4E00, the first unified ideograph
    ],
)
def test_the_first_and_last_characters_of_the_unspaced_blocks_are_single_tokens(ch: str) -> None:
    assert toks(f"{ch}{ch}") == [ch, ch]


def test_a_character_just_outside_a_cjk_block_is_not_split_as_one() -> None:
    assert toks("\u4dff") == ["\u4dff"]  # a Yijing hexagram (a symbol: one token, as any symbol)
    assert toks("ab\u4dffcd") == ["ab", "\u4dff", "cd"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("नमः", ["नमः"]),  # U+0903 visarga, a spacing mark (Mc), stays with its word
        ("A\u20dd b", ["A\u20dd", "b"]),  # U+20DD combining enclosing circle (Me)
        ("葛\U000e0100", ["葛\U000e0100"]),  # an ideographic variation selector stays with its character
        ("🏴\U000e0020\U000e007f", ["🏴\U000e0020\U000e007f"]),  # the first and the last tag character
        ("🇦🇨🇿🇦", ["🇦🇨", "🇿🇦"]),  # regional indicators A (first) and Z (last): two flags
        ("👍🏻👍🏿", ["👍🏻", "👍🏿"]),  # the first and the last skin tone (Sk, not a mark)
        ("a\ufe10", ["a", "\ufe10"]),  # U+FE10, just past the variation selectors: punctuation
        ("👍🐀", ["👍", "🐀"]),  # U+1F400, just past the skin tones: a picture of its own
        ("🈀🈀", ["🈀", "🈀"]),  # U+1F200, just past the regional indicators: two symbols, no flag
        ("🏴\U000e0080", ["🏴"]),  # just past the tag characters: unassigned, so dropped
    ],
)
def test_marks_selectors_tags_and_flags_at_their_edges_join_their_character(text, expected) -> None:
    assert toks(text) == expected


@pytest.mark.parametrize(
    "invisible",
    ["\ue000", "\u0378", "\ud800", "\u200b"],  # private use, unassigned, a lone surrogate, zero-width space
)
def test_each_invisible_character_is_dropped_and_counted(invisible: str) -> None:
    result = tokenize(f"a{invisible}b{invisible}c")
    assert list(result.tokens) == ["a", "b", "c"] and result.removed_controls == 2


def test_dangling_joiners_are_dropped_and_counted_one_by_one() -> None:
    result = tokenize("x\u200d \u200d y")
    assert list(result.tokens) == ["x", "y"] and result.removed_controls == 2
    result = tokenize("😀\u200da 😀\u200db")  # a joiner before a letter joins nothing either
    assert list(result.tokens) == ["😀", "a", "😀", "b"] and result.removed_controls == 2


def test_an_inner_mark_joins_only_between_two_letters_or_two_digits() -> None:
    assert toks("dogs' toys") == ["dogs", "'", "toys"]
    assert toks("3. 5") == ["3", ".", "5"]
    assert toks("3.14 don't") == ["3.14", "don't"]
    assert toks("3'a") == ["3", "'", "a"] and toks("a.5") == ["a", ".", "5"]  # one side only: no join


def test_one_token_is_a_valid_limit() -> None:
    result = tokenize("a b", max_tokens=1)
    assert list(result.tokens) == ["a"] and result.total_tokens == 2 and result.truncated
