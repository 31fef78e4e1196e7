"""The playground's sentence box, at the top of its main area, right under the page's introduction.

The introduction says "type a sentence in the box below"; the box was in the sidebar, under the 17 page
links and two switches: below the first screen at 1366 × 768, and on a phone behind the button that
opens the sidebar (issue 42, point 8). Here it is on the first screen of both, with the example
picker beside it (below it on a phone, where Streamlit stacks columns).

It is the same widget as before (key ``pg_text``, kept when the page changes), so nothing else moves:
the page kit shares it with the other pages as the learner's sentence (``kit.share_context``, called by
``PAGE.start`` before any widget), the URL state reads ``?text=`` into it before it is drawn, and the
pretrained view shows the same box. The labs keep their sentence in their sidebars, under the
settings it goes with; the playground is the page a newcomer opens first.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from attention_ui.playground import examples
from attention_ui.playground.settings import PAGE, TABLE

BOX_KEY = TABLE.key("sentence_box")  # the row's container (browser tests measure where it is)
HEIGHT_PX = 90


def sentence_box(t, *, help_text: str | None = None, picker: bool = True) -> Callable[[], None]:
    """The box and, beside it, the example picker; returns what draws the picker in its place.
    ``picker=False`` keeps the place and leaves the picker to the caller: the session's first view
    sends it one run later, with the sidebar's widgets (attention_ui/playground/first_screen.py)."""
    with st.container(key=BOX_KEY):
        box, side = st.columns([3, 1], vertical_alignment="bottom")
        help_kwargs = {"help": help_text} if help_text is not None else {"helped": True}
        PAGE.widget(t, "text_area", "text", height=HEIGHT_PX, where=box, **help_kwargs)

    def draw_picker() -> None:
        with side:
            examples.example_picker(t, t.lang)

    if picker:
        draw_picker()
    return draw_picker
