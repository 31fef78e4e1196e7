"""The page kit's plain parts: sizing rules, hover words, frames, the error guard, the range check.

Streamlit's output functions are replaced by recorders, so no script run is needed.
"""

from __future__ import annotations

import logging

import numpy as np
import plotly.graph_objects as go
import pytest

from attention_core import tokenize
from attention_ui import kit
from attention_ui.figures import base, heatmaps
from attention_ui.figures.base import HoverText
from attention_ui.i18n import Translator, translate
from tests.apptest_pages import html_bodies


class Recorder:
    """Stands in for st.error / st.warning: keeps what would have been shown."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def __call__(self, text: str, *args, **kwargs) -> None:
        self.shown.append(text)


@pytest.fixture
def shown(monkeypatch) -> dict[str, Recorder]:
    recorders = {"error": Recorder(), "warning": Recorder()}
    for name, recorder in recorders.items():
        monkeypatch.setattr(kit.st, name, recorder)
    return recorders


def test_one_height_rule_for_every_table():
    assert [kit.table_height(rows) for rows in (0, 1, 10)] == [38, 73, 388]
    assert kit.table_height(11) == kit.table_height(500) == 420  # then the table scrolls


def test_a_table_that_hides_rows_says_it_scrolls():
    # 38 px header + 35 px per row against the 420 px cap: 10 rows fit (388 px), 11 and 12 do not
    assert not kit.table_scrolls(10, kit.table_height(10))
    assert kit.table_scrolls(11, kit.table_height(11)) and kit.table_scrolls(12, kit.table_height(12))
    assert not kit.table_scrolls(12, "auto")


def test_one_width_rule_for_square_maps():
    assert kit.square_width(6) == 200 + 55 * 6 and kit.square_width(16) == 200 + 55 * 16
    assert kit.square_width(17) == "stretch"


def test_hover_words_come_from_the_namespace_and_fall_back_to_english_defaults():
    words = kit.hover_text(Translator("ja"), "masks")
    assert words.query == translate("ja", "masks.hover_query")
    assert words.masked == translate("ja", "masks.hover_masked")
    assert (words.token, words.dim) == (HoverText().token, HoverText().dim)  # masks has no such words
    full = kit.hover_text(Translator("en"), "multihead")
    assert full.dim == translate("en", "multihead.hover_dim")


def test_frame_from_columns_with_labelled_rows():
    frame = kit.frame({"a": [1, 2], "b": ["x", "y"]}, index=["r0", "r1"], index_name="row")
    assert list(frame.columns) == ["a", "b"] and list(frame.index) == ["r0", "r1"]
    assert frame.index.name == "row" and frame.loc["r1", "b"] == "y"
    assert kit.frame(frame) is frame  # a DataFrame passes through


def test_guard_turns_errors_into_messages_and_lets_the_rest_through(shown, caplog):
    t = Translator("en")
    with kit.Guard(t, "masks.err_unexpected", "test", known=[(ValueError, "multihead.err_config")]) as run:
        raise ValueError("d_model must be positive")
    assert run.failed
    assert shown["error"].shown == [
        translate("en", "multihead.err_config", detail="d_model must be positive")
    ]
    with (
        caplog.at_level(logging.ERROR, logger="attention_ui.kit"),
        kit.Guard(t, "masks.err_unexpected") as run,
    ):
        raise KeyError("bug")
    assert run.failed and shown["error"].shown[-1] == translate("en", "masks.err_unexpected")
    assert "KeyError" in caplog.text  # the traceback goes to the server log
    with kit.Guard(t, "masks.err_unexpected") as run:
        pass
    assert not run.failed and len(shown["error"].shown) == 2

    class RerunSignal(BaseException):  # how Streamlit's st.rerun/st.stop signals are built
        pass

    with pytest.raises(RerunSignal), kit.Guard(t, "masks.err_unexpected"):
        raise RerunSignal


def test_truncation_notice_only_when_tokens_were_dropped(shown):
    t = Translator("en")
    kit.warn_truncated(t, "playground.warn_truncated", tokenize("a b c", max_tokens=4))
    kit.warn_truncated(t, "playground.warn_truncated", None)
    assert shown["warning"].shown == []
    kit.warn_truncated(t, "playground.warn_truncated", tokenize("a b c d e f", max_tokens=4))
    assert shown["warning"].shown == [
        translate("en", "playground.warn_truncated", total=6, kept=4, dropped=2)
    ]


def test_whole_accepts_whole_numbers_in_range_only(shown, monkeypatch):
    page = kit.Page("mk", "masks")
    state = {"mk_pad": 3, "mk_big": 9, "mk_bool": True, "mk_float": 2.0}
    monkeypatch.setattr(kit.st, "session_state", state)
    t = Translator("en")
    assert page.whole(t, "mk_pad", "pad", (0, 4)) == 3
    assert [page.whole(t, key, "x", (0, 4)) for key in ("mk_big", "mk_bool", "mk_float", "mk_none")] == [
        None
    ] * 4
    assert shown["error"].shown[0] == translate("en", "masks.err_range", name="x", lo=0, hi=4)


def test_translated_choices_are_resent_once_per_language():
    state = {"pg_mask": "causal", "pg_lang_shown": "en"}
    assert not kit.refresh_translated_choices(state, ["pg_mask"], "en", "pg_lang_shown")
    assert kit.refresh_translated_choices(state, ["pg_mask", "pg_absent"], "ja", "pg_lang_shown")
    assert state == {"pg_mask": "causal", "pg_lang_shown": "ja"}


TOKENS = ["the", "cat", "sat", "on", "the", "mat"]


def test_every_chart_the_kit_draws_has_the_strip(monkeypatch):
    drawn = []
    monkeypatch.setattr(kit.st, "plotly_chart", lambda fig, **kw: drawn.append((fig, kw)))
    monkeypatch.setattr(kit, "translator", lambda: kit.Translator("en"))
    kit.chart(heatmaps.attention_heatmap(np.eye(6), TOKENS), "x_chart_a", "alt", theme=None)
    kit.chart(go.Figure(layout=dict(height=300, margin=dict(t=0))), "x_chart_b", "alt")
    assert [fig.layout.margin.t >= base.TOOLBAR_PX for fig, _ in drawn] == [True, True]
    # a chart without a toolbar needs no strip
    kit.chart(go.Figure(layout=dict(margin=dict(t=0))), "x_chart_c", "alt", config={"displayModeBar": False})
    assert drawn[-1][0].layout.margin.t == 0


def test_a_wide_maps_numbers_are_marked_for_hiding_on_a_phone(monkeypatch):
    import contextlib

    from tests.apptest_pages import open_page

    twelve = [f"w{i}" for i in range(12)]
    assert kit.dense_numbers(heatmaps.attention_heatmap(np.eye(12), twelve, show_text=True))
    assert not kit.dense_numbers(heatmaps.attention_heatmap(np.eye(8), twelve[:8], show_text=True))
    assert not kit.dense_numbers(heatmaps.attention_heatmap(np.eye(12), twelve, show_text=False))
    boxes = []
    monkeypatch.setattr(kit.st, "plotly_chart", lambda fig, **kw: None)
    monkeypatch.setattr(kit.st, "container", lambda key=None: boxes.append(key) or contextlib.nullcontext())
    monkeypatch.setattr(kit, "translator", lambda: kit.Translator("en"))
    kit.chart(heatmaps.attention_heatmap(np.eye(12), twelve, show_text=True), "pg_chart_w", "alt")
    kit.chart(heatmaps.attention_heatmap(np.eye(8), twelve[:8], show_text=True), "pg_chart_v", "alt")
    assert boxes == ["pg_chart_w_dense"]  # the CSS below hides its numbers on a phone
    monkeypatch.undo()
    at = open_page(lang="ja")
    css = [body for body in html_bodies(at) if "g.heatmap-label" in body]
    assert css and "max-width: 640px" in css[0] and '[class*="_dense"]' in css[0]
