"""Presenter mode for any page: one section per slide, large type, driven by a presentation clicker.

A page opts in by decorating its ``main`` and drawing each section through the kit::

    @PAGE.slides
    def main() -> None:
        ...
        PAGE.section(section_masks, t, lab, hover)   # instead of section_masks(t, lab, hover)
        PAGE.section(section_leakage, t, settings)

Normally that draws every section, with a "Presenter mode" button (and, for a page whose state lives in
its URL, a "Copy link" button) at the foot of the sidebar. In presenter mode it draws one section as a
slide: a row of controls (Previous, "Slide k of n", Next, the other language, Exit), the sidebar
hidden (the settings stay in the session), large type, and charts restyled for a projector
(:func:`attention_ui.playground.projector.slide_figure`, through :meth:`attention_ui.kit.Page.chart`).
Keys: → / ↓ / Page Down / Space next, ← / ↑ / Page Up previous, Home / End first / last, Esc exits, as
a clicker sends them (some send the up and down arrows); after Exit the page scrolls back to where
the learner was.

State: ``<prefix>_present`` (bool) and ``<prefix>_slide`` (1-based), plain session keys changed by
button callbacks. The playground's own presenter (:mod:`attention_ui.playground.presenter`, one step
per slide) uses the same controls, key script and return script with its prefix ``pg``.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Mapping, Sequence

import streamlit as st

from attention_ui import assets
from attention_ui.i18n import LANGUAGE_NAMES, LANGUAGES
from attention_ui.language import LANG_KEY, current_language
from attention_ui.st_structure import key_class

# a page's widget prefix, the page's one name (docs/architecture.md): the only text filled into the
# scripts, so lower-case letters and underscores only
_PREFIX = re.compile(r"^[a-z][a-z_]{1,15}$")

# Static CSS (the prefix is a page's constant): bigger type, no sidebar, the hidden Home/End buttons.
_CSS = assets.style("presenter.css")

# Constant JavaScript (only the prefix and the slide numbers are filled in): keys and presentation
# clickers (which send PageDown/PageUp or the arrows) drive the Previous/Next buttons, Home/End the
# hidden first/last buttons, Escape exits; focus is kept on the controls (Next, or Previous at the
# last slide) instead of falling to <body>. One listener per tab serves every page: it acts on the
# controls of whichever page is presenting (its buttons are the ones on the page).
#
# Presses are queued and the buttons clicked one at a time, each once the run of the one before has
# drawn its slide: a clicker pressed three times 150 ms apart sent three clicks into one run, which
# Streamlit took as one (a button is one trigger per run) and which could start from the address of
# a slide already left (the projector showed 2 -> 1 -> 2 and ended on step 2 instead of 4).
_KEYS_JS = assets.script("presenter_keys.js")

# Constant JavaScript for the normal page (only the prefix is filled in): remember where the learner
# was when presenter mode started (the scroll position) and, after Exit, scroll back there and focus
# the presenter button.
_RETURN_JS = assets.script("presenter_return.js")

# The words of the controls: catalog keys (the playground says "step", the other pages "slide").
SLIDE_WORDS = {
    "start": "presenter.start",
    "help": "presenter.help",
    "prev": "presenter.prev",
    "next": "presenter.next",
    "first": "presenter.first",
    "last": "presenter.last",
    "exit": "presenter.exit",
    "language": "presenter.language",
    "position": "presenter.position",  # {step}, {total}
}


def _checked(prefix: str) -> str:
    if not _PREFIX.match(prefix):
        raise ValueError(f"a page prefix is 2-16 lower-case letters or underscores, not {prefix!r}")
    return prefix


# A page's key maker (kit.Page.key, a settings table's key): ``key("present", "next")`` is the page's
# ``<prefix>_present_next``, a member of the kit's ``present_*`` keys (attention_ui/settings_table.py).
KeyOf = Callable[..., str]


def keys(key: KeyOf) -> tuple[str, str]:
    """The session keys of a page's presenter: (presenting?, slide number)."""
    return key("present"), key("slide")


def css(prefix: str) -> str:
    return _CSS.replace("__PREFIX__", _checked(prefix))


def keys_script(
    prefix: str,
    step: int,
    last: int,
    controls: Sequence[str] = (),
    *,
    overlay: bool = False,
    openers: Sequence[str] = (),
) -> str:
    """The key handling and focus script on slide ``step`` of ``last`` (integers, a flag and widget
    keys only); ``controls``: more widget keys of the controls row that keep the focus (the
    playground's head). ``overlay``: this run draws a slide over the step (closed by the first Next
    or Previous, through the ``<prefix>_present_close`` button); ``openers``: widget keys of the
    buttons that open such a slide (a press right after a click on one closes it, even before the
    run has drawn it)."""
    names = [f"{_checked(prefix)}_present_{b}" for b in ("prev", "next", "lang", "exit")] + list(controls)
    if not all(re.fullmatch(r"[a-z_]+", name) for name in [*names, *openers]):
        raise ValueError("widget keys of the controls are lower-case letters and underscores")
    selector = ", ".join(key_class(name) for name in names)
    script = _KEYS_JS.replace("__STEP__", str(int(step))).replace("__LAST__", str(int(last)))
    script = script.replace("__OVERLAY__", "true" if overlay else "false")
    script = script.replace("__OPENERS__", ", ".join(key_class(name) for name in openers))
    return script.replace("__CONTROLS__", selector).replace("__PREFIX__", prefix)


_DRAWN_JS = '<script>window.__alPresenterDrawn = "__PREFIX__:" + __STEP__;</script>'


def drawn_script(prefix: str, step: int) -> str:
    """For a page that draws its key script before the slide: drawn after the slide, it tells the
    key queue that this run has drawn slide ``step`` (the next queued press waits for it)."""
    return _DRAWN_JS.replace("__PREFIX__", _checked(prefix)).replace("__STEP__", str(int(step)))


def return_script(prefix: str) -> None:
    """On the normal page: bring the learner back to where they were after presenter mode."""
    st.html(_RETURN_JS.replace("__PREFIX__", _checked(prefix)), unsafe_allow_javascript=True)


def clamp(state, key: str, last: int) -> int:
    """The slide number in ``state[key]``, reset to 1 when it is not a whole number in 1..last."""
    step = state.get(key, 1)
    if not isinstance(step, int) or isinstance(step, bool) or not 1 <= step <= last:
        step = 1
    state[key] = step
    return step


def _go(key: str, last: int, delta: int) -> None:
    st.session_state[key] = min(last, max(1, clamp(st.session_state, key, last) + delta))


def _go_to(key: str, last: int, step: int) -> None:
    st.session_state[key] = min(last, max(1, step))


def _enter(present: str, slide: str) -> None:
    """Presenter mode starts at the first slide."""
    st.session_state[present] = True
    st.session_state[slide] = 1


def _leave(present: str) -> None:
    st.session_state[present] = False


def _set_language(lang: str) -> None:
    # The same ``lang`` state as the sidebar selectbox (hidden while presenting); a callback runs
    # before app.py draws that selectbox, so the whole rerun is in the new language, on the same slide.
    st.session_state[LANG_KEY] = lang


def other_language() -> str:
    current = current_language()
    return LANGUAGES[(LANGUAGES.index(current) + 1) % len(LANGUAGES)]


def enter_button(t, key: KeyOf, words: Mapping[str, str] = SLIDE_WORDS, slide_key: str | None = None) -> None:
    """The sidebar's button into presenter mode; ``key``: the page's key maker (:data:`KeyOf`)."""
    present, slide = keys(key)
    st.button(
        t(words["start"]),
        key=key("present", "start"),
        on_click=_enter,
        args=(present, slide_key or slide),
        icon=":material/slideshow:",
        help=t(words["help"]),
    )


def controls(
    t,
    key: KeyOf,
    step: int,
    last: int,
    *,
    words: Mapping[str, str] = SLIDE_WORDS,
    slide_key: str | None = None,
    extra: Callable[[object], None] | Sequence[Callable[[object], None]] | None = None,
) -> None:
    """The row that stays put from slide to slide: Previous, "k of n" (with the hidden Home/End
    buttons), Next, ``extra(column)`` for each extra given (the playground's head picker, the live
    class's start button), language, Exit. ``key``: the page's key maker (:data:`KeyOf`)."""
    present, slide = keys(key)
    slide = slide_key or slide
    extras = () if extra is None else tuple(extra) if isinstance(extra, (list, tuple)) else (extra,)
    widths = [1, 1.3, 1] + [1.4] * len(extras) + [1.1, 1]
    cols = st.columns(widths, vertical_alignment="center")
    c_prev, c_pos, c_next = cols[:3]
    c_lang, c_exit = cols[-2:]
    c_prev.button(
        t(words["prev"]),
        key=key("present", "prev"),
        on_click=_go,
        args=(slide, last, -1),
        disabled=step == 1,
        icon=":material/arrow_back:",
        width="stretch",
    )
    c_pos.markdown(t(words["position"], step=step, total=last))
    # Home and End (keys only, hidden by the CSS): buttons, so the jump runs through a callback like
    # Previous/Next and whatever the page writes into its URL after the run holds the new slide.
    for name, target in (("first", 1), ("last", last)):
        c_pos.button(
            t(words[name]),
            key=key("present", name),
            on_click=_go_to,
            args=(slide, last, target),
            disabled=step == target,
        )
    # One hidden button per slide: the key script's queue clicks the slide a press asks for.
    for target in range(1, last + 1):
        c_pos.button(
            str(target), key=key("present", "go", target), on_click=_go_to, args=(slide, last, target)
        )
    c_next.button(
        t(words["next"]),
        key=key("present", "next"),
        on_click=_go,
        args=(slide, last, 1),
        disabled=step == last,
        icon=":material/arrow_forward:",
        width="stretch",
    )
    for i, draw in enumerate(extras):
        draw(cols[3 + i])
    target = other_language()  # the sidebar (and its language box) is hidden while presenting
    c_lang.button(
        LANGUAGE_NAMES[target],
        key=key("present", "lang"),
        on_click=_set_language,
        args=(target,),
        icon=":material/translate:",
        help=t(words["language"]),
        width="stretch",
    )
    c_exit.button(
        t(words["exit"]),
        key=key("present", "exit"),
        on_click=_leave,
        args=(present,),
        icon=":material/close:",
        width="stretch",
    )


def presenting(key: KeyOf) -> bool:
    return bool(st.session_state.get(keys(key)[0]))


class Deck:
    """One run of a page that opted in: counts its sections and, in presenter mode, draws only the
    current one, with the controls in a box at the top filled in once the count is known."""

    def __init__(self, prefix: str, link: bool, key: KeyOf) -> None:
        self.prefix, self.link, self.key, self.count = prefix, link, key, 0
        self.present = presenting(key)
        self.slide_key = keys(key)[1]
        if self.present:
            st.html(css(prefix))
            self.step = clamp(st.session_state, self.slide_key, MAX_SLIDES)
            self.top = st.container()

    def section(self, draw: Callable[..., None], *args, **kwargs) -> None:
        self.count += 1
        if not self.present or self.count == self.step:
            draw(*args, **kwargs)

    def end(self) -> None:
        from attention_ui.language import translator

        t = translator()
        if not self.present:
            with st.sidebar:
                st.divider()
                enter_button(t, self.key)
                if self.link:
                    from attention_ui.playground import share  # the playground's copy-link button

                    share.copy_link(t)
                    st.caption(t("presenter.link_note"))
            return_script(self.prefix)
            return
        last = max(1, self.count)
        if self.step > last:  # fewer sections than before (a setting changed): the last one
            st.session_state[self.slide_key] = last
            st.rerun()
        with self.top:
            st.html(keys_script(self.prefix, self.step, last), unsafe_allow_javascript=True)
            controls(t, self.key, self.step, last)


MAX_SLIDES = 64
_RUN = threading.local()  # the deck of the page running in this thread (one script run per thread)


def slides(prefix: str, link: bool, key: KeyOf) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Decorate a page's ``main``: its :func:`section` calls become slides (see the module doc);
    ``prefix`` names the page in the slide's CSS and scripts, ``key`` makes its session keys."""

    def wrap(main: Callable[[], None]) -> Callable[[], None]:
        @functools.wraps(main)
        def run() -> None:
            deck = _RUN.deck = Deck(prefix, link, key)
            try:
                main()
            finally:
                _RUN.deck = None
            deck.end()  # not after st.stop/st.rerun (they are not Exceptions and end the run)

        return run

    return wrap


def section(draw: Callable[..., None], *args, **kwargs) -> None:
    """Draw one section of the page: always, or in presenter mode only when it is the current slide."""
    deck = getattr(_RUN, "deck", None)
    if deck is None:
        draw(*args, **kwargs)
    else:
        deck.section(draw, *args, **kwargs)
