"""The offline lesson: one ``.html`` file with the learner's sentence, settings, every step's chart,
formula and explanation, and the arithmetic of one cell, that opens with no server and no network.

What makes it offline: plotly.js is written into the file. Plotly's own cartesian bundle
(``assets/plotly-cartesian-<version>.min.js``, the npm package plotly.js-cartesian-dist-min: the
bar, box, contour, heatmap, histogram, image, pie, scatter and violin traces, MIT licence beside
it) when every chart of the lesson is one of those and its version is the one the installed
``plotly`` package ships; otherwise that package's full build (``plotly/package_data/plotly.min.js``).
The full build is 4.8 MB and Chromium here spent about 2 s evaluating it before the first chart;
the cartesian one is 1.5 MB and about 0.7 s (bench/takehome.py times the whole open). The rest: formulas are MathML (:mod:`attention_ui.takehome.markup`), drawn by the browser itself; fonts
are the reader's system fonts. A Content-Security-Policy in the file forbids every request
(``default-src 'none'``), so a stray reference could not load even if one slipped in.

User text is data: the sentence and the tokens are HTML-escaped where they are shown, the charts'
labels are escaped by the figure builders (:mod:`attention_ui.figures.base`), and the figures'
JSON sits in a ``<script type="application/json">`` with ``<``, ``>`` and ``&`` written as
``\\u003c``…, so no ``</script>`` in a sentence can end it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import plotly
import plotly.io as pio

from attention_core.explain import explain_cell
from attention_ui import kit
from attention_ui.figures import heatmaps
from attention_ui.figures.base import PLAIN_TEMPLATE, TICK_PAD_PX, TITLE_BAND_PX, TITLE_FONT_PX
from attention_ui.playground.explain_view import cell_lines
from attention_ui.playground.steps_view import (
    NUMBERED,
    step_explain,
    step_latex,
    step_title,
    x_explanation,
)
from attention_ui.takehome.markup import inline_html, markdown_html, mathml, plain

MAX_BYTES = 6 * 2**20  # the limit for one lesson file


@dataclass(frozen=True)
class Figure:
    figure: object  # a plotly go.Figure
    alt: str  # what the chart shows, for a screen reader (catalog text)
    label: str = ""  # a caption above it (e.g. "Q")


@dataclass(frozen=True)
class Section:
    """One part of a lesson: a heading, its explanation (Markdown), formulas (LaTeX), charts, and
    extra HTML built here (the cell's arithmetic)."""

    anchor: str
    title: str
    text: str = ""
    formulas: tuple[str, ...] = ()
    figures: tuple[Figure, ...] = ()
    note: str = ""  # Markdown under the charts
    html: str = ""  # already-safe HTML (built by this module)
    figures_in_row: bool = False


ASSETS = Path(__file__).parent / "assets"
# Plotly's cartesian bundle: its version, its file's SHA-256 (as taken from the npm package
# plotly.js-cartesian-dist-min 4.1.1, integrity sha512-o8GrFeusncwBIxbBynRJpY4pkgVB6caM+JLpwrLYbbsO7dZ8
# FJ+SVN2Fr+L7kiG/Z6w4P5O0Jus/Qr5EefHVeg==) and the trace types it holds (its README).
CARTESIAN_VERSION = "4.1.1"
CARTESIAN_SHA256 = "79542150855a52c567260e3137095dbe2b744e6d702a5cabe67da246942fba7a"
CARTESIAN_TRACES = frozenset(
    {"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour", "image", "pie",
     "scatter", "scatterternary", "violin"}
)  # fmt: skip


@cache
def full_plotly_js() -> str:
    """plotly.js as the installed plotly package ships it (every trace type; no CDN)."""
    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    return path.read_text(encoding="utf-8")


def js_version(js: str) -> str:
    """The version a plotly.js build names in its first lines ("plotly.js (cartesian - minified) v4.1.1")."""
    found = re.search(r"plotly\.js\b[^\n]*? v(\d+\.\d+\.\d+)", js[:300])
    return found.group(1) if found else ""


@cache
def cartesian_plotly_js() -> str:
    return (ASSETS / f"plotly-cartesian-{CARTESIAN_VERSION}.min.js").read_text(encoding="utf-8")


def plotly_js(trace_types: frozenset[str] | set[str] = frozenset({"scatter"})) -> str:
    """The plotly.js build the lesson carries: the cartesian bundle when it draws every one of
    ``trace_types`` and is the version the installed plotly package was made for, else the full one."""
    full = full_plotly_js()
    if set(trace_types) <= CARTESIAN_TRACES and js_version(full) == CARTESIAN_VERSION:
        return cartesian_plotly_js()
    return full


def trace_types(figures: list[dict]) -> set[str]:
    """Every trace type the figures' JSON uses (a trace that names none is a scatter)."""
    return {trace.get("type", "scatter") for spec in figures for trace in spec.get("data", [])}


def script_json(value) -> str:
    """JSON that is safe inside a ``<script>`` element whatever strings it holds."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# Trace types that draw their own colour bar (unless showscale is false or they share a coloraxis).
_BAR_TRACES = frozenset({"heatmap", "contour", "histogram2d", "histogram2dcontour"})
_AXIS_KEY = re.compile(r"[xy]axis\d*|coloraxis\d*")


def labels_unchecked(spec: dict) -> dict:
    """``spec`` (a figure's JSON) with ``ticklabeloverflow: "allow"`` on every axis and colour bar that
    names none, in place.

    Plotly's default for a linear axis, "hide past div", measures every tick label's box again after
    placing each label (a forced layout per label and label: quadratic in the labels); in a CPU profile
    of the 24-token, 4-head lesson opening in Chromium it was the largest single cost (~1 s of 3.5 s).
    The builders size the margins for their labels, so none reaches past the chart's box to be hidden.
    """
    layout = spec.setdefault("layout", {})
    if any(trace.get("type", "scatter") != "pie" for trace in spec.get("data", [])):
        for key in ("xaxis", "yaxis"):  # a chart drawn on Plotly's default axes
            layout.setdefault(key, {})
    for key, value in layout.items():
        if not (isinstance(value, dict) and _AXIS_KEY.fullmatch(key)):
            continue
        if key.startswith("coloraxis"):
            value.setdefault("colorbar", {}).setdefault("ticklabeloverflow", "allow")
        else:
            value.setdefault("ticklabeloverflow", "allow")
    for trace in spec.get("data", []):
        if (
            trace.get("type") in _BAR_TRACES
            and trace.get("showscale") is not False
            and not trace.get("coloraxis")
        ):
            trace.setdefault("colorbar", {}).setdefault("ticklabeloverflow", "allow")
    return spec


def _automargin(layout: dict, key: str) -> bool:
    """Whether Plotly grows the margin for axis ``key`` (its own setting, else its template's)."""
    own = layout[key].get("automargin")
    if own is not None:
        return bool(own)
    template = (layout.get("template") or {}).get("layout") or {}
    return bool((template.get(key[0] + "axis") or {}).get("automargin"))


@cache
def _plain_json() -> str:
    return pio.to_json(PLAIN_TEMPLATE, validate=False)


def _plain_template() -> dict:
    """PLAIN_TEMPLATE as a figure's JSON holds it (a fresh copy)."""
    return json.loads(_plain_json())


def titles_as_annotations(spec: dict) -> dict:
    """``spec`` (a figure's JSON) with each axis title drawn as an annotation in the band the margins
    keep for it, in place; no label is lost.

    Plotly places an axis title by measuring every tick label's box (for its standoff), then again to
    keep the title off them: in a CPU profile of the 24-token, 4-head lesson opening in Chromium, a
    quarter of the drawing. The figure builders size fixed margins as tick labels + TICK_PAD_PX +
    TITLE_BAND_PX (:func:`attention_ui.figures.base.axis_margins`), with the colour-bar band
    (``heatmaps.COLORBAR_BELOW_PX``) outermost when a horizontal bar lies below the plot, so the title
    goes in the middle of that band, beside its own plot (``<axis> domain``: a panel of a grid too).
    Only figures drawn with :data:`PLAIN_TEMPLATE` follow that convention, and only a margin with room
    for the band and the labels' pad has one. Left alone: other figures (the √d_k lab's line charts,
    10-px margins), an axis whose margin Plotly grows itself (automargin: it measures the labels
    anyway), a title on the top or right side.
    """
    layout = spec.setdefault("layout", {})
    margin = layout.get("margin") or {}
    axes = [k for k, v in layout.items() if isinstance(v, dict) and re.fullmatch(r"[xy]axis\d*", k)]
    room = TITLE_BAND_PX + TICK_PAD_PX
    if layout.get("template") != _plain_template() or min(margin.get("l", 0), margin.get("b", 0)) < room:
        return spec
    below = any(
        (trace.get("colorbar") or {}).get("orientation") == "h" and trace.get("showscale") is not False
        for trace in spec.get("data", [])
    )
    moved = 0
    for key in axes:
        axis = layout[key]
        title = axis.get("title") or {}
        text = title.get("text")
        letter, number = key[0], key[5:]
        if not text or _automargin(layout, key) or axis.get("side") not in (None, "bottom", "left"):
            continue
        other = "y" if letter == "x" else "x"
        here, there = f"{letter}{number}", axis.get("anchor") or f"{other}{number}"
        if there == "free" or f"{other}axis{there[1:]}" not in layout:
            continue
        font = {"size": TITLE_FONT_PX, **(title.get("font") or {})}
        note = dict(text=text, showarrow=False, font=font, xanchor="center", yanchor="middle")
        if letter == "x":
            band = margin["b"] - (heatmaps.COLORBAR_BELOW_PX if below else 0) - TITLE_BAND_PX / 2
            note.update(xref=f"{here} domain", x=0.5, yref=f"{there} domain", y=0, yshift=-band)
        else:
            band = margin["l"] - TITLE_BAND_PX / 2
            note.update(
                xref=f"{there} domain", x=0, xshift=-band, yref=f"{here} domain", y=0.5, textangle=-90
            )
        layout.setdefault("annotations", []).append(note)
        axis.pop("title")
        moved += 1
    if moved and not any((layout[k].get("title") or {}) for k in axes):
        # no title left to stand off: the template's standoff alone makes Plotly measure the labels
        template = (layout.get("template") or {}).get("layout") or {}
        for key in ("xaxis", "yaxis"):
            ((template.get(key) or {}).get("title") or {}).pop("standoff", None)
    return spec


def _figure_json(fig) -> dict:
    spec = json.loads(pio.to_json(fig, validate=False))
    layout = spec.setdefault("layout", {})
    layout.pop("width", None)
    layout["autosize"] = True
    spec = titles_as_annotations(labels_unchecked({"data": spec.get("data", []), "layout": layout}))
    return margins_for_titles(spec)


def margins_for_titles(spec: dict) -> dict:
    """``spec`` with automargin on every axis that still has a title, in place: a figure not drawn
    with :data:`PLAIN_TEMPLATE` (the √d_k lab's line charts) gets its room for labels and titles from
    Streamlit's theme in the app, which the lesson does not carry; without it, 10-px margins clipped
    its tick labels and laid its titles over them."""
    layout = spec.get("layout", {})
    for key, axis in layout.items():
        if (
            isinstance(axis, dict)
            and re.fullmatch(r"[xy]axis\d*", key)
            and (axis.get("title") or {}).get("text")
        ):
            axis.setdefault("automargin", True)
    return spec


def step_sections(t, trace, head: int = 0, cell: tuple[int, int] | None = None) -> list[Section]:
    """The playground's eleven steps for ``head``, as on the page, and the chosen cell's arithmetic
    after the softmax (query row, key column; default: the last token's row, its own key)."""
    hover = kit.hover_text(t, "playground")
    axes = dict(query_title=t("playground.axis_query"), key_title=t("playground.axis_key"), hover=hover)
    feat = dict(token_title=t("playground.axis_token"), dim_title=t("playground.axis_dim"), hover=hover)
    tokens, n, k = trace.tokens, trace.n, head
    d_model = trace.X.shape[1]
    d_v = trace.V.shape[2]
    head_name = t("playground.head_name", h=k)

    def alt_feature(name, d):
        return t("playground.alt_feature", name=name, n=n, d=d)

    def scores(values, name, what, **kwargs):
        fig = heatmaps.attention_heatmap(values, tokens, **axes, **kwargs)
        return (Figure(fig, t("playground.alt_scores", what=what, n=n)),)

    bound = float(max(abs(trace.scores_raw[k]).max(), abs(trace.scores_scaled[k]).max()) or 1.0)
    masked_all = bool(trace.mask.all())
    figures: dict[str, tuple[Figure, ...]] = {
        "x": (Figure(heatmaps.feature_heatmap(trace.X, tokens, **feat), alt_feature("X", d_model)),),
        "qkv": tuple(
            Figure(
                heatmaps.feature_heatmap(m, tokens, **feat),
                alt_feature(f"{name} ({head_name})", m.shape[1]),
                name,
            )
            for name, m in (("Q", trace.Q[k]), ("K", trace.K[k]), ("V", trace.V[k]))
        ),
        "raw": scores(trace.scores_raw[k], "raw", "QKᵀ", bound=bound),
        "scaled": scores(trace.scores_scaled[k], "scaled", t("playground.step_scaled"), bound=bound),
        "mask": ()
        if masked_all
        else (Figure(heatmaps.mask_heatmap(trace.mask, tokens, **axes), t("playground.alt_mask", n=n)),),
        "masked": ()
        if masked_all
        else scores(trace.scores_masked[k], "masked", t("playground.step_masked"), allowed=trace.mask),
        "softmax": (
            Figure(
                heatmaps.attention_heatmap(
                    trace.weights[k], tokens, kind="weights", allowed=trace.mask, **axes
                ),
                t("playground.alt_weights", head=k, n=n),
            ),
        ),
        "head_out": (
            Figure(
                heatmaps.feature_heatmap(trace.head_outputs[k], tokens, **feat), alt_feature(head_name, d_v)
            ),
        ),
        "all_heads": (
            Figure(
                heatmaps.heads_small_multiples(
                    trace.weights,
                    tokens,
                    allowed=trace.mask,
                    hover=hover,
                    head_title=t("playground.head_name", h="{h}"),
                ),
                t("playground.alt_all_heads", heads=trace.heads, n=n),
            ),
        ),
        "concat": (
            Figure(
                heatmaps.feature_heatmap(
                    trace.concat,
                    tokens,
                    dim_names=[f"h{i}·{j}" for i in range(trace.heads) for j in range(d_v)],
                    group_size=d_v,
                    **feat,
                ),
                alt_feature(t("playground.name_concat"), trace.heads * d_v),
            ),
        ),
        "output": (
            Figure(
                heatmaps.feature_heatmap(trace.output, tokens, **feat),
                alt_feature(t("playground.name_output"), d_model),
            ),
        ),
    }
    notes = {}
    if masked_all:
        notes["mask"] = t("playground.mask_nothing_masked")
        notes["masked"] = t("playground.masked_nothing_masked", step=NUMBERED[3][0])
    sections = []
    for number, name in NUMBERED:
        text = x_explanation(t, tokens, trace.n_pad) if name == "x" else step_explain(t, name)
        extra = cell_html(t, trace, k, cell) if name == "softmax" else ""
        sections.append(
            Section(
                anchor=f"step-{name}",
                title=step_title(t, name, number),
                text=text,
                formulas=(step_latex(t, trace, name, k),),
                figures=figures[name],
                note=notes.get(name, ""),
                html=extra,
                figures_in_row=name == "qkv",
            )
        )
    return sections


def default_cell(trace) -> tuple[int, int]:
    """The cell a lesson explains unless one was chosen: the last real token's row, its own key."""
    i = max(0, trace.n - trace.n_pad - 1)
    return i, i


def cell_html(t, trace, head: int, cell: tuple[int, int] | None) -> str:
    """The cell explainer's arithmetic for (query i, key j) of ``head``, as HTML."""
    i, j = cell if cell is not None else default_cell(trace)
    a = explain_cell(trace, head, i, j)
    rows = "".join(
        f"<tr><th scope='row'>d{d}</th><td>{q:.4g}</td><td>{kk:.4g}</td><td>{p:.4g}</td></tr>"
        for d, (q, kk, p) in enumerate(zip(a.q, a.k, a.products, strict=True))
    )
    head_row = "".join(
        f"<th scope='col'>{plain(c)}</th>"
        for c in (
            "",
            t("playground.cell_col_q", i=i),
            t("playground.cell_col_k", j=j),
            t("playground.cell_col_product"),
        )
    )
    steps = "".join(f"<li>{inline_html(label)}: {mathml(latex)}</li>" for label, latex in cell_lines(t, a))
    tokens = trace.tokens
    return (
        f"<section class='cell' aria-labelledby='cell-title'><h3 id='cell-title'>{plain(t('playground.cell_title'))}"
        f"</h3><p class='pick'>{plain(t('playground.cell_query'))}: <b>{i} · {plain(tokens[i])}</b> · "
        f"{plain(t('playground.cell_key'))}: <b>{j} · {plain(tokens[j])}</b></p>"
        f"{markdown_html(t('playground.cell_products', i=i, j=j, d_k=len(a.q)))}"
        f"<div class='scroll'><table><thead><tr>{head_row}</tr></thead><tbody>{rows}</tbody></table></div>"
        f"<ul class='steps'>{steps}</ul>"
        f"<p>{plain(t('playground.cell_check', value=f'{float(trace.weights[head, i, j]):.6g}'))}</p></section>"
    )


def settings_rows(t, trace) -> list[tuple[str, str]]:
    """The settings the lesson was made with, as (label, value) text pairs."""
    c = trace.config
    if c is None:  # the reference example
        return [("d_model", str(trace.X.shape[1])), (t("playground.heads"), str(trace.heads))]
    scale = t(f"playground.scale_{c.scale}") if c.scale in ("sqrt", "none") else f"÷ {trace.divisor:g}"
    return [
        ("d_model", str(c.d_model)),
        (t("playground.heads"), str(c.heads)),
        ("d_k, d_v", f"{trace.Q.shape[2]}, {trace.V.shape[2]}"),
        (t("playground.mask"), t(f"playground.mask_{c.mask.replace('+', '_')}")),
        (t("playground.pad"), str(c.pad)),
        (t("playground.scale"), scale),
        (t("playground.seed"), str(c.seed)),
        (t("playground.positional"), t("takehome.on") if c.positional else t("takehome.off")),
    ]


def _section_html(section: Section, figure_ids: list[dict], start: int) -> str:
    parts = [f"<section id='{section.anchor}'><h2>{plain(section.title)}</h2>"]
    if section.text:
        parts.append(markdown_html(section.text))
    for latex in section.formulas:
        parts.append(f"<div class='formula'>{mathml(latex, display=True)}</div>")
    if section.figures:
        parts.append("<div class='row'>" if section.figures_in_row else "<div>")
        for figure in section.figures:
            number = start + len(figure_ids)
            figure_ids.append(_figure_json(figure.figure))
            label = f"<p class='label'><b>{plain(figure.label)}</b></p>" if figure.label else ""
            parts.append(
                f"<figure>{label}<div class='chart' id='chart-{number}' data-figure='{number}' role='img' "
                f"aria-label='{plain(figure.alt)}'></div></figure>"
            )
        parts.append("</div>")
    if section.note:
        parts.append(f"<div class='note'>{markdown_html(section.note)}</div>")
    parts.append(section.html)
    parts.append("</section>")
    return "".join(parts)


PAGE_CSS = (ASSETS / "lesson.css").read_text(encoding="utf-8")

# Constant script: draw every chart from the JSON above it, with plotly.js from this file.
_DRAW = (ASSETS / "lesson_draw.js").read_text(encoding="utf-8")


def build_lesson(t, trace, sections: list[Section], *, title: str, text: str) -> str:
    """The lesson file: ``sections`` (step_sections, a lab's own) after a header with the sentence
    ``text``, its tokens and the settings; in the translator's language."""
    figures: list[dict] = []
    body = "".join(_section_html(s, figures, 0) for s in sections)
    real = trace.n - trace.n_pad
    token_items = "".join(
        f"<li{' class=pad' if i >= real else ''}>{i} · {plain(tok)}</li>"
        for i, tok in enumerate(trace.tokens)
    )
    settings = "".join(
        f"<tr><th scope='row'>{plain(k)}</th><td>{plain(v)}</td></tr>" for k, v in settings_rows(t, trace)
    )
    toc = "".join(f"<li><a href='#{s.anchor}'>{plain(s.title)}</a></li>" for s in sections)
    head = (
        "<!doctype html>\n"
        f"<html lang='{plain(t.lang)}'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; script-src 'unsafe-inline'; "
        "style-src 'unsafe-inline'; img-src data: blob:; font-src data:\">"
        f"<title>{plain(title)}</title><style>{PAGE_CSS}</style></head><body><main>"
    )
    intro = (
        f"<h1>{plain(title)}</h1>"
        f"<p class='about'>{plain(t('takehome.lesson_about'))}</p>"
        f"<h2 id='sentence'>{plain(t('takehome.lesson_sentence'))}</h2><p class='sentence'>{plain(text)}</p>"
        f"{markdown_html(t('playground.tokens', n=trace.n, pads=trace.n_pad))}<ul class='tokens'>{token_items}</ul>"
        f"<h3>{plain(t('takehome.lesson_settings'))}</h3><div class='scroll'><table class='settings'>{settings}</table></div>"
        f"<nav aria-label='{plain(t('takehome.lesson_contents'))}'><h3>{plain(t('takehome.lesson_contents'))}</h3><ul>{toc}</ul></nav>"
    )
    tail = (
        f"<footer><p class='about'>{plain(t('takehome.lesson_footer'))}</p></footer></main>"
        f"<script type='application/json' id='al-figures'>{script_json(figures)}</script>"
        f"<script>{plotly_js(trace_types(figures))}</script><script>{_DRAW}</script></body></html>\n"
    )
    return head + intro + body + tail
