"""Touch targets: every control at least 24 × 24 px, and on a phone the main controls 44 px tall.

WCAG 2.2's success criterion 2.5.8 (Target Size, Minimum, level AA) asks 24 × 24 CSS px for every
target; 2.5.5 (level AAA) and the platforms' guidelines 44 px for what a finger uses most. Streamlit 1.67
draws a radio option 22 px tall (169 of them on the quiz page), a help icon 16 × 16, a heading's link
16 × 16, a chart toolbar's buttons 24 × 22, a password field's "show" button 32 × 16, the button that opens the sidebar on a phone 28 × 28, number
and text boxes 36-40 px and page links 28 px (issue 42, point 12).

Constant CSS, drawn by app.py around every page, enlarges the *target* and leaves what is drawn alone
where it can: a help icon keeps its 16-px glyph in a 24-px button (a negative margin keeps the label's
line as tall as it was; sideways it takes 8 px more, which a negative margin there would push past the
column's edge), a radio option or a switch gets a 24-px line. Below Streamlit's 768-px breakpoint (a
phone, where the sidebar covers the page) the main controls are at least :data:`MAIN_PX` tall: buttons,
page links, the sidebar's open and close buttons, text, number and select boxes.
tests/browser/test_phone_touch_browser.py measures them on every page.
"""

from __future__ import annotations

import streamlit as st

from attention_ui import assets
from attention_ui.narrow_screen import NARROW_PX
from attention_ui.st_structure import testid

MIN_PX = 24  # WCAG 2.2, 2.5.8: every target
MAIN_PX = 44  # the main controls on a phone (WCAG 2.5.5)

# The main controls; on a phone each is at least MAIN_PX tall.
MAIN_CONTROLS = (
    testid("stSidebarNavLink"),
    testid("stPageLink-NavLink"),
    testid("stBaseButton", "^="),
    testid("stPopoverButton"),
    ".al-copy-link",
    testid("stExpandSidebarButton"),
    testid("stSidebarCollapseButton") + " button",
    # the boxes' own fields, what a tap must land on (their frames grow with them)
    testid("stNumberInputField"),
    testid("stTextInputField"),
    testid("stSelectbox") + ' input[role="combobox"]',
)
# The sidebar's two buttons are icons: square targets.
SQUARE = (testid("stExpandSidebarButton"), testid("stSidebarCollapseButton") + " button")


# A table's toolbar, which a touch screen always shows, sits MAIN_PX above the table (its buttons are main
# controls): on a touch screen the table keeps that room, less the gap between two elements (1rem), so
# the toolbar is not drawn over the formula or text above it.
TABLE = f"{testid('stElementContainer')}:has(> {testid('stFullScreenFrame')} > {testid('stDataFrame')})"
TABLE_ROOM = f"calc({MAIN_PX}px - 1rem)"


def targets_css() -> str:
    """The constant CSS (:data:`MIN_PX`, :data:`MAIN_PX` and the selectors filled in)."""
    low, main, narrow = int(MIN_PX), int(MAIN_PX), int(NARROW_PX) - 1
    centred = "display: inline-flex; align-items: center; justify-content: center;"
    values = {
        "__LOW__": str(low),
        "__MAIN__": str(main),
        "__NARROW__": str(narrow),
        "__CENTRED__": centred,
        "__MAIN_CONTROLS__": ", ".join(MAIN_CONTROLS),
        "__SQUARE__": ", ".join(SQUARE),
        "__TABLE__": TABLE,
        "__TABLE_ROOM__": TABLE_ROOM,
    }
    css = assets.style("targets.css")
    for name, value in values.items():
        css = css.replace(name, value)
    return css


def size_targets() -> None:
    """Put the CSS on the page; call once per run from app.py (it is invisible)."""
    st.html(targets_css())
