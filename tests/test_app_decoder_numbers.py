"""Every number the decoder page shows, read back from the page and checked (issue 28).

Four page runs, both models in both languages (SmolLM2 and Gemma 3, English and Japanese), plus one
run with a text too long for either model and one generated token on each run. Each message of the
``decoder`` catalog that the page fills with numbers is found on the page by its own template
(``{n} tokens (limit {limit})`` becomes a pattern that captures ``n`` and ``limit``) and every captured
value is compared with an expected value computed here:

* the models' sizes are written out below from their published configurations (:data:`SMOL`,
  :data:`GEMMA`), not read from the core's config objects;
* byte counts from the formula 2 · layers · tokens · KV heads · head_dim · 4, by hand;
* arrays from the core's forward pass (``smollm2.run_text``, ``gemma3.run_text``), reduced here
  with NumPy (norms, softmax, the RoPE rotation written out in float64), never through the page's
  helpers or ``attention_core.labs.decoder``.

:data:`MESSAGES` is the table of messages (key -> the models that show it and the expected values);
:data:`CHARTS` the table of charts and the table. tests/test_page_numbers_audit.py holds this file to
account: each numeric message and chart of the page must have a row here or a test named there.
"""

from __future__ import annotations

import json
import math
import unicodedata
from dataclasses import dataclass, field

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.models import gemma3, smollm2
from attention_ui.i18n import translate
from attention_ui.kit import escape_markdown
from tests.apptest_pages import Near, differences, message_values, no_exception, open_page, page_strings, z

PAGE = "app_pages/decoder.py"
BYTES = 4  # float32 K and V, as the page says


@dataclass(frozen=True)
class Facts:
    """A model's sizes as its model card / config.json states them (written out, not read from the core)."""

    model: str
    layers: int
    heads: int
    kv: int
    d: int
    vocab: int
    limit: int
    bases: tuple[float, ...]  # the RoPE base of each layer
    layout: str  # which coordinates RoPE pairs: "interleaved" (2i, 2i+1) or "half" (i, i + d/2)
    windows: tuple[int | None, ...] = ()  # per layer; () for no window anywhere

    @property
    def group(self) -> int:
        return self.heads // self.kv

    def window(self, layer: int) -> int | None:
        return self.windows[layer] if self.windows else None


SMOL = Facts("smollm2", 30, 9, 3, 64, 49_152, 128, (100_000.0,) * 30, "interleaved")
_GLOBAL = {5, 11, 17}  # every sixth layer of Gemma 3 is global
GEMMA = Facts(
    "gemma3", 18, 4, 1, 256, 262_144, 1024,
    tuple(1_000_000.0 if lay in _GLOBAL else 10_000.0 for lay in range(18)), "half",
    tuple(None if lay in _GLOBAL else 512 for lay in range(18)),
)  # fmt: skip
FACTS = {"smollm2": SMOL, "gemma3": GEMMA}
# (model, language, layer, head): the page's defaults in both languages, then another layer and head
# (a global one for Gemma 3), so that a layer or head number swapped for another fails
RUNS = [("smollm2", "en", 0, 0), ("smollm2", "ja", 0, 0), ("gemma3", "ja", 0, 0), ("gemma3", "en", 0, 0),
        ("smollm2", "en", 12, 7), ("gemma3", "ja", 5, 2)]  # fmt: skip
AVAILABLE = {"smollm2": smollm2.is_available(), "gemma3": gemma3.is_available()}


# --- reading the page -------------------------------------------------------------------------------


@dataclass
class View:
    """One page run, read once (texts and charts as they were after the first run)."""

    at: AppTest
    lang: str
    f: Facts
    trace: object
    layer: int
    head: int
    strings: list[str] = field(default_factory=list)
    charts: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return self.trace.n

    @property
    def kv(self) -> int:
        return self.head // self.f.group

    @property
    def lay(self):
        """The chosen layer of the core's trace."""
        return self.trace.layers[self.layer]

    def t(self, key: str, **values) -> str:
        return translate(self.lang, f"decoder.{key}", **values)

    def read(self, key: str) -> list[dict[str, str]]:
        """The values of every shown message ``decoder.<key>``, in page order."""
        return message_values(self.strings, self.lang, f"decoder.{key}")


def chart_data(at: AppTest) -> dict[str, dict]:
    return {el.proto.id.rsplit("-", 1)[-1]: json.loads(el.proto.spec) for el in at.get("plotly_chart")}


def core_trace(model: str, text: str):
    if model == "gemma3":
        return gemma3.run_text(text, max_tokens=gemma3.MAX_TOKENS, truncate=True)
    return smollm2.run_text(text, truncate=True)


@pytest.fixture(scope="module")
def views():
    """``views((model, lang, layer, head))``: that page run, opened once for the module and shared by its rows."""
    opened: dict[tuple[str, str], View] = {}

    def get(run: tuple[str, str, int, int]) -> View:
        model, lang, layer, head = run
        if not AVAILABLE[model]:
            pytest.skip(f"{model} not installed")
        if run not in opened:
            at = open_page(PAGE, lang=lang, decoder_model=model, decoder_layer=layer, decoder_head=head)
            trace = core_trace(model, translate(lang, "decoder.default_text"))
            opened[run] = View(at, lang, FACTS[model], trace, layer, head, page_strings(at), chart_data(at))
        return opened[run]

    yield get
    opened.clear()


# --- values computed here ---------------------------------------------------------------------------


def cache_bytes(f: Facts, tokens: int, kv_heads: int | None = None, layers: int | None = None) -> int:
    """2 (K and V) · layers · tokens · KV heads · head_dim · 4 bytes."""
    kv = f.kv if kv_heads is None else kv_heads
    return 2 * (f.layers if layers is None else layers) * tokens * kv * f.d * BYTES


def group_of(f: Facts, head: int = 0) -> list[int]:
    return [h for h in range(f.heads) if h // f.group == head // f.group]


def pairs(x: np.ndarray, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """The two coordinates of every RoPE pair, ``[..., d/2]`` each."""
    half = x.shape[-1] // 2
    return (x[..., 0::2], x[..., 1::2]) if layout == "interleaved" else (x[..., :half], x[..., half:])


def rotate(x: np.ndarray, position: int, base: float, layout: str) -> np.ndarray:
    """RoPE written out: pair i turned by position · base^(−2i/d), in float64."""
    x = np.asarray(x, np.float64)
    d = x.size
    angle = position * base ** (-2.0 * np.arange(d // 2) / d)
    a, b = pairs(x, layout)
    ra, rb = a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)
    out = np.empty(d)
    if layout == "interleaved":
        out[0::2], out[1::2] = ra, rb
    else:
        out[: d // 2], out[d // 2 :] = ra, rb
    return out


def rope_inputs(layer):
    """q and k as RoPE receives them: after QK-norm for Gemma, the projections for SmolLM2."""
    q = layer.Q_normed if getattr(layer, "Q_normed", None) is not None else layer.Q_pre
    k = layer.K_normed if getattr(layer, "K_normed", None) is not None else layer.K_pre
    return q, k


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def drawn_token(logits: np.ndarray, seed: int, step: int) -> int:
    """The token the page's next step appends at T = 1, top-k off: one draw from softmax(logits)
    with ``default_rng([seed, step])`` (as the page text says)."""
    p = softmax(np.asarray(logits, np.float64))
    return int(np.random.default_rng([seed, step]).choice(p.size, p=p))


def token_text(model: str, token: int) -> str | None:
    """A whole-character token as the page labels it (leading space as ␣); None for a byte piece."""
    core = gemma3 if model == "gemma3" else smollm2
    piece = (core.load_model().token_bytes[token]) or b""
    try:
        text = piece.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.replace(" ", "␣") if text and text.isprintable() else None


def hf_count(text: str) -> int:
    """SmolLM2's token count from the ``tokenizers`` library directly (no BOS)."""
    return len(smollm2.load_tokenizer().tokenizer.encode(text, add_special_tokens=False).ids)


# --- the messages: key -> (models, expected values) ---------------------------------------------------
# The expected value of a row is one dict (the message is shown once) or a list of dicts (shown that
# many times, in page order). Every value is checked, so a wrong number anywhere in a row fails it.

S, G, B = ("smollm2",), ("gemma3",), ("smollm2", "gemma3")


def _memory(v: View) -> dict:
    f, n = v.f, v.n
    gqa, mha = cache_bytes(f, n), cache_bytes(f, n, kv_heads=f.heads)
    return dict(n=str(n), layers=str(f.layers), g=str(f.kv), d=str(f.d), gqa=f"{gqa:,}", mha=f"{mha:,}",
                ratio=str(mha // gqa), h=str(f.heads))  # fmt: skip


def _rope_norms(v: View) -> dict:
    q_in, _ = rope_inputs(v.lay)
    before = np.hypot(*pairs(np.asarray(q_in[v.head], np.float64), v.f.layout))
    after = np.hypot(*pairs(np.asarray(v.lay.Q[v.head], np.float64), v.f.layout))
    return dict(change=Near(np.abs(before - after).max()))


def _offset_summary(v: View) -> dict:
    layer, n = v.lay, v.n
    q_in, k_in = rope_inputs(layer)
    q, k = np.asarray(q_in[v.head, n - 1], np.float64), np.asarray(k_in[v.kv, 0], np.float64)
    curves = np.array([tr["y"] for tr in v.charts["decoder_chart_rope"]["data"][:-1]], float)
    raw = float(np.asarray(layer.Q[v.head, n - 1], np.float64) @ np.asarray(layer.K[v.kv, 0], np.float64))
    return dict(i=str(n - 1), j="0", starts="0, 20, 100", offset=str(n - 1), score=Near(raw),
                spread=Near((curves.max(axis=0) - curves.min(axis=0)).max()), plain=Near(q @ k))  # fmt: skip


def _begun_character(v: View, token: int) -> tuple[int, int, dict] | None:
    """For a token that only begins a character after the (complete) prompt: its bytes, the
    character's length from its lead byte, and the words of what it can still become (_range_words)."""
    core = gemma3 if v.f.model == "gemma3" else smollm2
    piece = core.load_model().token_bytes[token] or b""
    if token_text(v.f.model, token) is not None or not piece or piece[0] < 0xC0:
        return None
    of = 2 if piece[0] < 0xE0 else 3 if piece[0] < 0xF0 else 4
    return (len(piece), of, _range_words(piece)) if len(piece) < of else None


def _upcoming(v: View) -> dict:
    token = drawn_token(v.trace.logits, 0, 0)
    text, begun = token_text(v.f.model, token), _begun_character(v, token)
    expected = {"seed": "0", "step": "0"}
    if text is not None:
        expected["token"] = text
    elif begun is not None:
        expected["token"] = v.t("tok_part_short", span=f"{begun[2]['first']}…{begun[2]['last']}")
    assert "token" in expected, "the drawn token is neither whole characters nor a begun character"
    return expected


def _upcoming_reading(v: View) -> list[dict]:
    begun = _begun_character(v, drawn_token(v.trace.logits, 0, 0))
    if begun is None:
        return []  # a whole token needs no reading
    known, of, words = begun
    text = v.t("tok_part", known=known, of=of, **words)
    return [dict(reading=escape_markdown(text))]  # shown as Markdown: "U+53C0" as "U\\+53C0"


def _lengths(v: View) -> dict:
    layer = v.lay
    norm = lambda x: np.linalg.norm(np.asarray(x, np.float64), axis=-1)  # noqa: E731
    q0, q1 = norm(layer.Q_pre[v.head]), norm(layer.Q[v.head])
    k0, k1 = norm(layer.K_pre[v.kv]), norm(layer.K[v.kv])
    return dict(qmin0=Near(q0.min()), qmax0=Near(q0.max()), qmin=Near(q1.min()), qmax=Near(q1.max()),
                kmin0=Near(k0.min()), kmax0=Near(k0.max()), kmin=Near(k1.min()), kmax=Near(k1.max()))  # fmt: skip


def _score_bound(v: View) -> dict:
    layer, n = v.lay, v.n
    q, k = np.asarray(layer.Q[v.head], np.float64), np.asarray(layer.K[v.kv], np.float64)
    scores = (q @ k.T) / 16.0  # Gemma 3 270M: query_pre_attn_scalar 256, √256 = 16
    allowed = np.tril(np.ones((n, n), bool))  # a local layer too: no pair of this text is 512 apart
    bound = np.linalg.norm(q, axis=-1).max() * np.linalg.norm(k, axis=-1).max() / 16.0
    # any input: after RMSNorm with gains g a head vector of 256 numbers is at most √256 · max|g| long
    w = gemma3.load_model().weights.layers[v.layer]
    qcap, kcap = 16.0 * np.abs(w.q_norm).max(), 16.0 * np.abs(w.k_norm).max()
    return dict(
        lo=Near(scores[allowed].min()), hi=Near(scores[allowed].max()), bound=Near(bound), divisor="16",
        d="256", qcap=Near(qcap), kcap=Near(kcap), cap=Near(qcap * kcap / 16.0),
    )  # fmt: skip


def _rope_bases(v: View) -> dict:
    d = v.f.d
    slowest = d // 2 - 1  # pair i turns by base^(−2i/d) per position; the last pair is the slowest

    def period(base: float) -> str:
        return f"{2 * math.pi / base ** (-2 * slowest / d):,.0f}"

    return dict(d=str(d), local="10,000", glob="1,000,000", layers="5, 11, 17", p_local=period(1e4),
                p_global=period(1e6))  # fmt: skip


def _cache_meaning(v: View) -> dict:
    n, kept = v.n, min(v.n, 512)
    return dict(n=str(n), window="512", kept=str(kept), local=f"{cache_bytes(v.f, kept, layers=15):,}",
                glob=f"{cache_bytes(v.f, n, layers=3):,}")  # fmt: skip


def _counts(v: View) -> list[dict]:
    text = translate(v.lang, "decoder.default_text")
    smol = hf_count(text)
    gemma = len(gemma3.encode(text, model=gemma3.load_tokenizer()).ids) if AVAILABLE["gemma3"] else None
    rows = [dict(n=str(smol), total=str(smol))]
    return rows + ([dict(n=str(gemma), total=str(gemma))] if gemma is not None else [])


def _explain_tokens(v: View) -> dict:
    if v.f.model == "smollm2":
        assert v.n == hf_count(translate(v.lang, "decoder.default_text"))
    return dict(n=str(v.n), limit=f"{v.f.limit:,}")


MESSAGES: dict[str, tuple[tuple[str, ...], object]] = {
    "explain_tokens": (S, _explain_tokens),
    "g_explain_tokens": (G, _explain_tokens),
    "layer_option": (S, lambda v: [dict(layer=str(lay)) for lay in range(30)]),
    "layer_option_local": (
        G,
        lambda v: [dict(layer=str(lay)) for lay in range(18) if lay not in _GLOBAL] + [dict(layer="0")],
    ),  # the options, then the keys-read chart's line
    "layer_option_global": (
        G,
        lambda v: [dict(layer=str(lay)) for lay in sorted(_GLOBAL)] + [dict(layer="5")],
    ),
    "head_option": (B, lambda v: [dict(h=str(h), g=str(h // v.f.group)) for h in range(v.f.heads)]),
    "alt_grid": (B, lambda v: dict(stat=v.t("stat_first"), layers=str(v.f.layers), heads=str(v.f.heads))),
    "g_overview_globals": (G, lambda v: dict(layers="5, 11, 17", n="18")),
    "h_weights": (B, lambda v: dict(layer=str(v.layer), head=str(v.head))),
    "g_layer_local": (G, lambda v: [dict(window="512", base="10,000")] if v.f.window(v.layer) else []),
    "g_layer_global": (G, lambda v: [] if v.f.window(v.layer) else [dict(base="1,000,000")]),
    "explain_gqa": (S, lambda v: dict(h="9", g="3", group="3")),
    "explain_mqa": (G, lambda v: dict(h="4")),
    "alt_gqa": (S, lambda v: dict(head=str(v.head), kv=str(v.kv))),
    "g_alt_gqa": (G, lambda v: dict(head=str(v.head), kv=str(v.kv))),
    "query_head_name": (B, lambda v: [dict(h=str(h)) for h in range(v.f.heads)]),
    "kv_head_name": (B, lambda v: [dict(g=str(g)) for g in range(v.f.kv)]),
    "group_summary": (
        B,
        lambda v: dict(kv=str(v.kv), heads=", ".join(map(str, group_of(v.f, v.head))), head=str(v.head)),
    ),
    "selected_mark": (B, lambda v: dict(h=str(v.head))),
    "shares_mark": (
        B,
        lambda v: [dict(h=str(h), kv=str(v.kv)) for h in group_of(v.f, v.head) if h != v.head],
    ),
    "alt_weights": (
        B,
        lambda v: (
            [dict(h=str(h), n=str(v.n)) for h in group_of(v.f, v.head)]
            + ([dict(h=str(v.head), n=str(v.n))] * 2 if v.f.model == "gemma3" else [])
        ),
    ),  # + local/global
    "gqa_memory": (S, _memory),
    "mqa_memory": (G, _memory),
    "explain_rope": (
        B,
        lambda v: dict(base=f"{v.f.bases[v.layer]:,.0f}", pairs=str(v.f.d // 2), d=str(v.f.d)),
    ),
    "q_before": (B, lambda v: dict(h=str(v.head))),
    "q_after": (B, lambda v: dict(h=str(v.head))),
    "alt_q": (B, lambda v: [dict(h=str(v.head), n=str(v.n), d=str(v.f.d))] * 2),
    "rope_norms": (S, _rope_norms),
    "g_rope_norms": (G, _rope_norms),
    "start_name": (B, lambda v: [dict(s="0"), dict(s="20"), dict(s="100")]),
    "alt_rope": (B, lambda v: dict(h=str(v.head), j="0")),
    "rope_offset_summary": (S, _offset_summary),
    "g_rope_offset_summary": (G, _offset_summary),
    "explain_next": (B, lambda v: dict(vocab=f"{v.f.vocab:,}")),
    "alt_next": (B, lambda v: dict(n="12")),
    "about_temperature": (B, lambda v: dict(temp="1")),
    "about_all_tokens": (B, lambda v: dict(vocab=f"{v.f.vocab:,}")),
    "upcoming": (B, _upcoming),
    "upcoming_reading": (B, _upcoming_reading),
    "g_explain_qk_norm": (G, lambda v: dict(d="256")),
    "g_q_lengths": (G, lambda v: dict(h=str(v.head))),
    "g_k_lengths": (G, lambda v: dict(g=str(v.kv))),
    "g_alt_lengths": (G, lambda v: [dict(what="q", n=str(v.n)), dict(what="k", n=str(v.n))]),
    "g_lengths_summary": (G, _lengths),
    "g_score_bound_holds": (G, _score_bound),
    "g_explain_rope_bases": (G, _rope_bases),
    "g_explain_local_global": (G, lambda v: dict(window="512")),
    "g_short_text": (G, lambda v: dict(n=str(v.n), window="512")),
    "g_map_local": (G, lambda v: dict(layer="0", h=str(v.head))),
    "g_map_global": (G, lambda v: dict(layer="5", h=str(v.head))),
    "g_band_holds": (G, lambda v: dict(window="512", w="0.00e+00")),
    "g_window_name": (G, lambda v: dict(window="512")),
    "g_alt_keys_read": (G, lambda v: dict(n=str(v.n))),
    "g_cache_meaning": (G, _cache_meaning),
    "cmp_explain": (B, lambda v: dict(n="8,192")),
    "cmp_at_n": (B, lambda v: dict(n="8,192")),
    "cmp_at_n_window": (B, lambda v: dict(n="8,192")),
    "cmp_count": (B, _counts),
}


def run_id(run) -> str:
    model, lang, layer, head = run
    return f"{model}-{lang}" + (f"-L{layer}H{head}" if (layer, head) != (0, 0) else "")


def _cases():
    return [
        pytest.param(run, key, id=f"{run_id(run)}-{key}")
        for run in RUNS
        for key, (models, _) in MESSAGES.items()
        if run[0] in models
    ]


@pytest.mark.parametrize(("run", "key"), _cases())
def test_message(views, run, key) -> None:
    """``decoder.<key>`` is on the page with the values computed here, as many times as expected."""
    v = views(run)
    expected = MESSAGES[key][1](v)
    shown = v.read(key)
    want = expected if isinstance(expected, list) else [expected]
    assert len(shown) == len(want), (key, shown, want)
    for got, exp in zip(shown, want, strict=True):
        assert not differences(got, exp), (key, differences(got, exp))


# --- the charts and the table: name -> (models, check) -------------------------------------------------


def lower(n: int) -> np.ndarray:
    return np.tril(np.ones((n, n), bool))


def _grid(v: View, fig: dict) -> None:
    expected = [
        [lay.weights[h, 1:, 0].astype(np.float64).mean() for h in range(v.f.heads)] for lay in v.trace.layers
    ]
    np.testing.assert_allclose(z(fig), expected, atol=1e-6)  # "weight on token 0", rows 1 … n−1
    cells = fig["data"][1]
    k = v.layer * v.f.heads + v.head  # the click target of the chosen cell names its layer, head and KV head
    assert list(cells["customdata"][k]) == [v.layer, v.head, v.kv]


def _gqa(v: View, fig: dict) -> None:
    lines, queries, kvs = fig["data"]
    xs = [x for x in lines["x"] if x is not None]
    for h, kx in enumerate(xs[1::2]):
        assert kx == kvs["x"][h // v.f.group]  # query head h is drawn to KV head h // group
    assert [c == "#d62728" for c in queries["marker"]["color"]] == [h == v.head for h in range(v.f.heads)]
    assert [c == "#d62728" for c in kvs["marker"]["color"]] == [g == v.kv for g in range(v.f.kv)]


def _weights(v: View, fig: dict, h: int, layer=None) -> None:
    w, keep = (layer or v.lay).weights[h], lower(v.n)
    shown = z(fig)
    np.testing.assert_allclose(shown[keep], w[keep], atol=1e-6)
    assert np.isnan(shown[~keep]).all()


def _weights_k(k: int):
    def check(v: View, fig: dict) -> None:
        _weights(v, fig, group_of(v.f, v.head)[k])

    return check


def _q(after: bool):
    def check(v: View, fig: dict) -> None:
        q = v.lay.Q if after else rope_inputs(v.lay)[0]
        np.testing.assert_allclose(z(fig), q[v.head], atol=5.01e-5, rtol=0)  # drawn to 4 decimals

    return check


def _rope(v: View, fig: dict) -> None:
    q_in, k_in = rope_inputs(v.lay)
    q, k, n = q_in[v.head, v.n - 1], k_in[v.kv, 0], v.n
    base = v.f.bases[v.layer]
    for curve, start in zip(fig["data"][:-1], (0, 20, 100), strict=True):
        offsets = list(range(max(64, n)))
        assert curve["x"] == offsets
        expected = [
            rotate(q, start + o, base, v.f.layout) @ rotate(k, start, base, v.f.layout) for o in offsets
        ]
        np.testing.assert_allclose(curve["y"], expected, rtol=1e-9, atol=1e-9)
    star = fig["data"][-1]
    assert star["x"] == [n - 1] and star["y"][0] == pytest.approx(float(v.lay.scores_raw[v.head, n - 1, 0]))


def _next(v: View, fig: dict) -> None:
    p = softmax(np.asarray(v.trace.logits, np.float64))
    order = np.argsort(-p, kind="stable")[:12]
    bars = fig["data"][0]
    np.testing.assert_allclose(bars["x"], p[order], rtol=1e-9)
    drawn = drawn_token(v.trace.logits, 0, 0)
    assert [c == "#d62728" for c in bars["marker"]["color"]] == [int(i) == drawn for i in order]


def _lengths_chart(kind: str):
    def check(v: View, fig: dict) -> None:
        pre, post = (
            (v.lay.Q_pre[v.head], v.lay.Q[v.head]) if kind == "q" else (v.lay.K_pre[v.kv], v.lay.K[v.kv])
        )
        for tr, x in zip(fig["data"], (pre, post), strict=True):
            np.testing.assert_allclose(tr["y"], np.linalg.norm(np.asarray(x, np.float64), axis=-1), rtol=1e-5)

    return check


def _map(layer: int):
    def check(v: View, fig: dict) -> None:
        _weights(v, fig, v.head, v.trace.layers[layer])

    return check


def _keys_read(v: View, fig: dict) -> None:
    local, glob, window = fig["data"]
    for tr, lay in ((local, 0), (glob, 5)):
        w = v.trace.layers[lay].weights[v.head]
        assert tr["y"] == [int(np.count_nonzero(w[i] > 0)) for i in range(v.n)]
    assert window["y"] == [512, 512]


CHARTS: dict[str, tuple[tuple[str, ...], object]] = {
    "grid": (B, _grid),
    "gqa": (B, _gqa),
    **{f"weights_{k}": (B, _weights_k(k)) for k in range(3)},
    "weights_3": (G, _weights_k(3)),
    "q_pre": (B, _q(after=False)),
    "q_post": (B, _q(after=True)),
    "rope": (B, _rope),
    "next": (B, _next),
    "g_q_len": (G, _lengths_chart("q")),
    "g_k_len": (G, _lengths_chart("k")),
    "g_map_local": (G, _map(0)),
    "g_map_global": (G, _map(5)),
    "g_keys_read": (G, _keys_read),
}


@pytest.mark.parametrize(
    ("run", "name"),
    [
        pytest.param(r, c, id=f"{run_id(r)}-{c}")
        for r in RUNS
        for c, (models, _) in CHARTS.items()
        if r[0] in models
    ],
)
def test_chart(views, run, name) -> None:
    """The chart ``decoder_chart_<name>`` draws the numbers computed here from the core's trace."""
    v = views(run)
    assert f"decoder_chart_{name}" in v.charts, sorted(v.charts)
    CHARTS[name][1](v, v.charts[f"decoder_chart_{name}"])


@pytest.mark.parametrize("run", RUNS[:4], ids=[run_id(r) for r in RUNS[:4]])
def test_compare_table(views, run) -> None:
    """The two decoders side by side: the sizes as published, the cache bytes by hand."""
    v = views(run)
    (df,) = [d.value for d in v.at.dataframe]
    rows = {}
    for f in (SMOL, GEMMA):
        col = df[v.t(f"model_{f.model}")].tolist()
        windowed = (
            v.t("cmp_no_window") if not f.windows else f"{2 * (15 * 512 + 3 * 8192) * f.kv * f.d * BYTES:,}"
        )
        rows[f.model] = col
        assert col == [str(f.layers), str(f.heads), str(f.kv), str(f.d), f"{f.vocab:,}",
                       f"{cache_bytes(f, 1):,}", f"{cache_bytes(f, 8192):,}", windowed]  # fmt: skip
    assert df.iloc[6, 0] == v.t("cmp_at_n", n="8,192") and df.iloc[7, 0] == v.t("cmp_at_n_window", n="8,192")


@pytest.mark.parametrize("run", RUNS, ids=[run_id(r) for r in RUNS])
def test_formulas(views, run) -> None:
    """The RoPE formula's base and head_dim (the chosen layer's base), and QK-norm's 1/d for Gemma 3."""
    v = views(run)
    formulas = [m.value.strip("$\n") for m in v.at.latex]  # st.latex sends $$ … $$
    rope = f"\\theta_i = {v.f.bases[v.layer]:.0f}^{{-2i/{v.f.d}}}"
    assert sum(rope in f for f in formulas) == 1, (rope, formulas)
    qk_norm = [f for f in formulas if "\\hat q" in f]
    assert qk_norm == ([f"\\hat q = g \\odot \\frac{{q}}{{\\sqrt{{\\tfrac{{1}}{{{v.f.d}}}\\sum_k q_k^2 + \\varepsilon}}}}"]
                       if v.f.model == "gemma3" else [])  # fmt: skip


# --- one generated token: the cache, its chart and the new attention row ----------------------------


@pytest.mark.parametrize("run", RUNS[:4], ids=[run_id(r) for r in RUNS[:4]])
def test_generated_token_numbers(views, run) -> None:
    v = views(run)
    at, f, n = v.at, v.f, v.n
    at.button(key="decoder_next").click().run()
    no_exception(at)
    try:
        token = drawn_token(v.trace.logits, 0, 0)
        assert list(at.session_state["decoder_generated"]) == [token]
        after = View(at, v.lang, f, v.trace, v.layer, v.head, page_strings(at), chart_data(at))
        now = cache_bytes(f, n + 1)  # fewer than 512 tokens: every layer keeps every token
        (shown,) = after.read("g_cache_now" if f.model == "gemma3" else "cache_now")
        assert not differences(shown, dict(tokens=str(n + 1), bytes=f"{now:,}", kib=f"{now / 1024:,.0f}",
                                           per_token=f"{cache_bytes(f, 1):,}",
                                           mha_per_token=f"{cache_bytes(f, 1, kv_heads=f.heads):,}"))  # fmt: skip
        assert after.read("alt_cache") == [dict(tokens=str(n + 1), bytes=f"{now:,}")]
        assert after.read("explain_rows") == [dict(layer=str(v.layer), head=str(v.head))]
        assert after.read("alt_rows") == [dict(steps="1")]
        growth = after.charts["decoder_chart_cache"]["data"]
        assert growth[0]["x"] == [n, n + 1]
        assert growth[0]["y"] == [cache_bytes(f, n), now]
        assert growth[1]["y"] == [
            cache_bytes(f, n, kv_heads=f.heads),
            cache_bytes(f, n + 1, kv_heads=f.heads),
        ]
        # the new token's row, from the cache, against a full pass over the prompt and the token
        core = gemma3 if f.model == "gemma3" else smollm2
        full = core.forward([*v.trace.ids, token])
        row = z(after.charts["decoder_chart_rows"])
        np.testing.assert_allclose(
            row[0], full.layers[v.layer].weights[v.head, -1], atol=5.01e-5
        )  # 4 decimals
        # the next draw: step 1, from the full pass's logits
        (upcoming,) = after.read("upcoming")
        assert (upcoming["seed"], upcoming["step"]) == ("0", "1")
        text = token_text(f.model, drawn_token(full.logits, 0, 1))
        assert text is None or upcoming["token"] == text
    finally:
        at.button(key="decoder_reset").click().run()


# --- a text too long for the page, a bad link and a character the model cannot spell ----------------

LONG = "a\x04b " + "cat " * 5000  # 20,004 characters: 4 are cut before tokenizing; \x04 has no token


@pytest.mark.skipif(not AVAILABLE["smollm2"], reason="SmolLM2 not installed")
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_long_text_and_ignored_link_numbers(lang) -> None:
    """SmolLM2 on the long text (the second language reuses the cached 128-token pass)."""
    at = open_page(
        PAGE,
        lang=lang,
        decoder_model="smollm2",
        decoder_text=LONG,
        decoder_top_k=3,
        params={"top_k": "999", "layer": "99"},
    )
    v = View(at, lang, SMOL, None, 0, 0, page_strings(at), chart_data(at))
    read = smollm2.MAX_INPUT_CHARS  # 20,000 characters are read
    assert read == 20_000
    total = hf_count(LONG[:read].replace("\x04", ""))
    assert total > 128
    assert v.read("warn_truncated") == [dict(total=f"{total:,}", kept="128", limit="128", cut="4")]
    assert v.read("info_removed") == [dict(removed="1")]
    assert v.read("info_full") == [dict(limit="128")]
    assert v.read("explain_tokens") == [dict(n="128", limit="128")]
    (ignored,) = v.read("info_url_ignored")
    assert sorted(ignored["names"].split(", ")) == ["layer", "top_k"]
    assert at.button(key="decoder_next").disabled
    assert v.read("about_top_k") == [dict(k="3")] and v.read("about_all_tokens") == []
    counts = v.read("cmp_count")
    assert counts[0] == dict(n="128", total=f"{total:,}")
    if AVAILABLE["gemma3"]:  # BOS, then the same text (the \x04 is read as its byte token)
        gemma = len(gemma3.encode(LONG[:read], model=gemma3.load_tokenizer()).ids)
        assert gemma > 1024 and counts[1] == dict(n="1,024", total=f"{gemma:,}")


# --- the two checks the Gemma page reports, broken on purpose ----------------------------------------


@pytest.mark.skipif(not AVAILABLE["gemma3"], reason="Gemma 3 not installed")
def test_broken_band_and_bound_show_as_errors(monkeypatch) -> None:
    """A weight outside the window and a score beyond the bound must turn into errors, with their
    numbers, and the success sentences must go."""
    from dataclasses import replace

    from attention_core.labs import decoder as lab_decoder

    real = lab_decoder.score_bound
    monkeypatch.setattr(lab_decoder, "weight_outside_window", lambda w, window: 0.25 if window else 0.0)
    monkeypatch.setattr(lab_decoder, "score_bound", lambda *a: replace(real(*a), holds=False))
    at = open_page(PAGE, lang="ja")
    v = View(at, "ja", GEMMA, core_trace("gemma3", translate("ja", "decoder.default_text")), 0, 0)
    errors = [e.value for e in at.error]
    v.strings = errors
    assert v.read("g_band_broken") == [dict(window="512", w="2.50e-01")]
    (broken,) = v.read("g_score_bound_broken")
    assert not differences(broken, {k: e for k, e in _score_bound(v).items() if k in broken})
    v.strings = page_strings(at)
    assert v.read("g_band_holds") == [] and v.read("g_score_bound_holds") == []


# --- messages built without a page run --------------------------------------------------------------


def test_seed_out_of_range_names_the_range(monkeypatch) -> None:
    """decoder.err_range: the seed box's bounds, 0 … 2³¹ − 1."""
    from attention_ui import kit
    from attention_ui.decoder.settings import PAGE as DC
    from attention_ui.i18n import Translator

    shown: list[str] = []
    monkeypatch.setattr(kit.st, "session_state", {"decoder_seed": 2**31})
    monkeypatch.setattr(kit.st, "error", shown.append)
    assert DC.whole(Translator("ja"), "decoder_seed", "シード", kit.SEED_RANGE) is None
    v = View(None, "ja", SMOL, None, 0, 0, shown)
    assert v.read("err_range") == [dict(name="シード", lo="0", hi=f"{2**31 - 1}")]


def _assigned(prefix: bytes) -> list[str]:
    """The assigned characters whose UTF-8 begins with ``prefix``, by trying every code point."""
    return [
        chr(c)
        for c in range(0x80, 0x110000)
        if not 0xD800 <= c <= 0xDFFF
        and chr(c).encode().startswith(prefix)
        and unicodedata.category(chr(c)) != "Cn"
    ]


def _range_words(prefix: bytes) -> dict:
    """What decoder.tok_part says of a started character, by trying every code point: the code points
    that start with ``prefix``, how many are assigned, and the first and last of those that Unicode 3.2
    had (outside CJK Extension A and the Specials; no combining mark), which fonts draw."""
    every = [
        c for c in range(0x80, 0x110000) if not 0xD800 <= c <= 0xDFFF and chr(c).encode().startswith(prefix)
    ]
    chars = _assigned(prefix)
    drawn = [ch for ch in chars if unicodedata.ucd_3_2_0.category(ch) not in ("Cn", "Co", "Mn", "Mc", "Me")
             and not 0x3400 <= ord(ch) <= 0x4DBF and not 0xFFF0 <= ord(ch) <= 0xFFFF] or chars  # fmt: skip
    return dict(
        from_code=f"{every[0]:04X}",
        to_code=f"{every[-1]:04X}",
        count=f"{len(chars):,}",
        first=drawn[0],
        last=drawn[-1],
    )


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_token_word_numbers(lang) -> None:
    """The next-token words (decoder.tok_*): how many bytes, of how many, which characters remain."""
    from attention_core.models import byte_bpe as bpe
    from attention_ui.decoder import token_words as words
    from attention_ui.i18n import Translator

    t = Translator(lang)
    v = View(None, lang, SMOL, None, 0, 0)
    neko = "猫".encode()
    hira = _range_words(b"\xe3\x81")  # after E3 81: ぁ … み, U+3040 … U+307F
    span = f"{hira['first']}…{hira['last']}"
    part = bpe.read_token(b"", b"\xe3\x81")
    completes = bpe.read_token(neko[:2], neko[2:])
    stray = bpe.read_token(b"a", b"\x81\x81")
    v.strings = [words.short_label(t, part), words.long_label(t, part), words.short_label(t, completes),
                 words.long_label(t, completes), words.long_label(t, stray), words.long_label(t, None, "<eos>")]  # fmt: skip
    assert v.read("tok_part_short") == [dict(span=span)]
    assert v.read("tok_part") == [dict(known="2", of="3", **hira)]
    assert hira == dict(from_code="3040", to_code="307F", count="63", first="ぁ", last="み")  # by hand
    assert v.read("tok_completes_short") == [dict(char="猫")]
    assert v.read("tok_completes") == [dict(char="猫")]
    assert v.read("tok_stray") == [dict(count="2")]
    assert v.read("tok_special") == [dict(name="<eos>")]
    # issue 42, point 15: E9 alone can become U+9000 … U+9FFF, whose last character (鿿, Unicode 14)
    # drew as a missing-glyph box in 「退…⊠ の一部」; the range is named by characters fonts have
    lone = bpe.read_token(b"", b"\xe9")
    v.strings = [words.short_label(t, lone), words.long_label(t, lone)]
    kanji = _range_words(b"\xe9")
    assert (kanji["first"], kanji["last"], kanji["from_code"], kanji["to_code"]) == (
        "退",
        "龥",
        "9000",
        "9FFF",
    )
    assert v.read("tok_part_short") == [dict(span="退…龥")]
    assert v.read("tok_part") == [dict(known="1", of="3", **kanji)]
