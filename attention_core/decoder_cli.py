"""``python -m attention_core decoder``: a real decoder's attention and its next-token distribution.

    python -m attention_core decoder [--model {smollm2,gemma3}] --text TEXT --json [--layer L] [--top-k K]

prints one JSON object with the keys :data:`DECODER_JSON_KEYS`. ``--model`` defaults to smollm2
(SmolLM2-135M, 128 tokens at most); gemma3 is Gemma 3 270M (1,024 tokens at most, its BOS token
included, shown first). ``layer_kind`` is "local" or "global", ``window`` the keys a query of layer
L reaches (512 on Gemma's local layers, null on a global layer: SmolLM2's layers are all global)
and ``rope_base`` that layer's RoPE base. Bad input (empty text, an unknown model, a layer out of
range, a top-k out of range, text over the token limit) and a missing model end with exit code 2
and one ``error:`` line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .export import print_result

DECODER_JSON_KEYS = (
    "model", "token_ids", "tokens", "n_layers", "n_heads", "n_kv_heads", "head_dim", "layer", "weights",
    "kv_head_of", "next_tokens", "layer_kind", "window", "rope_base",
)  # fmt: skip
MODELS = ("smollm2", "gemma3")
DEFAULT_TOP_K = 10
MAX_TOP_K = 100


def add_parser(sub) -> None:
    """Register the ``decoder`` subcommand on ``cli.build_parser``'s subparsers."""
    p = sub.add_parser(
        "decoder", help="a real decoder (SmolLM2-135M or Gemma 3 270M): attention weights and next token"
    )
    # no argparse choices: a wrong name must end in one "error:" line with exit code 2, like every
    # other bad input here (argparse would print its usage block as well)
    p.add_argument("--model", default="smollm2", help="smollm2 (default) or gemma3")
    p.add_argument(
        "--text", required=True, help="the text (at most 128 tokens with smollm2, 1024 with gemma3)"
    )
    p.add_argument(
        "--layer", type=int, default=0, help="the layer whose weights are printed (smollm2 0-29, gemma3 0-17)"
    )
    p.add_argument("--top-k", type=int, default=DEFAULT_TOP_K, help="how many next tokens to list")
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")


def _model_module(name: str):
    if name == "gemma3":
        from .models import gemma3

        return gemma3
    from .models import smollm2

    return smollm2


def decoder_json(trace, layer: int, top_k: int, model: str = "smollm2") -> dict:
    """The contract's JSON object for a ``DecoderTrace`` of :mod:`.models.smollm2` or :mod:`.models.gemma3`."""
    module = _model_module(model)
    c = trace.config
    candidates = module.top_candidates(trace.logits, top_k, trace.ids)
    t = trace.layers[layer]
    return {
        "model": module.MODEL_NAME,
        "token_ids": list(trace.ids),
        "tokens": list(trace.labels),
        "n_layers": c.n_layers,
        "n_heads": c.n_heads,
        "n_kv_heads": c.n_kv_heads,
        "head_dim": c.head_dim,
        "layer": layer,
        "weights": trace.layers[layer].weights.astype(float).tolist(),
        "kv_head_of": [int(k) for k in trace.kv_head_of],
        "next_tokens": [{"id": cand.id, "token": cand.label, "p": cand.p} for cand in candidates],
        "layer_kind": c.layer_kind(layer),
        "window": t.window,
        "rope_base": c.rope_base_of(layer),
    }


def format_decoder(data: dict) -> str:
    """The same facts as readable text."""
    lines = [
        f"model: {data['model']}",
        f"tokens ({len(data['tokens'])}): " + " | ".join(f"{i}:{t}" for i, t in enumerate(data["tokens"])),
        f"layers {data['n_layers']}, query heads {data['n_heads']}, KV heads {data['n_kv_heads']}, "
        f"head_dim {data['head_dim']}; query head -> KV head: {data['kv_head_of']}",
        f"layer {data['layer']}: {data['layer_kind']}, window {data['window'] or 'none (every earlier token)'}, "
        f"RoPE base {data['rope_base']:g}",
    ]
    with np.printoptions(precision=3, suppress=True, linewidth=120):
        for h, w in enumerate(data["weights"]):
            lines += [
                f"\nlayer {data['layer']}, head {h} (KV head {data['kv_head_of'][h]}): weights",
                str(np.array(w)),
            ]
    lines.append("\nnext token:")
    lines += [f"  {c['p']:.4f}  {c['token']}  (id {c['id']})" for c in data["next_tokens"]]
    return "\n".join(lines)


def _fail(message: str) -> int:
    sys.stderr.write(f"error: {message}\n")
    return 2


def run(args: argparse.Namespace) -> int:
    if args.model not in MODELS:
        return _fail(f"--model must be one of {', '.join(MODELS)}, got {args.model!r}")
    from .models import smollm2

    module = _model_module(args.model)
    n_layers = module.GEMMA3_270M.n_layers if args.model == "gemma3" else smollm2.SMOLLM2_135M.n_layers
    if not 0 <= args.layer < n_layers:
        return _fail(f"--layer must be between 0 and {n_layers - 1}, got {args.layer}")
    if not 1 <= args.top_k <= MAX_TOP_K:
        return _fail(f"--top-k must be between 1 and {MAX_TOP_K}, got {args.top_k}")
    try:
        smollm2.check_text(args.text)
        # Gemma keeps only the weights (and the cache) per layer: the command prints one layer's weights
        trace = (
            module.run_text(args.text, keep="weights")
            if args.model == "gemma3"
            else module.run_text(args.text)
        )
    except smollm2.DecoderInputError as err:
        return _fail(str(err))
    except smollm2.DecoderUnavailable as err:  # gemma3's is a subclass
        return _fail(str(err))
    except (ValueError, OSError) as err:  # a damaged or unexpected model file
        return _fail(f"the decoder model could not be read: {err}")
    data = decoder_json(trace, args.layer, args.top_k, args.model)
    return print_result(args.json, lambda: data, lambda: format_decoder(data))
