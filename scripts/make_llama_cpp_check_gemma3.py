"""Write tests/data/gemma3_llama_cpp.npz from llama.cpp itself (run by hand, not in CI).

tests/gemma3_reference_tokenizer.py and tests/data/gemma3_golden.npz (scripts/make_golden_gemma3.py)
are our two references. llama.cpp, through llama-cpp-python, is a third implementation sharing
nothing with them: its own C++ GGUF reader, its own SentencePiece tokenizer (user-defined tokens
partitioned out first, then merge by score), its own graph. This script records its answers (the
tests compare the reference tokenizer and our pass with them) and prints where it disagrees:

- token ids of every string in tests/test_gemma3_tokenizer.py, the hostile corpus and the golden
  prompts, against the reference tokenizer;
- the top-5 next tokens of the golden prompts (fed the golden ids) against the golden file. llama.cpp
  multiplies quantized weights by 8-bit-quantized activations, so its probabilities differ from a
  float32 pass by more than 1e-3; the top tokens should agree.

Set-up: the venv of scripts/make_golden_gemma3.py, plus (llama-cpp-python builds llama.cpp from
source, about 12 minutes on 2 cores; needs cmake and g++):

    /work/refvenv-gemma/bin/pip install --no-deps llama-cpp-python==0.3.36
    /work/refvenv-gemma/bin/pip install diskcache==5.6.3 pytest==9.2.0
    /work/refvenv-gemma/bin/python scripts/make_llama_cpp_check_gemma3.py
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
from golden_io import llama_cpp_meta, llama_cpp_top, save_golden  # noqa: E402  (scripts/ is on sys.path)
from llama_cpp import Llama

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import gemma3_reference_tokenizer as reference  # noqa: E402
from test_gemma3_tokenizer import TEXTS  # noqa: E402  (needs pytest importable)

GOLDEN = ROOT / "tests" / "data" / "gemma3_golden.npz"
OUT = ROOT / "tests" / "data" / "gemma3_llama_cpp.npz"


def main() -> None:
    package = importlib.import_module(reference.MODEL_PACKAGE)
    tmp = Path(tempfile.mkdtemp(prefix="gemma3-llama-cpp-"))
    try:
        path = package.assemble(tmp / package.MODEL_NAME)
        run(path)
    finally:
        shutil.rmtree(tmp)


def run(path: Path) -> None:
    tok = reference.load()
    llm = Llama(model_path=str(path), n_ctx=1024, n_batch=1024, logits_all=True, n_threads=1, verbose=False)
    golden = np.load(GOLDEN)
    meta = json.loads(bytes(golden["meta_json"]).decode("utf-8"))
    corpus = json.loads((ROOT / "tests" / "data" / "hostile_inputs.json").read_text(encoding="utf-8"))
    texts = (
        list(TEXTS)
        + [e["text"][:2000] for e in corpus["texts"]]
        + [c["text"] for c in meta["cases"]]
        + [meta["long"]["text"]]
    )
    arrays: dict[str, np.ndarray] = {}
    differ = 0
    for j, text in enumerate(texts):
        ours = tok.encode(text)
        theirs = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)
        arrays[f"tok{j}_ids"] = np.asarray(theirs, dtype=np.int64)
        if ours != theirs:
            differ += 1
            print(f"tokenizer differs on {text[:60]!r}")
            print("  reference:", tok.pieces_of(ours)[:40])
            print("  llama.cpp:", [tok.tokens[i] for i in theirs][:40])
    print(f"tokenizer: {len(texts)} strings, {differ} differ from llama.cpp")

    cases = [f"case{i}" for i in range(len(meta["cases"]))] + ["long"]
    for key in cases:
        ids = golden[f"{key}_ids"].tolist()
        probs, top = llama_cpp_top(llm, ids)
        arrays[f"{key}_top_ids"] = top.astype(np.int64)
        arrays[f"{key}_top_p"] = probs[top]
        gold_top = golden[f"{key}_top_ids"]
        diff = float(np.abs(probs[gold_top] - golden[f"{key}_top_p"]).max())
        print(
            f"{key} (n={len(ids)}): llama.cpp top-5 {[tok.tokens[t] for t in top]} "
            f"golden {[tok.tokens[t] for t in gold_top]}; same order: {top.tolist() == gold_top.tolist()}; "
            f"max |p - golden p| on the golden top-5: {diff:.4f}"
        )
    meta_out = llama_cpp_meta(
        path, tokenizer_texts=texts, cases=cases, tokenizer_differences_from_reference=differ
    )
    save_golden(OUT, arrays, meta_out)


if __name__ == "__main__":
    main()
