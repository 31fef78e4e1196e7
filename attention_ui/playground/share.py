"""Sharing and export on the playground: a copy-link button with a note that the link holds the whole
view, and one export menu (any matrix as CSV for the shown head or all heads, the whole trace as JSON
or ``.npz``). The files' contents come from :mod:`attention_core.export`; nothing is computed here.
"""

from __future__ import annotations

import html

import streamlit as st

from attention_core import export
from attention_ui import assets
from attention_ui.playground import explain_view
from attention_ui.playground.export import csv_file_name
from attention_ui.playground.settings import TABLE
from attention_ui.takehome import build, buttons

# The copy-link button. Its constant script (assets/share_copy.js) copies the page's own address (which
# holds the whole view) to the clipboard, with the older copy command where the Clipboard API is missing
# (a page served over plain http), and says the outcome in a polite live region. Labels come from the catalog, HTML-escaped, as data.
_COPY_HTML = """
<div class="al-share">
<button type="button" class="al-copy-link" data-done="{done}" data-failed="{failed}">{label}</button>
<span class="al-copy-status" role="status" aria-live="polite"></span>
</div>
"""


def copy_link(t) -> None:
    """The copy-link button (catalog labels, escaped; the script is constant)."""
    esc = lambda key: html.escape(t(key), quote=True)  # noqa: E731
    body = _COPY_HTML.format(
        label=esc("playground.share_copy"),
        done=esc("playground.share_done"),
        failed=esc("playground.share_failed"),
    )
    body += assets.style("share_copy.css") + assets.script("share_copy.js")
    st.html(body, unsafe_allow_javascript=True)


def matrix_names(t) -> dict[str, str]:
    """The export menu's matrices, named as the steps that show them."""
    steps = {
        "X": "x",
        "scores_raw": "raw",
        "scores_scaled": "scaled",
        "mask": "mask",
        "scores_masked": "masked",
        "weights": "softmax",
        "head_outputs": "head_out",
        "concat": "concat",
        "output": "output",
    }
    names = {}
    for name in ("X", "Q", "K", "V", "scores_raw", "scores_scaled", "mask", "scores_masked", "weights"):
        names[name] = name if name in ("Q", "K", "V") else t(f"playground.step_{steps[name]}")
    for name in ("head_outputs", "concat", "output"):
        names[name] = t(f"playground.step_{steps[name]}")
    return names


def export_menu(t, trace, head: int) -> None:
    """One menu for every download: a matrix as CSV (shown head or all heads), or the whole trace."""
    with st.popover(t("playground.export"), icon=":material/download:"):
        names = matrix_names(t)
        what = st.selectbox(
            t("playground.export_matrix"),
            list(names),
            index=list(names).index("weights"),
            format_func=names.get,
            key=TABLE.key("export_matrix"),
        )
        per_head = what not in export.SHARED_MATRICES
        every = False
        if per_head and trace.heads > 1:
            every = st.radio(
                t("playground.export_heads"),
                [False, True],
                horizontal=True,
                key=TABLE.key("export_all"),
                format_func=lambda a: (
                    t("playground.export_all_heads") if a else t("playground.head_name", h=head)
                ),
            )
        heads = None if every or not per_head else [head]
        name = csv_file_name(what if not every else f"{what}_all_heads", head if heads else None)
        st.download_button(
            t("playground.export_csv"),
            data=lambda: export.matrix_csv(trace, what, heads),
            file_name=name,
            mime="text/csv",
            key=TABLE.key("dl", "csv"),
            icon=":material/table:",
            on_click="ignore",  # deferred data: a rerun could drop the callable before it is read
        )
        st.caption(t("playground.export_trace"))
        for kind, mime in (("json", "application/json"), ("npz", "application/octet-stream")):
            data = (lambda: export.npz_bytes(trace)) if kind == "npz" else (lambda: export.json_bytes(trace))
            st.download_button(
                t(f"playground.download_{kind}"),
                data=data,
                file_name=f"attention_trace.{kind}",
                mime=mime,
                key=TABLE.key("dl", kind),
                icon=":material/download:",
                on_click="ignore",
            )
        take_home(t, trace, head)


def take_home(t, trace, head: int) -> None:
    """The lesson as one offline HTML file, and the files for a course platform (issue 45): the
    shown head, and the cell the explainer shows (or the last token's own cell)."""
    s, key = st.session_state, TABLE.key
    text = " ".join(trace.tokens) if s.get(key("preset")) == "example" else (s.get(key("text")) or "")
    head, cell = buttons.shown(trace, head, explain_view.chosen_cell(s))
    st.divider()
    buttons.lesson_button(t, key("dl", "lesson"), lambda: build.playground_lesson(t, trace, text, head, cell))
    buttons.course_files(t, key, trace, text, head, cell)


def share_row(t, trace, head: int) -> None:
    """Copy link and export side by side, with the note that the link reproduces the view."""
    c1, c2 = st.columns([1, 1], vertical_alignment="center")
    with c1:
        copy_link(t)
    with c2:
        export_menu(t, trace, head)
    st.caption(t("playground.share_note"))
