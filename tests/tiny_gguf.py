"""Helpers for the tiny GGUF files the model tests write with the ``gguf`` package's own writer."""

from __future__ import annotations

import struct

import numpy as np


def q8_0_bytes(codes: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Q8_0 by its definition: per block of 32, a little-endian float16 scale then 32 int8 codes.

    codes: (rows, cols) with cols a multiple of 32; scales: (rows, cols // 32).
    """
    rows, cols = codes.shape
    out = bytearray()
    for r in range(rows):
        for b in range(cols // 32):
            out += struct.pack("<e", float(scales[r, b]))
            out += codes[r, 32 * b : 32 * (b + 1)].astype(np.int8).tobytes()
    return np.frombuffer(bytes(out), dtype=np.uint8).reshape(rows, -1)


def add_q8_0(writer, name: str, codes: np.ndarray, scales: np.ndarray) -> None:
    """Add ``name`` to ``writer`` (a gguf.GGUFWriter) as a Q8_0 tensor of ``codes · scales``."""
    import gguf  # optional (requirements-model.txt): only the tests that write GGUF files need it

    writer.add_tensor(name, q8_0_bytes(codes, scales), raw_dtype=gguf.GGMLQuantizationType.Q8_0)


def finish(writer) -> None:
    """Write the header, the metadata and the tensors, and close the file."""
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
