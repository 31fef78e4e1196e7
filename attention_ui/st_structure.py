"""Streamlit's page structure that the app's CSS and scripts select: declared here, once.

Streamlit renders each element with a ``data-testid`` (``stMain``, ``stSidebarNavLink``), some with an
``st*`` class (``.stMarkdown``), a keyed widget or container with the class ``st-key-<key>``, and the
app's root with ``data-test-*`` attributes saying whether a run is going on. None of that is a public
API: an upgrade may rename any of it, and a selector that matches nothing fails silently (the rule is
dropped, the script finds no element). So every name the product selects is declared below, with what
uses it; product code builds its selectors with :func:`testid` and :func:`key_class`, and the asset
files (attention_ui/assets/) are checked against this table by tests/test_st_structure.py, which also
looks each name up in the installed Streamlit's frontend bundle and names the one an upgrade dropped.
The same names drive the browser tests (tests/browser/), which may import them from here.
"""

from __future__ import annotations

import re

# data-testid values -> what selects them (a value used as a prefix, ``[data-testid^="stBaseButton"]``,
# is declared as that prefix).
TEST_IDS: dict[str, str] = {
    "stApp": "presenter_keys.js (is a run going on?), class_watchdog.js, class_panel_watchdog.js",
    "stAppViewContainer": "presenter_return.js (the page's scroller)",
    "stMain": "presenter.css, presenter_return.js, first_screen.js, class_present_strip.css, app.py",
    "stMainBlockContainer": "presenter.css, class_joined_head.css",
    "stHeader": "first_screen.js (the header's height above a jumped-to step)",
    "stSidebar": "presenter.css (hidden), narrow_sidebar.js",
    "stSidebarNavLink": "narrow_sidebar.js, targets.MAIN_CONTROLS",
    "stSidebarCollapseButton": "narrow_sidebar.js, targets.MAIN_CONTROLS",
    "stExpandSidebarButton": "presenter.css (hidden), targets.MAIN_CONTROLS",
    "stPageLink-NavLink": "app.py (wrapping links), targets.MAIN_CONTROLS",
    "stBaseButton": "targets.MAIN_CONTROLS (a prefix: every kind of button)",
    "stPopoverButton": "targets.MAIN_CONTROLS",
    "stNumberInputField": "targets.MAIN_CONTROLS",
    "stTextInputField": "targets.MAIN_CONTROLS",
    "stTextInputRootElement": "targets.targets_css (a password box's show button)",
    "stSelectbox": "targets.MAIN_CONTROLS",
    "stRadioOption": "targets.targets_css",
    "stTooltipHoverTarget": "targets.targets_css (help icons)",
    "stTooltipContent": "frontend_words.TEXT_ELEMENTS",
    "InputInstructions": "frontend_words.TEXT_ELEMENTS",
    "stHeaderActionElements": "targets.targets_css (a heading's link)",
    "stCaptionContainer": "app.py (caption contrast), class_watchdog.js (the step shown)",
    "stMarkdownContainer": "class_joined_head.css, class_present_strip.css",
    "stMarkdownBadge": "presenter.css",
    "stElementContainer": "targets.TABLE, classroom/state.py, training/views.py",
    "stLayoutWrapper": "class_watchdog.css, class_panel_watchdog.css",
    "stFullScreenFrame": "playground_slide.css, targets.TABLE",
    "stPlotlyChart": "playground_slide.css",
    "stDataFrame": "targets.TABLE",
    "stDataFrameResizable": "narrow_fit.TABLE_FRAME",
    "stTable": "narrow_fit.TABLE_FRAME, narrow_fit.css",
    "stCode": "narrow_fit.css",
}
# st* class names -> what selects them
CLASSES: dict[str, str] = {
    "stMarkdown": "presenter.css (the slide's type size)",
}
# attributes of the app's root (``[data-testid="stApp"]``) -> what reads them
ATTRIBUTES: dict[str, str] = {
    "data-test-script-state": "presenter_keys.js, class_watchdog.js (notRunning: no run going on)",
    "data-test-connection-state": "class_watchdog.js, class_panel_watchdog.js (CONNECTED)",
}
# the class a keyed widget or container gets: st-key-<key>
KEY_CLASS_PREFIX = "st-key-"
# Every name above, and the prefix, with what uses it.
NAMES: dict[str, str] = {**TEST_IDS, **CLASSES, **ATTRIBUTES, KEY_CLASS_PREFIX: "every .st-key- selector"}

_KEY = re.compile(r"[A-Za-z0-9_-]+")


def testid(name: str, match: str = "=") -> str:
    """``[data-testid="name"]`` for a declared name (``match="^="``: names starting with it)."""
    if name not in TEST_IDS:
        raise KeyError(f"data-testid {name!r} is not declared in attention_ui/st_structure.py")
    if match not in ("=", "^="):
        raise ValueError(f"a data-testid is matched exactly (=) or by its start (^=), not {match!r}")
    return f'[data-testid{match}"{name}"]'


def key_class(key: str) -> str:
    """``.st-key-<key>``: the element of the widget or container with that key."""
    if not _KEY.fullmatch(key):
        raise ValueError(f"a widget key in a selector is letters, digits, _ and -, not {key!r}")
    return f".{KEY_CLASS_PREFIX}{key}"


# How the structure's names are spelled in CSS and scripts (used by the test that checks the assets
# and the product's strings against this module).
USED_TEST_ID = re.compile(r"""data-testid[\^*]?=\\?["']([A-Za-z][\w-]*)""")
USED_CLASS = re.compile(r"(?<![\w-])\.(st[A-Z][A-Za-z]+)\b")
USED_ATTRIBUTE = re.compile(r"\bdata-test-[a-z-]+")


def used_names(text: str) -> set[str]:
    """The structure's names that ``text`` (CSS, a script, HTML) selects."""
    return (
        set(USED_TEST_ID.findall(text))
        | set(USED_CLASS.findall(text))
        | set(USED_ATTRIBUTE.findall(text))
        | ({KEY_CLASS_PREFIX} if KEY_CLASS_PREFIX in text else set())
    )


def missing_from(bundle: str, names: dict[str, str], version: str) -> list[str]:
    """One message per name of ``names`` that the frontend ``bundle`` (Streamlit's JavaScript, as one
    text) never spells: a name is found when no letter, digit or ``_`` follows it there (``stMain`` is
    not found in ``stMainBlockContainer``)."""
    missing = []
    for name, where in names.items():
        found = name in bundle and re.search(re.escape(name) + r"(?![A-Za-z0-9_])", bundle)
        if not found:
            missing.append(f"Streamlit {version} no longer renders {name!r}; used by {where}")
    return missing
