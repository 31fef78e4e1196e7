"""What the two transformers golden scripts share (make_golden_smollm2.py, make_golden_gemma3.py):
check that transformers' GGUF reader sees the bytes GGUFReader does, and make its load dequantize
with transformers' own PyTorch code instead of ``gguf.dequantize`` (the function our code uses).

Needs PyTorch, transformers and gguf: import it only from those scripts' venv.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np
import torch
from transformers.integrations.gguf import dequant as hf_dequant
from transformers.integrations.gguf.reader import GgufHeader, load_gguf_state_dict


def check_bytes_and_swap_dequantizer(
    path: Path, *, counted: dict[str, int] | None = None, only_f32_besides: bool = False
) -> dict:
    """Make transformers' load dequantize with torch code, after checking both readers agree.

    ``counted`` names extra counters of the stats, each with the ggml type id whose tensors it counts
    (Gemma's Q5_0, dequantized by the script's own code). A tensor of a type transformers' torch
    dequantizer does not know is taken as F32 (nothing to dequantize); with ``only_f32_besides`` it
    must be F32, any other type stops the script.
    """
    counted = counted or {}
    header = GgufHeader.from_file(str(path))
    hf_bytes = {name: np.asarray(t.data) for name, t in load_gguf_state_dict(header).items()}
    reader = gguf.GGUFReader(str(path))
    stats = {
        "tensors": 0,
        "bytes_equal": True,
        "max_abs_diff_vs_gguf_dequantize": 0.0,
        "torch_dequantized": 0,
        **dict.fromkeys(counted, 0),
    }
    for t in reader.tensors:
        raw = np.asarray(t.data)
        if not np.array_equal(raw.view(np.uint8).ravel(), hf_bytes[t.name].view(np.uint8).ravel()):
            stats["bytes_equal"] = False
        stats["tensors"] += 1
    gguf_dequantize = gguf.quants.dequantize

    def torch_dequantize(data: np.ndarray, qtype) -> np.ndarray:
        expected = gguf_dequantize(data, qtype)
        if int(qtype) in hf_dequant.GGML_BLOCK:
            for key, type_id in counted.items():
                stats[key] += int(qtype) == type_id
            flat = torch.from_numpy(np.ascontiguousarray(data).view(np.uint8).ravel().copy())
            values = hf_dequant.dequantize(flat, int(qtype)).numpy().reshape(expected.shape)
        elif not only_f32_besides or int(qtype) == int(gguf.GGMLQuantizationType.F32):  # norms: F32
            values = np.array(data, dtype=np.float32).reshape(expected.shape)
        else:
            raise SystemExit(f"no independent dequantizer for {qtype!r}")
        stats["torch_dequantized"] += 1
        diff = float(np.abs(values.astype(np.float64) - expected).max())
        stats["max_abs_diff_vs_gguf_dequantize"] = max(stats["max_abs_diff_vs_gguf_dequantize"], diff)
        return values

    gguf.dequantize = torch_dequantize
    gguf.quants.dequantize = torch_dequantize
    return stats
