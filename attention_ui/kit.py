"""The page kit: what every page repeats, written once.

A page of Attention Lab is: widgets -> a frozen settings value -> one cached core call that
returns every intermediate -> figures and text. The kit is the plumbing around that, so a page
file holds only its own widgets, its core call and its sections. New pages (a decoder view, a
positions lab, an inference/KV-cache lab, a practice page) bind it the same way.

Bind a page once, beside its table of settings (``attention_ui/<page>/settings.py``, see
:mod:`attention_ui.settings_table`); the page file and the page's view modules import that one
``PAGE`` and use it in ``main()``::

    PAGE = kit.Page.of(TABLE)               # in masks/settings.py: defaults, translated choices and
                                            #   shared settings from the table; namespace "masks", its prefix
    cached_lab = kit.cached(lab_masks.mask_lab)     # the core call behind the pages' shared cache

    def main() -> None:
        t = PAGE.start()                    # defaults into the session once; the translator
        PAGE.title(t)                       # masks.title and masks.intro
        with st.sidebar:
            PAGE.widget(t, "number_input", "pad", 0, 4, step=1, helped=True)
            #   st.number_input labelled masks.pad, tooltip masks.pad_help, key masks_pad, kept across pages
            PAGE.seed_input(t)              # masks.seed, key masks_seed, 0 … SEED_RANGE[1]
            PAGE.tables_toggle(t)           # masks.show_tables, key masks_tables
        with PAGE.guard(t, "mask lab") as run:   # an error shows masks.err_unexpected, never a traceback
            lab = cached_lab(settings)      # one cached core call, a frozen result
            PAGE.chart(fig, "mask", alt)    # st.plotly_chart keyed masks_chart_mask, alt text, app toolbar
            PAGE.table(lambda: frame)       # built and shown only while masks_tables is on
        if run.failed:
            return

:class:`Page` also has ``widget(..., text=...)`` (a widget whose catalog name differs from its key),
``tables_on``, ``hover(t)`` (the namespace's hover words), ``whole(t, key, label, bounds)`` (a
range check with ``<ns>.err_range``) and ``warn_truncated(t, tokenization)``; ``table`` takes a
DataFrame, a mapping of columns (``index=``, ``index_name=``, ``localized=`` columns) or a callable.

Conventions a page follows (and the kit relies on):

* widget keys start with the page's prefix (``masks_``); the tables switch is ``<prefix>_tables``,
  the seed ``<prefix>_seed``; charts are keyed ``<prefix>_chart_<name>``, tables ``<prefix>_table_<name>``;
* messages live in the page's catalog namespace: ``<ns>.title``, ``<ns>.intro``, ``<ns>.seed``,
  ``<ns>.show_tables``, ``<ns>.err_unexpected``, ``<ns>.err_range`` (``name``, ``lo``, ``hi``),
  ``<ns>.warn_truncated`` (``total``, ``kept``, ``dropped`` and any extra values), and the hover
  words ``<ns>.hover_query`` … (whichever of :class:`HoverText`'s fields the namespace defines);
* widget values survive hiding a widget and visiting another page (``persist_state=KEEP``).

Module-level helpers (usable without a :class:`Page`): :func:`init_state`, :func:`chart`,
:func:`table`, :func:`frame`, :func:`table_height`, :func:`square_width` (one sizing rule each),
:func:`hover_text`, :func:`warn_truncated`, :func:`show_tokens`, :func:`escape_markdown`, :func:`latex`,
:func:`refresh_translated_choices`, :func:`cached` (a core function behind the pages' shared cache),
:func:`progress` (a long computation with a progress bar),
:func:`opening` (a section's header, explanation and formula), :class:`Guard`, and the shared
:data:`KEEP` and :data:`SEED_RANGE`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields

import streamlit as st

from attention_core import MASK_KINDS, AttentionConfigError
from attention_core.labs.masks import LAB_MASK_KINDS
from attention_ui import settings_table
from attention_ui.figures.base import HoverText, readable_text, toolbar_room
from attention_ui.i18n import DEFAULT_LANGUAGE, Translator, catalog
from attention_ui.language import translator
from attention_ui.settings_table import Table

log = logging.getLogger(__name__)

KEEP = "session"  # widget values survive hiding the widget and switching pages
# The learner's context, shared by every page that has these settings (see share_context): the
# sentence and d_model set on one page are where the next page starts.
LEARNER_TEXT, LEARNER_D_MODEL = "learner_text", "learner_d_model"
LEARNER_SEED, LEARNER_HEADS, LEARNER_MASK = "learner_seed", "learner_heads", "learner_mask"
SEED_RANGE = (0, 2**31 - 1)  # every page's seed input

# Plotly's toolbar keeps what a learner uses: the PNG download and "reset axes" (drag-to-zoom and
# double-click-to-reset still work without buttons). Each button is a Tab stop: with Plotly's eight per
# chart, 88 of the playground's 142 Tab stops were toolbar buttons.
CHART_TOOLBAR_REMOVED = (
    "zoom2d",
    "pan2d",
    "select2d",
    "lasso2d",
    "zoomIn2d",
    "zoomOut2d",
    "autoScale2d",
    "hoverClosestCartesian",
    "hoverCompareCartesian",
    "toggleSpikelines",
)
CHART_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": list(CHART_TOOLBAR_REMOVED)}
# Plotly's own words (toolbar titles, download notices, the zoom hint), English source -> catalog key.
# Streamlit's Plotly bundle registers only English locales; Plotly takes others in config["locales"].
PLOTLY_WORDS = {
    "Download plot as a PNG": "charts.plotly_download_png",
    "Download plot": "charts.plotly_download",
    "Reset axes": "charts.plotly_reset_axes",
    "Autoscale": "charts.plotly_autoscale",
    "Preparing image - this may take a few seconds": "charts.plotly_preparing",
    "Image download succeeded": "charts.plotly_succeeded",
    "Sorry, there was a problem downloading your image!": "charts.plotly_failed",
    "Double-click to zoom back out": "charts.plotly_double_click",
}
# Tables: a header row plus one row per line, up to about eleven rows before the table scrolls.
TABLE_HEADER_PX, TABLE_ROW_PX, TABLE_MAX_PX = 38, 35, 420
# An n×n map up to this many tokens is drawn at a width that keeps its cells roughly square
# (SQUARE_BASE_PX for axis labels and the colour bar, SQUARE_CELL_PX per column); beyond it, full width.
SQUARE_MAX_N, SQUARE_BASE_PX, SQUARE_CELL_PX = 16, 200, 55
CHIP_MAX_TOKENS = 48  # beyond this, tokens are listed as one plain-text line (show_tokens)


# --- state ------------------------------------------------------------------------------------------


def init_state(defaults: Mapping[str, object]) -> None:
    """Put each default into the session once; later runs keep what the learner chose."""
    for key, value in defaults.items():
        st.session_state.setdefault(key, value)


def refresh_translated_choices(session_state, keys: Sequence[str], lang: str, marker: str) -> bool:
    """Re-send the values of choice widgets after a language switch; True if it did.

    Streamlit 1.67 sends a selectbox/radio value to the browser as its *formatted* label. When
    the language changes, the labels change but the browser keeps the old label, which no longer
    matches any option (a radio then shows nothing selected, a selectbox the old language).
    Assigning each value to itself before the widget is drawn makes Streamlit send it again,
    formatted in the new language. ``marker`` is the session key remembering the last language.
    """
    if session_state.get(marker) == lang:
        return False
    for key in keys:
        if key in session_state:
            session_state[key] = session_state[key]
    session_state[marker] = lang
    return True


def share_context(
    session_state, shared: Mapping[str, str], accepts: Mapping[str, Callable[[object], bool]] | None = None
) -> None:
    """Keep a page's settings and the learner's shared context in step; call before any widget.

    ``shared`` maps a page key (``masks_text``) to a shared key (:data:`LEARNER_TEXT`). A value the learner
    changed on this page since the last call is published to the shared key; a page whose value the
    learner has not changed here since it last synchronised takes the shared value (the sentence set in
    the playground), if ``accepts[page_key]`` (default: any value) says the page can use it. So a lab
    starts from the playground's sentence, keeps its own once the learner edits it there, and the
    edit carries back. ``<page key>_synced`` remembers the value last exchanged.
    """
    accepts = accepts or {}
    for key, common in shared.items():
        accept = accepts.get(key, SHARED_ACCEPTS.get(common, lambda _v: True))
        synced = settings_table.synced(key)
        mine = session_state.get(key)
        theirs = session_state.get(common)
        if synced in session_state and mine != session_state[synced]:
            session_state[common] = mine  # changed here: the others follow
        elif common in session_state and theirs != mine and accept(theirs):
            session_state[key] = theirs  # not changed here: start from the learner's context
        session_state[synced] = session_state.get(key)


# The shared context in a lab's URL (the playground writes the same names with its own code):
# ?text=…&d_model=…&lang=…, so a lab's link opens on the learner's sentence.
CONTEXT_URL = {
    LEARNER_TEXT: "text",
    LEARNER_D_MODEL: "d_model",
    LEARNER_SEED: "seed",
    LEARNER_HEADS: "heads",
    LEARNER_MASK: "mask",
}


def whole_in(lo: int, hi: int) -> Callable[[object], bool]:
    """An accept rule (``Page.shared_accepts``): a whole number in ``lo..hi``."""
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def divides(key: str) -> Callable[[object], bool]:
    """An accept rule: a head count that divides the session's ``key`` (a d_model shared before it)."""
    return lambda v: whole_in(1, 4096)(v) and int(st.session_state.get(key, 0)) % v == 0


def learner_context(**page_keys: str) -> dict[str, str]:
    """A page's ``shared`` mapping by name, in the order given (a head count after its d_model):
    ``learner_context(text="masks_text", seed="masks_seed")`` -> ``{"masks_text": LEARNER_TEXT, ...}``."""
    names = {url: common for common, url in CONTEXT_URL.items()}
    return {key: names[name] for name, key in page_keys.items()}


# What any page accepts of a shared value unless it says more (its own ``shared_accepts``): a seed in
# range, a mask every attention page knows (attention_core.MASK_KINDS), a positive head count.
SHARED_ACCEPTS: dict[str, Callable[[object], bool]] = {
    LEARNER_SEED: whole_in(*SEED_RANGE),
    LEARNER_HEADS: whole_in(1, 4096),
    LEARNER_MASK: lambda v: v in MASK_KINDS,
}
MAX_URL_TEXT = 2000  # characters of a sentence kept in a URL (every page's; 64 tokens fit easily)


def url_text(raw: str) -> str | None:
    """A sentence read from a URL: non-empty, at most :data:`MAX_URL_TEXT` characters, no NUL."""
    return raw if 0 < len(raw) <= MAX_URL_TEXT and "\x00" not in raw else None


def _context_value(common: str, raw: object):
    """A shared setting read from its URL text; None when malformed."""
    if not isinstance(raw, str):
        return None
    if common == LEARNER_TEXT:
        return url_text(raw)
    if common in (LEARNER_D_MODEL, LEARNER_HEADS, LEARNER_SEED):
        return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 10 else None
    if common == LEARNER_MASK:
        return raw if raw in LAB_MASK_KINDS else None
    return None


URLS_KEPT = 32  # the URLs a page remembers having written (url_ours)


def history_navigation() -> bool:
    """Whether this run was started by the browser's back or forward button. Streamlit 1.67 keeps that
    on the run's context (private; tests/test_url_sync.py checks it is still there); without it,
    False: a URL a page wrote is then never read again, and back/forward keeps the view."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        return bool(getattr(get_script_run_ctx(suppress_warning=True), "is_history_navigation", False))
    except Exception:  # noqa: BLE001 - bare mode or a changed internal API
        return False


def url_of_ours(session_state, ours: str, query: Mapping[str, object]) -> bool:
    """Whether ``query`` is a URL this page wrote earlier in the session (kept under ``ours``) and the
    browser did not go back or forward to it. Every rerun sends the browser's URL as it is then, and
    a browser that has not yet received the last runs' URLs (a busy server or a busy browser can
    hold them back for seconds) sends an older one of ours with its next click: not a new link.
    Reading it undid that click and the ones before it (issue 47: the presenter's Next went back to
    the slide the URL still named, and a class's students with it)."""
    return dict(query) in session_state.get(ours, ()) and not history_navigation()


def keep_url(session_state, ours: str, query: Mapping[str, object]) -> None:
    """Remember ``query`` as a URL this page wrote (the last :data:`URLS_KEPT`)."""
    query = dict(query)
    older = [url for url in session_state.get(ours, ()) if url != query]
    session_state[ours] = [*older[-(URLS_KEPT - 1) :], query]


def read_context_url(
    session_state,
    query: Mapping[str, str],
    shared: Mapping[str, str],
    accepts: Mapping[str, Callable[[object], bool]],
    marker: str,
    ours: str | None = None,
) -> list[str]:
    """Take the shared settings a lab's URL holds (a shared or reloaded link) into the page and the
    learner's context; call before :func:`share_context`. A URL the page wrote itself (the last one
    kept under ``marker``, the earlier ones under ``ours``: :func:`url_of_ours`) or an empty one (the
    page was reached from the menu) is not read again. Returns the names of the parameters that
    could not be used (malformed, or a value the page cannot take)."""
    if not query or dict(query) == session_state.get(marker):
        return []
    if ours is not None and url_of_ours(session_state, ours, query):
        return []
    ignored = []
    for key, common in shared.items():
        name = CONTEXT_URL.get(common)
        if name is None or name not in query:
            continue
        value = _context_value(common, query[name])
        if value is None or not accepts.get(key, SHARED_ACCEPTS.get(common, lambda _v: True))(value):
            ignored.append(name)
            continue
        adopt_context(session_state, {key: common}, {key: value})
    return ignored


def adopt_context(session_state, shared: Mapping[str, str], values: Mapping[str, object]) -> None:
    """Values a page read from its URL (a shared or reloaded link) become the learner's context too.

    ``values`` maps page keys to values already checked by the page. Each shared one is set on the page,
    in the shared key and as exchanged (``<key>_synced``), so the next page the learner opens starts
    from the link's sentence, exactly as if it had been typed here."""
    for key, value in values.items():
        common = shared.get(key)
        if common is not None:
            session_state[key] = session_state[common] = session_state[settings_table.synced(key)] = value


def context_query(session_state, shared: Mapping[str, str], lang: str) -> dict[str, str]:
    """The lab's URL for its shared settings now, plus the language."""
    query = {}
    for key, common in shared.items():
        name, value = CONTEXT_URL.get(common), session_state.get(key)
        if name is None or value is None:
            continue
        text = str(value)
        if _context_value(common, text) == value:  # only what reads back as the same value
            query[name] = text
    query["lang"] = lang
    return query


# --- the core call ----------------------------------------------------------------------------------


def cached(core_function: Callable) -> Callable:
    """``core_function`` behind the pages' cache: one result per argument set, shared by every session.

    A resource cache, not a data cache: the core's results are frozen with read-only arrays, so one
    object can serve every session uncopied. 32 entries per function bound the memory
    (docs/deployment.md), and Streamlit's spinner stays off. A cache that needs another bound (a
    single worked example, a few large results) is spelled where it is used.
    """
    # The bound is a literal: tests/test_cache_bounds.py reads it from the source.
    return st.cache_resource(max_entries=32, show_spinner=False)(core_function)


# --- text -------------------------------------------------------------------------------------------

_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:&\"'=^")


def escape_markdown(text: str) -> str:
    """Backslash-escape every ASCII punctuation mark Markdown, LaTeX (``$``) or directives
    (``:``, ``[``, ``]``) could act on, so user text shows exactly as typed."""
    return "".join(f"\\{ch}" if ch in _MD_SPECIAL else ch for ch in str(text))


def opening(
    heading: str, explanation: str, formula: str | Sequence[str], *, anchor: str | None = None
) -> None:
    """A section's opening, in the order every lab uses: its header (``anchor`` for the URL), the
    explanation (Markdown), then the formula it is about (LaTeX, or its parts: :func:`latex`)."""
    st.header(heading, anchor=anchor)
    st.markdown(explanation)
    formula_parts = (formula,) if isinstance(formula, str) else formula
    latex(*formula_parts)


def latex(*parts: str) -> None:
    """A display formula made of ``parts`` (each a LaTeX string; put a separating comma at the end of
    a part): side by side on one line where they fit, each on a line of its own where they do not.

    KaTeX draws a display formula on one line: joined with ``\\qquad``, a formula of three equations
    was 430-560 px wide, more than a 390-px phone's column even shrunk to narrow_fit.MIN_ZOOM, and
    scrolled inside its box (issue 42, point 11). Each part is its own formula in a row that wraps,
    centred, so a desktop keeps one line and a phone stacks them."""
    if len(parts) == 1:
        st.latex(parts[0])
        return
    with st.container(
        horizontal=True, horizontal_alignment="center", vertical_alignment="center", gap="medium"
    ):
        for part in parts:
            st.latex(part, width="content")


def token_list_text(tokens: Sequence[str], n_pad: int = 0) -> str:
    """``0 the · 1 cat · …`` as plain text (shown with st.text: never parsed as Markdown)."""
    first_pad = len(tokens) - n_pad
    return " · ".join(f"{i} {tok}" if i < first_pad else f"{i} {tok} (pad)" for i, tok in enumerate(tokens))


def token_chips_markdown(tokens: Sequence[str], n_pad: int = 0) -> str:
    """Numbered chips as Streamlit Markdown badges: blue for words, grey for [PAD]s."""
    first_pad = len(tokens) - n_pad
    return " ".join(
        f":{'gray' if i >= first_pad else 'blue'}-badge[{i} · {escape_markdown(tok)}]"
        for i, tok in enumerate(tokens)
    )


def show_tokens(tokens: Sequence[str], n_pad: int = 0) -> None:
    """Numbered token chips, or for long sentences one plain-text line (st.text: never Markdown).
    256 styled badges took longer to draw on every rerun than several heatmaps (bench/page_latency.py)."""
    if len(tokens) <= CHIP_MAX_TOKENS:
        st.markdown(token_chips_markdown(tokens, n_pad))
    else:
        st.text(token_list_text(tokens, n_pad))


def warn_truncated(t: Translator, key: str, tokenization, **values: object) -> None:
    """``key`` as a warning when the tokenizer kept fewer tokens than the text has.

    The message gets ``total``, ``kept`` and ``dropped`` (and ``values``); it uses the ones it names.
    """
    if tokenization is None or tokenization.total_tokens <= len(tokenization.tokens):
        return
    total, kept = tokenization.total_tokens, len(tokenization.tokens)
    st.warning(t(key, total=total, kept=kept, dropped=total - kept, **values))


def hover_text(t: Translator, namespace: str) -> HoverText:
    """The hover words of a page: ``<namespace>.hover_<field>`` for each field the catalog has."""
    messages = catalog(DEFAULT_LANGUAGE)
    words = {f.name: t(key) for f in fields(HoverText) if (key := f"{namespace}.hover_{f.name}") in messages}
    return HoverText(**words)


# --- charts and tables ------------------------------------------------------------------------------


def square_width(n: int) -> int | str:
    """The width of an n×n map: cells roughly square while n is small, else the full width."""
    return "stretch" if n > SQUARE_MAX_N else SQUARE_BASE_PX + SQUARE_CELL_PX * n


def chart_config(lang: str, config: Mapping | None = None) -> dict:
    """The Plotly config of every chart: :data:`CHART_CONFIG`, then ``config``, in ``lang``'s words."""
    merged = {**CHART_CONFIG, **(config or {})}
    if lang != DEFAULT_LANGUAGE:
        t = Translator(lang)
        merged["locale"] = lang
        merged["locales"] = {lang: {"dictionary": {src: t(key) for src, key in PLOTLY_WORDS.items()}}}
    return merged


# A map with more columns than this prints cell numbers that run together on a phone (~24 px cells
# for 12 columns at 390 px): it is drawn in a box keyed ``<key>_dense``, whose numbers app.py's CSS
# hides below 640 px (hover, or a tap, still gives each value).
DENSE_COLUMNS = 8
DENSE_SUFFIX = "_dense"


def dense_numbers(fig) -> bool:
    """Whether ``fig`` prints numbers in the cells of a map wider than :data:`DENSE_COLUMNS`."""
    return any(
        tr.type == "heatmap" and tr.texttemplate and tr.x is not None and len(tr.x) > DENSE_COLUMNS
        for tr in fig.data
    )


def chart(
    fig, key: str, alt: str, *, width: int | str = "stretch", config: dict | None = None, **kwargs
) -> None:
    """``st.plotly_chart`` with alt text and the app's chart toolbar (``kwargs``: theme, on_select, …).

    The toolbar is :data:`CHART_CONFIG` (``config`` adds to it), labelled in the page's language, and
    drawn in a strip of its own above the figure (:func:`attention_ui.figures.base.toolbar_room`), never
    over the data. A chart drawn in Streamlit's theme gets its text colours set explicitly
    (:func:`readable_text`): the theme's grey tick labels miss WCAG AA's 4.5:1.
    """
    if kwargs.get("theme", "streamlit") is not None:
        readable_text(fig)
    if (config or {}).get("displayModeBar", True) is not False:
        toolbar_room(fig)
    config = chart_config(translator().lang, config)
    if dense_numbers(fig):
        with st.container(key=key + DENSE_SUFFIX):
            st.plotly_chart(fig, key=key, alt=alt, width=width, config=config, **kwargs)
        return
    st.plotly_chart(fig, key=key, alt=alt, width=width, config=config, **kwargs)


def table_height(rows: int) -> int:
    """The one height rule for every table: all rows up to TABLE_MAX_PX, then the table scrolls."""
    return min(TABLE_MAX_PX, TABLE_HEADER_PX + TABLE_ROW_PX * rows)


def frame(data, *, index=None, index_name: str | None = None):
    """A DataFrame from a mapping of column name -> values (``index``: the row labels, ``index_name``:
    their header); a DataFrame passes through. pandas is imported on first use only."""
    if isinstance(data, Mapping):
        import pandas  # a page that shows no table needs no pandas

        data = pandas.DataFrame(data, index=index)
    return data.rename_axis(index_name) if index_name is not None else data


def table(
    data, *, key: str | None = None, index=None, index_name: str | None = None, localized=(), **kwargs
) -> None:
    """``st.dataframe`` at full width and :func:`table_height`.

    ``data`` is what :func:`frame` takes, or a callable returning it, so a table costs nothing until
    it is shown. The ``localized`` columns show whole numbers with the browser's thousands separators.
    """
    if localized:
        number = st.column_config.NumberColumn(format="localized")
        kwargs["column_config"] = {name: number for name in localized} | kwargs.get("column_config", {})
    data = frame(data() if callable(data) else data, index=index, index_name=index_name)
    height = kwargs.setdefault("height", table_height(len(data)))
    st.dataframe(data, width="stretch", key=key, **kwargs)
    if table_scrolls(len(data), height):  # rows below the fold are otherwise easy to miss
        st.caption(translator()("app.table_scrolls", rows=len(data)))


def table_scrolls(rows: int, height: object) -> bool:
    """Whether a table of ``rows`` rows at ``height`` px hides some of them until it is scrolled."""
    return isinstance(height, int) and TABLE_HEADER_PX + TABLE_ROW_PX * rows > height


def progress(
    steps: Iterator, total: int, *, running: str, step: Callable[[int, object], str], done: str, failed: str
) -> list:
    """Run a long computation shown as a status box with a progress bar; the finished steps.

    ``steps`` yields one result per step (``total`` of them); ``step(count, result)`` is the bar's
    text after each. If a step fails, the box says ``failed``, the error goes to the server log and
    the results so far are returned (never a traceback).
    """
    results: list = []
    with st.status(running, expanded=True) as status:
        bar = st.progress(0.0, text=step(0, None))
        try:
            for result in steps:
                results.append(result)
                bar.progress(len(results) / total, text=step(len(results), result))
        except Exception:
            log.exception("%s failed", running)
            status.update(label=failed, state="error")
        else:
            status.update(label=done, state="complete", expanded=False)
    return results


# --- the learner never sees a traceback -------------------------------------------------------------


@dataclass
class Guard:
    """A context manager that turns a failure inside it into a message for the learner.

    An exception of a ``known`` type shows that type's catalog key (with ``detail=str(err)``);
    any other shows ``unexpected`` and goes to the server log with its traceback. ``failed``
    says whether the block stopped early. Streamlit's own rerun/stop signals are not
    ``Exception``s and pass through untouched.
    """

    t: Translator
    unexpected: str
    what: str = "page section"
    known: Iterable[tuple[type[Exception], str]] = ()
    failed: bool = field(default=False, init=False)

    def __enter__(self) -> Guard:
        return self

    def __exit__(self, kind, err, tb) -> bool:
        if err is None or not isinstance(err, Exception):
            return False
        self.failed = True
        for known_kind, key in self.known:
            if isinstance(err, known_kind):
                st.error(self.t(key, detail=str(err)))
                return True
        log.error("%s failed", self.what, exc_info=(kind, err, tb))
        st.error(self.t(self.unexpected))
        return True


# --- a page -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    """One page's prefix (widget keys), catalog namespace and session defaults; see the module doc."""

    prefix: str
    namespace: str
    defaults: Mapping[str, object] = field(default_factory=dict)
    choice_keys: tuple[str, ...] = ()  # selectboxes/radios whose option labels are translated
    # session key -> catalog key: defaults in the learner's language (a Japanese page starts from a
    # Japanese sentence), set once like the others
    translated_defaults: Mapping[str, str] = field(default_factory=dict)
    # page key -> shared key (LEARNER_TEXT, LEARNER_D_MODEL), and which shared values the page can take
    shared: Mapping[str, str] = field(default_factory=dict)
    shared_accepts: Mapping[str, Callable[[object], bool]] = field(default_factory=dict)
    # the shared settings in the page's URL (off for the playground, whose URL holds its whole view)
    url_context: bool = True
    link: bool = (
        False  # the page keeps its state in its URL by its own code (the decoder): a copy-link button
    )
    # the page's table of settings (attention_ui/settings_table.py); :meth:`of` derives the fields
    # above from it, and :meth:`key` then refuses a name the table does not declare
    settings: Table | None = None

    @classmethod
    def of(
        cls, table: Table, namespace: str | None = None, *, url_context: bool = True, link: bool = False
    ) -> Page:
        """The page bound to its table of settings: defaults, translated defaults and choices, and the
        learner's shared context all come from the table. Its catalog namespace is the page's one name,
        the table's prefix, unless the page's keys were named otherwise before (the playground's ``pg_``
        keys and ``playground`` catalog; its pretrained view's ``pretrained`` catalog)."""
        return cls(table.prefix, namespace or table.prefix, table.defaults, table.choice_keys, table.translated_defaults,
                   table.shared, table.shared_accepts, url_context, link, table)  # fmt: skip

    def key(self, name: str, *parts: object) -> str:
        """The session key of the page's setting ``name`` (``parts``: a member of the family ``name_*``);
        a page with a table refuses a name it does not declare."""
        if self.settings is not None:
            return self.settings.key(name, *parts)
        return "_".join([self.prefix, name, *map(str, parts)])

    def value(self, name: str, *parts: object):
        """The session's value of the page's setting ``name`` (None while unset)."""
        return st.session_state.get(self.key(name, *parts))

    def start(self) -> Translator:
        """Session defaults, translated choices re-sent after a language switch; the translator."""
        init_state(self.defaults)
        t = translator()
        missing = [key for key in self.translated_defaults if key not in st.session_state]
        init_state({key: t(self.translated_defaults[key]) for key in missing})
        if self.shared:
            self._share(t)
        if self.choice_keys:
            refresh_translated_choices(st.session_state, self.choice_keys, t.lang, self.key("lang_shown"))
        return t

    def _share(self, t: Translator) -> None:
        """The learner's context in and out of this page (and its URL, unless ``url_context`` is off)."""
        if not self.url_context:
            share_context(st.session_state, self.shared, self.shared_accepts)
            return
        marker, ours, url = self.key("url_written"), self.key("url_ours"), st.query_params.to_dict()
        ignored = read_context_url(st.session_state, url, self.shared, self.shared_accepts, marker, ours)
        share_context(st.session_state, self.shared, self.shared_accepts)
        query = context_query(st.session_state, self.shared, t.lang)
        if url != query:
            st.query_params.from_dict(query)
        st.session_state[marker] = query
        keep_url(st.session_state, ours, query)
        if ignored:
            st.warning(t("app.url_ignored", names=", ".join(ignored)))

    def sentence_origin(self, t: Translator, key: str, where=st) -> bool:
        """Say under a sentence box whether it holds the learner's sentence (shared between the pages)
        or the page's own example (no sentence set yet); True for the learner's."""
        yours = st.session_state.get(key) == st.session_state.get(self.shared.get(key, ""), object())
        where.caption(t("app.sentence_yours" if yours else "app.sentence_own"))
        return yours

    def title(self, t: Translator) -> None:
        if self.presenting:  # a slide starts with its section's heading
            return
        st.title(t(f"{self.namespace}.title"))
        st.markdown(t(f"{self.namespace}.intro"))

    def open(self, controls: Callable[[Translator], None]) -> Translator:
        """:meth:`start`, :meth:`title`, then ``controls(t)`` in the sidebar (the controls' place on
        every page, as in the playground); the translator."""
        t = self.start()
        self.title(t)
        with st.sidebar:
            controls(t)
        return t

    def takeaway(self, t: Translator) -> None:
        """The page's closing section: ``<ns>.h_takeaway`` and ``<ns>.takeaway``."""
        st.header(t(f"{self.namespace}.h_takeaway"))
        st.markdown(t(f"{self.namespace}.takeaway"))

    @property
    def presenting(self) -> bool:
        """Whether the page is in presenter mode (:mod:`attention_ui.presenter`)."""
        return bool(st.session_state.get(self.key("present")))

    def slides(self, main: Callable[[], None]) -> Callable[[], None]:
        """Decorate the page's ``main`` for presenter mode, one :meth:`section` per slide; the sidebar
        gets the presenter button and, for a page whose state lives in its URL (it writes its shared
        settings there), the copy-link button. See :mod:`attention_ui.presenter`."""
        from attention_ui import presenter

        link = bool(self.shared and self.url_context) or self.link
        return presenter.slides(self.prefix, link, self.key)(main)

    @staticmethod
    def section(draw: Callable[..., None], *args, **kwargs) -> None:
        """``draw(*args, **kwargs)``: always, or on a slide only when it is the current one."""
        from attention_ui import presenter

        presenter.section(draw, *args, **kwargs)

    def widget(
        self,
        t: Translator,
        kind: str,
        name: str,
        *args,
        text: str | None = None,
        label: str | None = None,
        helped: bool = False,
        where=st,
        **kwargs,
    ):
        """``where.<kind>(...)`` (``kind`` e.g. ``"number_input"``), keyed ``<prefix>_<name>`` and kept
        when hidden or on another page; returns the widget's value.

        Its label is the message ``<ns>.<text>`` (``text`` defaults to ``name``) unless ``label`` is
        given; with ``helped`` its tooltip is ``<ns>.<text>_help``.
        """
        text = name if text is None else text
        if helped:
            kwargs["help"] = t(f"{self.namespace}.{text}_help")
        label = t(f"{self.namespace}.{text}") if label is None else label
        return getattr(where, kind)(label, *args, key=self.key(name), persist_state=KEEP, **kwargs)

    def seed_input(self, t: Translator, where=st) -> None:
        self.widget(t, "number_input", "seed", *SEED_RANGE, step=1, where=where)

    def tables_toggle(self, t: Translator, where=st) -> None:
        self.widget(t, "toggle", "tables", text="show_tables", where=where)

    @property
    def tables_on(self) -> bool:
        return bool(st.session_state.get(self.key("tables")))

    def chart(self, fig, name: str, alt: str, *, width: int | str = "stretch", **kwargs) -> None:
        """:func:`chart` keyed ``<prefix>_chart_<name>``; on a slide, restyled for a projector."""
        if self.presenting:
            from attention_ui.playground.projector import slide_figure

            fig = slide_figure(fig)
        chart(fig, self.key("chart", name), alt, width=width, **kwargs)

    def table(self, data, name: str | None = None, *, always: bool = False, **kwargs) -> None:
        """:func:`table` behind a chart, shown while the tables switch is on (``always``: a table of
        the page's own, shown whatever the switch says)."""
        if always or self.tables_on:
            table(data, key=self.key("table", name) if name else None, **kwargs)

    def hover(self, t: Translator) -> HoverText:
        return hover_text(t, self.namespace)

    def whole(self, t: Translator, key: str, label: str, bounds: tuple[int, int]) -> int | None:
        """The whole number in ``st.session_state[key]``, or None after ``<ns>.err_range`` says why not."""
        value = st.session_state.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and bounds[0] <= value <= bounds[1]:
            return value
        st.error(t(f"{self.namespace}.err_range", name=label, lo=bounds[0], hi=bounds[1]))
        return None

    def warn_truncated(self, t: Translator, tokenization, **values: object) -> None:
        warn_truncated(t, f"{self.namespace}.warn_truncated", tokenization, **values)

    def guard(self, t: Translator, what: str, known: Iterable[tuple[type[Exception], str]] = ()) -> Guard:
        return Guard(t, f"{self.namespace}.err_unexpected", what, tuple(known))

    def sentence_lab(
        self, t: Translator, key: str, what: str, compute: Callable[[str], object], tokenization=None
    ):
        """A lab's one cached core call on its sentence, ``compute(text)``, or None after saying why not:
        an empty sentence (``<ns>.err_empty``), settings the core refuses (``<ns>.err_config``) or
        anything else (``<ns>.err_unexpected``). Warns when the tokenizer cut the sentence
        (``tokenization(lab)``, default ``lab.tokenization``)."""
        text = st.session_state.get(key) or ""
        if not text.strip():
            st.error(t(f"{self.namespace}.err_empty"))
            return None
        lab = None
        with self.guard(t, what, known=[(AttentionConfigError, f"{self.namespace}.err_config")]):
            lab = compute(text)
        if lab is not None:
            self.warn_truncated(t, lab.tokenization if tokenization is None else tokenization(lab))
        return lab


def computed_quiz(t: Translator, namespace: str, family: str, items) -> None:
    """Questions computed from the page's own result, answered on the page: each item has ``qid``,
    ``params``, ``choices``, ``translate_choices`` and ``is_right(index)``; its texts are the
    namespace's ``quiz_<qid>`` and ``quiz_<qid>_why`` (the heads and training labs). Each radio is a
    member ``<family>_<qid>`` of the page's declared family (``TABLE.family("q")``)."""
    for q in items:
        options = list(range(len(q.choices)))
        fmt = (lambda k, q=q: t(q.choices[k])) if q.translate_choices else (lambda k, q=q: q.choices[k])
        chosen = st.radio(t(f"{namespace}.quiz_{q.qid}", **q.params), options, index=None, format_func=fmt,
                          key=f"{family}_{q.qid}", horizontal=True)  # fmt: skip
        if chosen is None:
            continue
        verdict = t(f"{namespace}.quiz_right") if q.is_right(chosen) else t(f"{namespace}.quiz_wrong")
        st.markdown(f"**{verdict}** " + t(f"{namespace}.quiz_{q.qid}_why", **q.params))
