"""Reading a GGUF file (llama.cpp's model format) with the ``gguf`` package: metadata and tensors.

A GGUF file holds key/value metadata (architecture numbers, the tokenizer's vocabulary and merges)
and named tensors, most of them quantized in blocks of 32 numbers:

- ``Q4_1``: per block a float16 scale ``d`` and minimum ``m`` and 32 four-bit codes ``q`` (0..15),
  value ``= d·q + m``; 20 bytes for 32 numbers.
- ``Q8_0``: per block a float16 scale ``d`` and 32 signed bytes ``q``, value ``= d·q``; 34 bytes.

``gguf`` is an optional extra, imported only inside the functions here, so ``import attention_core``
needs nothing but NumPy.
"""

from __future__ import annotations

import importlib
import struct
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np


class GGUFUnavailable(RuntimeError):
    """The ``gguf`` reader library is not installed."""


def _gguf():
    try:
        return importlib.import_module("gguf")
    except ImportError:
        raise GGUFUnavailable("The optional library 'gguf' is not installed") from None


def open_reader(path: Path | str):
    """A ``gguf.GGUFReader`` over the file, memory-mapped (nothing is read until used).

    The reader keeps its memory map as a ``numpy.memmap``; every slice of a memmap runs Python
    bookkeeping, and the reader slices once per string of the vocabulary (~100,000 times), which made
    opening this 94 MB file take ~8 s here. Handing it a plain ``ndarray`` view of the same map (same
    bytes, no copy) makes that ~1.5 s.

    The reader also makes one NumPy view per element of every metadata array (three per token of
    the vocabulary: its string, score and type). For Gemma 3's 262,144 tokens that was ~3.8 s of a
    start. Arrays of numbers are therefore read as one array each, and arrays of strings are decoded
    in one pass over the bytes and kept aside (``read_metadata`` returns them); their fields in
    ``reader.fields`` then hold the raw bytes only. The reader is otherwise used as it is.
    """
    gguf = _gguf()
    value_type = gguf.GGUFValueType

    class _PlainArrayReader(gguf.GGUFReader):
        @property
        def data(self) -> np.ndarray:
            return self._plain_data

        @data.setter
        def data(self, value: np.ndarray) -> None:
            self._plain_data = np.asarray(value)  # drops the memmap subclass, keeps the mapping

        def _get_field_parts(self, orig_offs: int, raw_type: int):
            little = sys.byteorder == "little" and getattr(self, "byte_order", "I") != "S"
            if raw_type != value_type.ARRAY or not little:
                return super()._get_field_parts(orig_offs, raw_type)
            item_type = int(self._get(orig_offs, np.uint32)[0])
            count = int(self._get(orig_offs + 4, np.uint64)[0])
            start = orig_offs + 12
            head = [self._get(orig_offs, np.uint32), self._get(orig_offs + 4, np.uint64)]
            if item_type == value_type.STRING:
                strings, end = _read_strings(self.data, start, count)
                self._pending_strings = strings
                region = self.data[start:end]
                return end - orig_offs, [*head, region], [], [value_type.ARRAY, value_type.STRING]
            np_type = self.gguf_scalar_to_np.get(value_type(item_type))
            if np_type is None:  # nested arrays: the reader's own way
                return super()._get_field_parts(orig_offs, raw_type)
            values = self._get(start, np_type, count)
            return 12 + int(values.nbytes), [*head, values], [2], [value_type.ARRAY, value_type(item_type)]

        def _push_field(self, field, skip_sum: bool = False) -> int:
            pending = getattr(self, "_pending_strings", None)
            if pending is not None:
                self._fast_strings = {**getattr(self, "_fast_strings", {}), field.name: pending}
                self._pending_strings = None
            return super()._push_field(field, skip_sum)

    return _PlainArrayReader(str(path), "r")


def _read_strings(data: np.ndarray, start: int, count: int) -> tuple[list[str], int]:
    """``count`` GGUF strings (a little-endian uint64 length, then UTF-8 bytes) from ``start``:
    ``-> (the strings, the offset after the last)``."""
    raw = memoryview(data).cast("B")
    unpack = struct.Struct("<Q").unpack_from
    out, offs = [], start
    for _ in range(count):
        (length,) = unpack(raw, offs)
        offs += 8
        out.append(str(raw[offs : offs + length], "utf-8"))
        offs += length
    return out, offs


def read_metadata(reader, skip: tuple[str, ...] = ()) -> dict[str, object]:
    """Every metadata key with its value (strings, numbers, lists), except the keys in ``skip``."""
    out: dict[str, object] = {}
    strings = getattr(reader, "_fast_strings", {})
    for name, field in reader.fields.items():
        if name in skip:
            continue
        out[name] = list(strings[name]) if name in strings else field.contents()
    return out


def tensor_names(reader) -> dict[str, object]:
    """The reader's tensors by name."""
    return {t.name: t for t in reader.tensors}


def tensor_shape(tensor) -> tuple[int, ...]:
    """A tensor's shape in NumPy (row-major) order: GGUF lists dimensions fastest-first, so it is reversed.

    A matrix stored as ``[in, out]`` in GGUF's order is ``(out, in)`` here, PyTorch's layout.
    """
    return tuple(int(s) for s in reversed(list(tensor.shape)))


def quant_type_name(tensor) -> str:
    return str(tensor.tensor_type.name)


def dequantize(tensor) -> np.ndarray:
    """The tensor's numbers as a new, C-ordered float32 array of :func:`tensor_shape`.

    Uses ``gguf.quants.dequantize``; the result never shares memory with the file's map.
    """
    gguf = _gguf()
    values = gguf.quants.dequantize(np.asarray(tensor.data), tensor.tensor_type)
    out = np.array(values, dtype=np.float32, order="C", copy=True)
    return out.reshape(tensor_shape(tensor))


def q8_0_blocks(tensor) -> tuple[np.ndarray, np.ndarray]:
    """A ``Q8_0`` matrix kept compact: codes ``int8 [rows, cols]`` and scales ``float32 [rows, cols/32]``.

    Value ``[r, c]`` is ``codes[r, c] · scales[r, c // 32]``, exactly what ``dequantize`` returns (a
    float16 scale times a small integer is exact in float32). Both arrays are copies.
    """
    if quant_type_name(tensor) != "Q8_0":
        raise ValueError(f"{tensor.name} is {quant_type_name(tensor)}, not Q8_0")
    rows, cols = tensor_shape(tensor)
    raw = np.asarray(tensor.data, dtype=np.uint8).reshape(rows, cols // 32, 34)
    scales = raw[:, :, :2].copy().view(np.float16)[..., 0].astype(np.float32)  # [rows, cols/32]
    codes = raw[:, :, 2:].reshape(rows, cols).view(np.int8).copy()  # [rows, cols]
    return codes, scales


def metadata_int(meta: Mapping[str, object], key: str) -> int:
    try:
        return int(meta[key])  # type: ignore[call-overload]
    except KeyError:
        raise ValueError(f"the GGUF file has no {key!r}") from None
