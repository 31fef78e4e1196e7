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

The encoder here (:class:`SentencePieceBPE`) does these four steps itself, in plain Python over the
file's own lists: a dictionary from token string to id, the token types as one byte each, and each
normal token's rank (its position when the tokens are sorted by score, best first, ties by id).
Nothing else is stored: no merge list. A ``tokenizers`` BPE would need one (every split of each
normal token into two normal tokens: 513,511 pairs for Gemma 3) and held ~75 MB for this vocabulary
against ~19 MB here (measured; issue 25's memory target). Control tokens (``<bos>``,
``<start_of_turn>`` ...) are never matched in text: what a learner types is read as plain text.
"""

from __future__ import annotations

import heapq
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

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


@dataclass(frozen=True, eq=False)
class SentencePieceBPE:
    """Step 1-4 of the module docstring over one vocabulary. :meth:`encode` adds no BOS
    (:func:`encode_ids` does)."""

    ids: dict[str, int] = field(repr=False)  # token string -> id (a repeated string: its first id)
    types: bytes = field(repr=False)  # types[id]: NORMAL, CONTROL, USER_DEFINED, BYTE ... (one byte each)
    rank: array = field(repr=False)  # rank[id]: position of a normal token by score, best first
    user_defined: re.Pattern | None = field(repr=False)  # the user-defined tokens, longest first
    byte_ids: tuple[int, ...] | None  # the id of <0x00> ... <0xFF>; None when one is missing
    unk_id: int | None

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text`` (step 1 to 4)."""
        out: list[int] = []
        start = 0
        if self.user_defined is not None:
            for match in self.user_defined.finditer(text):
                out += self._encode_piece(text[start : match.start()])
                out.append(self.ids[match.group()])
                start = match.end()
        out += self._encode_piece(text[start:])
        return out

    def _encode_piece(self, piece: str) -> list[int]:
        """Step 2-4 on text holding no user-defined token."""
        symbols = list(piece.replace(" ", SPACE_PIECE))  # step 2, then one symbol per character
        n = len(symbols)
        if n == 0:
            return []
        ids = [self.ids.get(c, -1) for c in symbols]  # -1: a character that is no token
        nxt = list(range(1, n + 1))  # linked list over the symbols still standing (n: the end)
        prv = list(range(-1, n - 1))
        heap: list[tuple[int, int, int]] = []  # (rank of the pair's token, position of its left side, id)
        for i in range(n - 1):
            self._push_pair(heap, symbols, i, i + 1)
        while heap:  # step 3: the best-ranked pair, on a tie the leftmost
            _, i, merged = heapq.heappop(heap)
            j = nxt[i] if symbols[i] else n
            if j >= n or self.ids.get(symbols[i] + symbols[j]) != merged:
                continue  # stale: one side merged into something else since the pair was pushed
            symbols[i], ids[i], symbols[j] = symbols[i] + symbols[j], merged, ""
            nxt[i] = nxt[j]
            if nxt[i] < n:
                prv[nxt[i]] = i
            if prv[i] >= 0:
                self._push_pair(heap, symbols, prv[i], i)
            if nxt[i] < n:
                self._push_pair(heap, symbols, i, nxt[i])
        out: list[int] = []
        i = 0
        while i < n:  # step 4
            out += [ids[i]] if ids[i] >= 0 else self._fallback(symbols[i])
            i = nxt[i]
        return out

    def _push_pair(self, heap: list, symbols: list[str], i: int, j: int) -> None:
        """Queue symbols i and j (neighbours) when their concatenation is a normal token (as
        SentencePiece does, whatever the two sides are: a character with no token of its own can
        merge into one that holds it)."""
        merged = self.ids.get(symbols[i] + symbols[j])
        if merged is not None and self.types[merged] == NORMAL:
            heapq.heappush(heap, (self.rank[merged], i, merged))

    def _fallback(self, char: str) -> list[int]:
        """A character that is no token: its UTF-8 bytes as <0xNN> tokens, else the unknown token."""
        if self.byte_ids is not None:
            return [self.byte_ids[b] for b in char.encode("utf-8")]
        if self.unk_id is None:
            raise ValueError(f"{char!r} has no token, no byte tokens and no unknown token")
        return [self.unk_id]


def build_tokenizer(
    tokens: Sequence[str], scores: Sequence[float], types: Sequence[int], unk: str = "<unk>"
) -> SentencePieceBPE:
    """The encoder of this vocabulary (see the module docstring): ``tokens[i]`` is token i's string,
    ``scores[i]`` its merge priority (higher merges first), ``types[i]`` its kind."""
    if not len(tokens) == len(scores) == len(types):
        raise ValueError("tokens, scores and types must have one entry per token")
    ids: dict[str, int] = {}
    for i, t in enumerate(tokens):
        ids.setdefault(t, i)  # a repeated string keeps its first id, as SentencePiece does
    rank = array("i", bytes(4 * len(tokens)))
    # best score first; a stable sort keeps equal scores in id order (reverse=True keeps it stable)
    for r, i in enumerate(sorted(range(len(tokens)), key=scores.__getitem__, reverse=True)):
        rank[i] = r
    # longest first: at one position the longest user-defined token is cut (re tries them in order)
    user = sorted(
        {t for t, k in zip(tokens, types, strict=True) if k == USER_DEFINED}, key=lambda t: (-len(t), t)
    )
    byte_ids = tuple(ids.get(f"<0x{b:02X}>", -1) for b in range(256))
    return SentencePieceBPE(
        ids=ids,
        types=bytes(types),
        rank=rank,
        user_defined=re.compile("|".join(map(re.escape, user))) if user else None,
        byte_ids=None if -1 in byte_ids else byte_ids,
        unk_id=ids.get(unk),
    )


def encode_ids(tokenizer: SentencePieceBPE, text: str, bos_id: int) -> list[int]:
    """``[bos_id, ...the text's tokens]``: the model always reads BOS first."""
    return [bos_id, *tokenizer.encode(text)]


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
