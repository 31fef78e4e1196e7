"""What the golden-value scripts share: finding a model file inside its wheel, writing the .npz.

NumPy and the standard library only, so every script's own venv (with PyTorch, transformers or
llama-cpp-python) can import it from this folder.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import numpy as np


def packaged_file(distribution: str, suffix: str) -> Path:
    """The first file of an installed distribution whose name ends with ``suffix``."""
    dist = importlib.metadata.distribution(distribution)
    for f in dist.files or ():
        if f.name.endswith(suffix):
            return Path(str(dist.locate_file(f)))
    raise SystemExit(f"no {suffix} file in {distribution}")


def save_golden(out: Path, arrays: dict[str, np.ndarray], meta: dict) -> None:
    """``arrays`` plus ``meta`` (as UTF-8 JSON bytes under ``meta_json``) into one compressed .npz."""
    arrays = {
        **arrays,
        "meta_json": np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"), np.uint8),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **arrays)
    print(f"wrote {out} ({out.stat().st_size} bytes)")


def llama_cpp_top(llm, ids: list[int], k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """llama.cpp's next-token probabilities after ``ids`` (a fresh pass) and its top ``k`` ids."""
    llm.reset()
    llm.eval(ids)
    logits = np.asarray(llm.scores[len(ids) - 1], dtype=np.float64)
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    return probs, np.argsort(-probs, kind="stable")[:k]


def llama_cpp_meta(path: Path, **more) -> dict:
    """The meta of a llama.cpp check file: llama-cpp-python's version, the model, Python, then ``more``."""
    return {
        "reference": "llama.cpp via llama-cpp-python " + importlib.metadata.version("llama_cpp_python"),
        "model": path.name,
        "python": sys.version.split()[0],
        **more,
    }
