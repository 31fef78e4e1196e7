"""SentencePiece BPE rebuilt from a vocabulary (attention_core/models/spm_bpe.py), on small hand-made
vocabularies whose right answers are worked out by hand in each test. No model file needed.

(The real Gemma 3 tokenizer against an independent merge-by-score implementation on many texts is
tests/test_gemma3_tokenizer.py.)
"""

from __future__ import annotations

import pytest

from attention_core.models import spm_bpe as B

N, C, U, Y = B.NORMAL, B.CONTROL, B.USER_DEFINED, B.BYTE


def vocab(normal: list[tuple[str, float]], user_defined=("  ", "\n", "\n\n")):
    """Specials, 256 byte tokens, user-defined tokens, then the normal ones with their scores."""
    tokens = ["<pad>", "<eos>", "<bos>", "<unk>"]
    types = [C, C, C, 2]
    tokens += [f"<0x{b:02X}>" for b in range(256)]
    types += [Y] * 256
    tokens += list(user_defined)
    types += [U] * len(user_defined)
    scores = [0.0] * len(tokens)
    for t, s in normal:
        tokens.append(t)
        types.append(N)
        scores.append(s)
    return tokens, scores, types


def encode(v, text: str) -> list[str]:
    tokens, scores, types = v
    tk = B.build_tokenizer(tokens, scores, types)
    return [tokens[i] for i in B.encode_ids(tk, text, bos_id=2)]


BASE = [("a", -10.0), ("b", -11.0), ("c", -12.0), ("\u2581", -13.0)]


def test_the_better_scored_pair_merges_first():
    # "abc": pairs ab and bc. With ab scored higher, ab merges and c stays alone; swapped, bc wins.
    assert encode(vocab([*BASE, ("ab", -1.0), ("bc", -2.0)]), "abc") == ["<bos>", "ab", "c"]
    assert encode(vocab([*BASE, ("ab", -2.0), ("bc", -1.0)]), "abc") == ["<bos>", "a", "bc"]


def test_a_token_is_reached_through_any_split_of_it():
    # abc is a token; bc merges first (score -1), then a + bc makes abc although ab + c never formed
    v = vocab([*BASE, ("bc", -1.0), ("abc", -3.0), ("ab", -5.0)])
    assert encode(v, "abc") == ["<bos>", "abc"]
    # and through the other split: ab merges first (-1), then ab + c makes abc (-3), not a + bc
    v = vocab([*BASE, ("ab", -1.0), ("abc", -3.0), ("bc", -5.0)])
    assert encode(v, "abc") == ["<bos>", "abc"]


def test_equal_pairs_merge_left_first():
    # "aaa": both pairs are aa; the left one merges, leaving a lone a at the end
    assert encode(vocab([*BASE, ("aa", -1.0)]), "aaa") == ["<bos>", "aa", "a"]


def test_spaces_become_the_space_piece_and_no_prefix_is_added():
    v = vocab([*BASE, ("\u2581b", -1.0)])
    assert encode(v, "a b") == ["<bos>", "a", "\u2581b"]
    assert encode(v, "b")[1] == "b"  # no ▁ in front of the text


def test_user_defined_tokens_are_cut_out_of_the_raw_text_first():
    v = vocab([*BASE, ("\u2581b", -1.0), ("\u2581\u2581", -0.5)])
    # two spaces are the user-defined "  " (not ▁▁ or ▁ + ▁b); one newline and two are tokens of their own
    assert encode(v, "a  b") == ["<bos>", "a", "  ", "b"]
    assert encode(v, "a\n\n\nb") == ["<bos>", "a", "\n\n", "\n", "b"]


def test_byte_fallback_for_characters_outside_the_vocabulary():
    assert encode(vocab(BASE), "aé") == ["<bos>", "a", "<0xC3>", "<0xA9>"]


def test_control_tokens_are_never_read_from_text():
    out = encode(vocab([*BASE, ("<", -1.0), (">", -1.5)]), "<bos>")
    assert "<bos>" not in out[1:] and out[1] == "<" and out[-1] == ">"


def test_token_bytes():
    assert B.token_bytes("\u2581cat", N) == b" cat"
    assert B.token_bytes("<0xE7>", Y) == b"\xe7"
    assert B.token_bytes("<bos>", C) is None
    assert B.token_bytes("  ", U) == b"  "
    with pytest.raises(ValueError):
        B.token_bytes("<0xZZ>", Y)
    assert B.byte_value("<0x0A>") == 10 and B.byte_value("<0x0A") is None


def test_lists_must_line_up():
    tokens, scores, types = vocab(BASE)
    with pytest.raises(ValueError):
        B.build_tokenizer(tokens, scores[:-1], types)


def test_without_byte_tokens_a_missing_character_is_the_unknown_token():
    tokens, scores, types = vocab(BASE)
    keep = [i for i, k in enumerate(types) if k != Y]  # drop the 256 <0xNN> tokens
    tokens, scores, types = ([seq[i] for i in keep] for seq in (tokens, scores, types))
    tk = B.build_tokenizer(tokens, scores, types)
    assert [tokens[i] for i in tk.encode("aéb")] == ["a", "<unk>", "b"]
    # and with no unknown token either, the text cannot be read: an error, not a wrong id
    tk = B.build_tokenizer(tokens, scores, types, unk="<none>")
    with pytest.raises(ValueError, match="no token"):
        tk.encode("é")


def test_one_byte_token_missing_turns_byte_fallback_off():
    tokens, scores, types = vocab(BASE)
    tokens[4 + 0xA9] = "<0xA9-gone>"  # é is C3 A9: without <0xA9> it cannot be spelled in bytes
    assert [tokens[i] for i in B.build_tokenizer(tokens, scores, types).encode("é")] == ["<unk>"]


def naive_sentencepiece(tokens, scores, types, text: str) -> list[str]:
    """SentencePiece's BPE written the slow, obvious way (no heap, no linked list): scan every
    neighbouring pair, merge the one whose concatenation is the best-scored normal token (the
    leftmost on a tie), start again; then spell what is no token as its bytes."""
    first = {}
    for i, t in enumerate(tokens):
        first.setdefault(t, i)
    symbols = list(text.replace(" ", "\u2581"))
    while True:
        best = None
        for k in range(len(symbols) - 1):
            i = first.get(symbols[k] + symbols[k + 1])
            if i is not None and types[i] == N and (best is None or scores[i] > scores[first[best[1]]]):
                best = (k, symbols[k] + symbols[k + 1])
        if best is None:
            break
        k, merged = best
        symbols[k : k + 2] = [merged]
    out = []
    for s in symbols:
        out += [s] if s in first else [f"<0x{b:02X}>" for b in s.encode("utf-8")]
    return out


def test_equals_the_naive_loop_on_random_vocabularies():
    """Seeded random vocabularies over a three-letter alphabet (so that pieces overlap, repeat and
    compete: "aaa", "abab" ...) with all-different scores, and random texts of up to 14 letters."""
    import random

    rng = random.Random(28)
    for _ in range(300):
        pieces = {
            "".join(rng.choice("abé") for _ in range(rng.randint(2, 5))) for _ in range(rng.randint(3, 14))
        }
        singles = [c for c in "ab" if rng.random() < 0.9]  # sometimes "a" or "b" is no token of its own
        chosen = sorted(pieces) + singles
        normal = list(zip(chosen, map(float, rng.sample(range(-100, 0), len(chosen))), strict=True))
        v = vocab(normal, user_defined=())
        text = "".join(rng.choice("ab é") for _ in range(rng.randint(0, 14)))
        tokens, scores, types = v
        assert encode(v, text)[1:] == naive_sentencepiece(tokens, scores, types, text), (normal, text)
