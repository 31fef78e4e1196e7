"""The hostile input corpus (tests/data/hostile_inputs.json) through the CLI and the figure builders.

The CLI runs as a real subprocess, as a learner would run it: every input must end with exit 0 and
the tokenizer's tokens in the JSON, or exit 2 with exactly one ``error:`` line, never a traceback.
The figure part checks, independently of ``escape_label``, that every label Plotly would render is
free of markup and reads back (after HTML-unescaping) as the token itself.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_core import AttentionConfig, tokenize
from attention_ui.figures import base, heatmaps

ROOT = Path(__file__).resolve().parent.parent
CORPUS = json.loads((ROOT / "tests" / "data" / "hostile_inputs.json").read_text(encoding="utf-8"))
TEXTS = CORPUS["texts"]
CONFIGS = CORPUS["configs"]
VENV_PY = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PY) if VENV_PY.exists() else sys.executable
CLI_FLAGS = {
    "d_model": "--d-model",
    "heads": "--heads",
    "d_k": "--d-k",
    "d_v": "--d-v",
    "seed": "--seed",
    "pad": "--pad",
}


def test_corpus_covers_the_issue() -> None:
    ids = {e["id"] for e in TEXTS}
    needed = {
        "empty",
        "blank",
        "chars_10000",
        "tokens_1000",
        "one_token_5000",
        "emoji_zwj",
        "arabic_hebrew",
        "combining",
        "zero_width",
        "control_nul",
        "script_tag",
        "img_onerror",
        "plotly_pseudo_html",
        "plotly_link",
        "markdown",
        "latex",
    }
    assert needed <= ids
    assert len(ids) == len(TEXTS), "ids must be unique"
    by_id = {e["id"]: e["text"] for e in TEXTS}
    assert len(by_id["chars_10000"]) == 10_000
    assert len(by_id["tokens_1000"].split()) == 1_000
    assert by_id["one_token_5000"] == "a" * 5000
    assert "\x00" in by_id["control_nul"] and "\u200d" in by_id["emoji_zwj"]
    assert {c["id"] for c in CONFIGS} >= {"heads_gt_d_model", "d_k_1", "seed_huge", "seed_negative"}
    assert all(e["notes"] for e in TEXTS + CONFIGS + CORPUS["query_strings"])


def test_expectations_match_hand_counts() -> None:
    """The corpus' 'expect' flags are hand-written; check them against plain counting, not the tokenizer."""
    for e in TEXTS:
        text, exp = e["text"], e["expect"]
        assert exp["refused"] == (text.strip() == ""), e["id"]
        assert exp["chars_cut"] == (len(text) > 20_000), e["id"]
        invisible = re.search(
            r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200b\u200c\ufeff\u202a-\u202e\u2066-\u2069\u00ad]", text
        )
        assert exp["removed_controls"] == bool(invisible), e["id"]
        if e["id"] in ("chars_10000", "tokens_1000", "chars_25000"):
            assert exp["truncated"] and len(text.split()) > 64


def _cli(args: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONIOENCODING="")  # the learner's own terminal settings
    return subprocess.Popen(
        [PYTHON, "-m", "attention_core", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )


def _run_all(cases: dict[str, list[str]]) -> dict[str, tuple[int, str, str]]:
    """Run the CLI cases two at a time (the machine has two cores) and collect rc, stdout, stderr."""
    results, ids = {}, list(cases)
    for i in range(0, len(ids), 2):
        procs = {cid: _cli(cases[cid]) for cid in ids[i : i + 2]}
        for cid, proc in procs.items():
            out, err = proc.communicate(timeout=120)
            results[cid] = (proc.returncode, out.decode("utf-8"), err.decode("utf-8"))
    return results


def _assert_clean_refusal(cid: str, rc: int, out: str, err: str) -> None:
    assert rc == 2, (cid, rc, err)
    assert "Traceback" not in err and out == "", (cid, err)
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("error: "), (cid, err)


def test_cli_hostile_texts() -> None:
    # argv cannot carry NUL (the OS ends the string there): the CLI gets the text without it.
    texts = {e["id"]: e["text"].replace("\x00", "") for e in TEXTS}
    results = _run_all({cid: ["trace", "--json", "--text", text] for cid, text in texts.items()})
    by_id = {e["id"]: e for e in TEXTS}
    for cid, (rc, out, err) in results.items():
        if by_id[cid]["expect"]["refused"]:
            _assert_clean_refusal(cid, rc, out, err)
            continue
        assert rc == 0 and "Traceback" not in err, (cid, rc, err)
        data = json.loads(out)
        assert data["tokens"] == list(tokenize(texts[cid]).tokens), cid
        # the tokens are substrings of what was typed, in order (nothing decoded, nothing added)
        pos = 0
        for tok in data["tokens"]:
            found = texts[cid].find(tok[0], pos)
            assert found >= 0, (cid, tok)
            pos = found + 1
        assert np.isfinite(np.array(data["output"], dtype=float)).all(), cid


def test_cli_text_mode_prints_tokens_literally() -> None:
    ids = ["script_tag", "emoji_zwj", "arabic_hebrew", "latex"]
    by_id = {e["id"]: e["text"] for e in TEXTS}
    results = _run_all({cid: ["trace", "--text", by_id[cid]] for cid in ids})
    for cid, (rc, out, err) in results.items():
        assert rc == 0 and "Traceback" not in err, (cid, err)
        first = out.splitlines()[0]
        toks = tokenize(by_id[cid]).tokens
        assert first.endswith(" | ".join(f"{i}:{t}" for i, t in enumerate(toks))), (cid, first)


def test_cli_config_extremes() -> None:
    cases = {}
    for c in CONFIGS:
        args = ["trace", "--json", "--text", "the cat sat"]
        for key, value in c["config"].items():
            args += [CLI_FLAGS[key], str(value)]
        cases[c["id"]] = args
    cases["seed_not_a_number"] = ["trace", "--text", "x", "--seed", "1e99"]
    cases["scale_nan"] = ["trace", "--text", "x", "--scale", "nan"]
    cases["unknown_mask"] = ["trace", "--text", "x", "--mask", "<script>"]
    cases["no_command"] = []
    results = _run_all(cases)
    refused = {c["id"] for c in CONFIGS if c["refused"]} | {"seed_not_a_number", "scale_nan", "unknown_mask"}
    for cid, (rc, out, err) in results.items():
        if cid == "no_command":
            assert rc == 2 and "Traceback" not in err and err.strip().startswith(("error:", "usage:")), err
        elif cid in refused:
            _assert_clean_refusal(cid, rc, out, err)
        else:
            assert rc == 0 and "Traceback" not in err, (cid, err)
            data = json.loads(out)
            cfg = next(c["config"] for c in CONFIGS if c["id"] == cid)
            w = np.array(data["weights"], dtype=float)
            heads = cfg.get("heads", AttentionConfig.heads)
            assert w.shape == (heads, 3, 3), cid
            np.testing.assert_allclose(w.sum(axis=-1), 1.0, atol=1e-12)


# --- figures: what Plotly is given for hostile tokens --------------------------------------------

# Independent reference: Plotly's pseudo-HTML acts on '<' and on '&' entities, so a safe label has
# no '<' or '>' at all and every '&' starts one of the three entities html.escape writes.
_UNSAFE = re.compile(r"[<>]|&(?!(amp|lt|gt);)")


# Tokens the tokenizer can produce from the corpus, plus whole tags a future tokenizer might keep.
HOSTILE_TOKENS = ["<", ">", "&", '"', "'", "$", "\\", "*", "_", "[", "]"] + [
    "<b>x</b>",
    '<a href="javascript:alert(1)">x</a>',
    "&lt;b&gt;",
    "&amp;",
    "a" * 40,
    "\U0001f468\u200d\U0001f469",
    "\u05e9\u05dc\u05d5\u05dd",
    "e\u0301",
    "<img src=x onerror=alert(1)>",
]


@pytest.mark.parametrize("kind", ["attention", "feature", "mask", "small_multiples"])
def test_figures_escape_every_hostile_label(kind: str) -> None:
    tokens = HOSTILE_TOKENS
    n = len(tokens)
    rng = np.random.default_rng(5)
    allowed = np.tril(np.ones((n, n), dtype=bool))
    weights = rng.random((2, n, n)) * allowed
    weights /= weights.sum(axis=-1, keepdims=True)
    if kind == "attention":
        fig = heatmaps.attention_heatmap(weights[0], tokens, kind="weights", allowed=allowed)
    elif kind == "feature":
        fig = heatmaps.feature_heatmap(rng.normal(size=(n, 4)), tokens)
    elif kind == "mask":
        fig = heatmaps.mask_heatmap(allowed, tokens)
    else:
        fig = heatmaps.heads_small_multiples(weights, tokens, allowed=allowed)
    spec = fig.to_plotly_json()
    ticks = [
        (axis, val, text)
        for axis, ax in spec["layout"].items()
        if axis.startswith(("xaxis", "yaxis")) and ax.get("ticktext") is not None
        for val, text in zip(ax["tickvals"], ax["ticktext"], strict=True)
    ]
    assert ticks
    for axis, val, text in ticks:
        # a label written top to bottom (base.upright_labels): one character a line, our own <br>s
        # between them, in the vertical forms, without spaces; a typed "<br>" is escaped like any tag
        upright = "<br>" in text
        text = text.replace("<br>", "")
        assert not _UNSAFE.search(text), (axis, text)
        if kind == "feature" and axis.startswith("xaxis"):
            continue  # feature columns are dimensions, not tokens
        label, tok = html.unescape(text), tokens[val]
        if upright:
            label = label.translate({ord(v): k for k, v in base.VERTICAL_FORMS.items()})
            tok = "".join(tok.split())
        # the token itself, or its start plus "…" (some charts shorten harder than LABEL_MAX_CHARS)
        shortened = label.endswith("…") and len(label) <= base.LABEL_MAX_CHARS and tok.startswith(label[:-1])
        assert label == tok or (len(tok) > len(label) - 1 and shortened), (axis, val, text)
    for trace_spec in spec["data"]:
        cd = trace_spec.get("customdata")
        if cd is None:
            continue
        for cell in np.asarray(cd, dtype=object).reshape(-1):
            assert not _UNSAFE.search(str(cell)), cell
        rows = np.asarray(cd, dtype=object)
        # hover keeps the whole token, position first: "#i token" once unescaped
        for i, tok in enumerate(tokens):
            assert html.unescape(str(rows[i, 0, 0])).endswith(f"{i} {tok}"), (i, rows[i, 0, 0])
