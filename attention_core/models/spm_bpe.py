"""SentencePiece BPE (Gemma's tokenizer) rebuilt from a GGUF vocabulary, and the bytes of each token.

A GGUF file of the "llama" tokenizer model stores SentencePiece's pieces as three lists: the token
strings, a score per token and a type per token (1 normal, 3 control, 4 user-defined, 6 byte) but
no merge list. SentencePiece's BPE encodes a piece of text like this:

1. user-defined tokens (for Gemma 3: runs of newlines, runs of 2-31 spaces, runs of tabs, a few
   markup tags such as ``<b>``) are cut out of the raw text first and become one token each;
2. in what remains every space becomes ``▁`` (U+2581); Gemma adds no ``▁`` in front of the text;
3. the text starts as single characters; then, again and again, of all neighbouring pairs whose
   concatenation is a normal token, the one whose token has the highest score is merged (on equal
   scores the leftmost), until no pair makes a token;
4. a character that is not a token of its own is spelled as its UTF-8 bytes, ``<0xE7>`` ... (byte
   fallback); and the model reads the BOS token ``<bos>`` before the text.

Step 3 is exactly what a ``tokenizers`` BPE model does with a merge list ranked by score, if the
list holds every way of splitting each normal token into two normal tokens, ranked by that
token's score (in Gemma's file the scores are 0, -1, -2 ... in id order, all different):
:func:`derive_merges`. The tokenizer itself is a ``tokenizers.Tokenizer`` (optional library,
imported inside :func:`build_tokenizer`) with the user-defined tokens as added tokens matched
on the raw text, a normalizer for step 2 and ``byte_fallback`` for step 4. Control tokens
(``<bos>``, ``<start_of_turn>`` ...) are never matched in text: what a learner types is read as
plain text.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

SPACE_PIECE = "\u2581"  # ▁, SentencePiece's sign for a space
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6  # llama.cpp's token types


def byte_value(token: str) -> int | None:
    """``"<0xE7>" -> 0xE7``; None for any other string."""
    if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
        try:
            return int(token[3:5], 16)
        except ValueError:
            return None
    return None


def derive_merges(
    tokens: Sequence[str], scores: Sequence[float], types: Sequence[int]
) -> list[tuple[str, str]]:
    """Every split of a normal token into two normal tokens, best-scored token first.

    ``[(left, right), ...]`` where ``left + right`` is a normal token; the splits of one token are
    listed together, from the shortest left part. A ``tokenizers`` BPE applies the lowest-ranked
    (first-listed) pair present, so this ranks each pair by the score of the token it makes, as
    SentencePiece does.
    """
    normal = {t for t, k in zip(tokens, types, strict=True) if k == NORMAL}
    order = sorted(
        (i for i, k in enumerate(types) if k == NORMAL and len(tokens[i]) > 1), key=lambda i: (-scores[i], i)
    )
    merges: list[tuple[str, str]] = []
    for i in order:
        t = tokens[i]
        for cut in range(1, len(t)):
            left, right = t[:cut], t[cut:]
            if left in normal and right in normal:
                merges.append((left, right))
    return merges


def build_tokenizer(tokens: Sequence[str], scores: Sequence[float], types: Sequence[int], unk: str = "<unk>"):
    """A ``tokenizers.Tokenizer`` doing SentencePiece BPE on this vocabulary (see the module docstring).

    It adds no BOS: :func:`encode_ids` does. Raises ``ImportError`` without ``tokenizers``.
    """
    try:
        tk = importlib.import_module("tokenizers")
    except ImportError:
        raise ImportError("The optional library 'tokenizers' is not installed") from None
    if not len(tokens) == len(scores) == len(types):
        raise ValueError("tokens, scores and types must have one entry per token")
    vocab: dict[str, int] = {}
    for i, t in enumerate(tokens):
        vocab.setdefault(t, i)  # a repeated string keeps its first id, as SentencePiece does
    model = tk.models.BPE(
        vocab=vocab,
        merges=derive_merges(tokens, scores, types),
        unk_token=unk,
        byte_fallback=True,
        fuse_unk=False,
    )
    tokenizer = tk.Tokenizer(model)
    tokenizer.normalizer = tk.normalizers.Replace(" ", SPACE_PIECE)
    user_defined = [t for t, k in zip(tokens, types, strict=True) if k == USER_DEFINED]
    # normalized=False: matched in the raw text, before spaces become ▁ (so "  " is token 138)
    tokenizer.add_tokens([tk.AddedToken(t, normalized=False, special=False) for t in user_defined])
    return tokenizer


def encode_ids(tokenizer, text: str, bos_id: int) -> list[int]:
    """``[bos_id, ...the text's tokens]``: the model always reads BOS first."""
    return [bos_id, *tokenizer.encode(text, add_special_tokens=False).ids]


def token_bytes(token: str, kind: int) -> bytes | None:
    """The bytes of text a token stands for: ``"▁cat" -> b" cat"``, ``"<0xE7>" -> b"\\xe7"``; None
    for a control token (``<bos>``), which stands for no text."""
    if kind == CONTROL or kind == UNKNOWN:
        return None
    if kind == BYTE:
        value = byte_value(token)
        if value is None:
            raise ValueError(f"{token!r} is typed as a byte token but is not <0xNN>")
        return bytes([value])
    return token.replace(SPACE_PIECE, " ").encode("utf-8")
