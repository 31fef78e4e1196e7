"""``python -m attention_core heads``: what a decoder's heads do, as one JSON object.

    python -m attention_core heads --model {smollm2,gemma3} --text TEXT --json [--ablate L.H] [--token ID]
    python -m attention_core heads --model M --induction --seed S --length N --json

The first prints :data:`TEXT_KEYS` (plus ``ablated`` with ``--ablate``), the second
:data:`INDUCTION_KEYS`. Bad input (empty text, a head or layer out of range, a length out of range,
an unknown model or one not installed) ends with exit code 2 and one ``error:`` line on stderr.
"""

from __future__ import annotations

import argparse
import sys

from .export import print_result

TEXT_KEYS = ("model", "token_ids", "top", "logit_lens", "token", "logit", "dla", "dla_rest")
INDUCTION_KEYS = ("model", "token_ids", "induction", "previous_token", "loss_first", "loss_second")


def add_parser(sub) -> None:
    from .labs import heads as H

    p = sub.add_parser(
        "heads", help="logit lens, attribution, ablation and induction heads of a real decoder"
    )
    p.add_argument("--model", choices=H.MODELS, default="smollm2")
    p.add_argument("--text", help="the text (at most 128 tokens)")
    p.add_argument("--ablate", metavar="L.H", help="zero-ablate head H of layer L (e.g. 3.4)")
    p.add_argument("--token", type=int, help="the token id whose logit is attributed (default: the top one)")
    p.add_argument("--induction", action="store_true", help="a seeded random sequence repeated twice")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--length", type=int, default=H.DEFAULT_INDUCTION_LENGTH, help="tokens per copy")
    p.add_argument("--json", action="store_true", help="one JSON object instead of text")


def _top(tops) -> list[dict]:
    return [{"id": t.id, "token": t.label, "p": t.p} for t in tops]


def text_json(model, p, token: int | None, ablate: tuple[int, int] | None) -> dict:
    """The contract's object for one text (``p``: a :class:`~attention_core.labs.heads.HeadsPass`)."""
    from .labs import heads as H

    lens = H.logit_lens(p, model.weights)
    token = lens.target if token is None else token
    att = H.attribution(p, model.weights, token)
    data = {
        "model": model.name,
        "token_ids": list(p.ids),
        "top": _top(H.top_tokens(p.logits, p.ids, model)),
        "logit_lens": [
            [
                {"id": int(i), "token": model.label(p.ids, int(i)), "p": float(q)}
                for i, q in zip(ids, ps, strict=True)
            ]
            for ids, ps in zip(lens.top_ids, lens.top_p, strict=True)
        ],
        "token": int(token),
        "logit": att.model_logit,
        "dla": att.heads.tolist(),
        "dla_rest": {"embedding": att.embedding, "ffn": att.ffn.tolist()},
    }
    if ablate is not None:
        ab = H.ablate(p, model.weights, *ablate, kind="zero", token=token)
        data["ablated"] = {
            "layer": ab.layer, "head": ab.head, "top": _top(H.top_tokens(ab.logits, p.ids, model)), "kl": ab.kl,
        }  # fmt: skip
    return data


def induction_json(model, res) -> dict:
    return {
        "model": model.name,
        "token_ids": list(res.ids),
        "induction": res.induction.tolist(),
        "previous_token": res.previous.tolist(),
        "loss_first": res.loss_first,
        "loss_second": res.loss_second,
    }


def format_text(data: dict) -> str:
    lines = [
        f"model: {data['model']}",
        f"token ids ({len(data['token_ids'])}): {data['token_ids']}",
        "next token:",
    ]
    lines += [f"  {t['p']:.4f}  {t['token']}  (id {t['id']})" for t in data["top"]]
    lines.append("logit lens (top token after each layer):")
    lines += [f"  layer {i:2d}: {e[0]['token']}  {e[0]['p']:.4f}" for i, e in enumerate(data["logit_lens"])]
    best = max(((v, li, h) for li, row in enumerate(data["dla"]) for h, v in enumerate(row)))
    lines.append(f"logit of token {data['token']}: {data['logit']:.4f}; largest head part {best[0]:.4f} "
                 f"(layer {best[1]}, head {best[2]})")  # fmt: skip
    if "ablated" in data:
        a = data["ablated"]
        lines.append(f"head {a['layer']}.{a['head']} zeroed: KL {a['kl']:.5f}; next token now:")
        lines += [f"  {t['p']:.4f}  {t['token']}  (id {t['id']})" for t in a["top"]]
    return "\n".join(lines)


def format_induction(data: dict) -> str:
    best = max((v, li, h) for li, row in enumerate(data["induction"]) for h, v in enumerate(row))
    return "\n".join([
        f"model: {data['model']}",
        f"token ids ({len(data['token_ids'])}): {data['token_ids']}",
        f"strongest induction head: layer {best[1]}, head {best[2]} (score {best[0]:.3f})",
        f"mean loss, first copy {data['loss_first']:.3f}, second copy {data['loss_second']:.3f}",
    ])  # fmt: skip


def _fail(message: str) -> int:
    sys.stderr.write(f"error: {message}\n")
    return 2


def _parse_head(text: str) -> tuple[int, int] | None:
    layer, dot, head = text.partition(".")
    if not (dot and layer.isascii() and layer.isdigit() and head.isascii() and head.isdigit()):
        return None
    return int(layer), int(head)


def run(args: argparse.Namespace) -> int:
    from .labs import heads as H

    if args.induction:
        if args.text is not None or args.ablate is not None or args.token is not None:
            return _fail("--induction takes --seed and --length, not --text, --ablate or --token")
        lo, hi = H.INDUCTION_LENGTH
        if not lo <= args.length <= hi:
            return _fail(f"--length must be between {lo} and {hi}, got {args.length}")
        if args.seed < 0:
            return _fail(f"--seed must be 0 or more, got {args.seed}")
    else:
        if args.text is None or not args.text.strip():
            return _fail("--text is empty: give the text to analyse (or --induction)")
    ablate = None
    if args.ablate is not None:
        ablate = _parse_head(args.ablate)
        if ablate is None:
            return _fail(f"--ablate must be LAYER.HEAD, e.g. 3.4, got {args.ablate!r}")
    try:
        model = H.load_model(args.model)
    except H.ModelUnavailable as err:
        return _fail(str(err))
    except (ValueError, OSError) as err:  # a damaged or unexpected model file
        return _fail(f"the model could not be read: {err}")
    c = model.config
    if ablate is not None and not (0 <= ablate[0] < c.n_layers and 0 <= ablate[1] < c.n_heads):
        return _fail(
            f"--ablate {args.ablate}: the layer must be 0-{c.n_layers - 1} and the head 0-{c.n_heads - 1}"
        )
    if args.token is not None and not 0 <= args.token < c.vocab_size:
        return _fail(f"--token must be between 0 and {c.vocab_size - 1}, got {args.token}")
    try:
        if args.induction:
            data = induction_json(model, H.induction(model, args.length, args.seed))
            return print_result(args.json, lambda: data, lambda: format_induction(data))
        enc = model.encode(args.text, False)
        p = H.run_pass(enc.ids, model, enc.labels)
        data = text_json(model, p, args.token, ablate)
    except H.input_errors() as err:
        return _fail(str(err))
    return print_result(args.json, lambda: data, lambda: format_text(data))
