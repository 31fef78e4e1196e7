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

from attention_ui.i18n import LANGUAGE_NAMES, LANGUAGES
from attention_ui.language import LANG_KEY, current_language

# a page's widget prefix, the page's one name (docs/architecture.md): the only text filled into the
# scripts, so lower-case letters and underscores only
_PREFIX = re.compile(r"^[a-z][a-z_]{1,15}$")

# Static CSS (the prefix is a page's constant): bigger type, no sidebar, the hidden Home/End buttons.
_CSS = """
<style>
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"] { display: none !important; }
[data-testid="stMainBlockContainer"] { padding-top: 1rem; padding-bottom: 1rem; max-width: 100%; }
[data-testid="stMain"] .stMarkdown p, [data-testid="stMain"] .stMarkdown li { font-size: 1.35rem; line-height: 1.6; }
[data-testid="stMain"] h1 { font-size: 2.6rem; padding-top: 0.25rem; }
[data-testid="stMain"] h2 { font-size: 2.2rem; padding-top: 0.25rem; }
[data-testid="stMain"] h3 { font-size: 1.7rem; }
[data-testid="stMain"] .katex { font-size: 1.3em; }
[data-testid="stMain"] [data-testid="stMarkdownBadge"] { font-size: 1.1rem; }
[data-testid="stMain"] .katex-display { overflow-x: auto; overflow-y: hidden; padding-bottom: 0.2rem; }
.st-key-__PREFIX___present_first, .st-key-__PREFIX___present_last,
[class*="st-key-__PREFIX___present_go_"] { display: none !important; }
@media (max-height: 900px) {  /* a 1366×768 projector: more of the slide above the fold */
  [data-testid="stMain"] .stMarkdown p, [data-testid="stMain"] .stMarkdown li { font-size: 1.12rem; line-height: 1.5; }
  [data-testid="stMain"] h1 { font-size: 2.1rem; padding-top: 0; padding-bottom: 0.5rem; }
  [data-testid="stMain"] h2 { font-size: 1.8rem; padding-top: 0; }
  [data-testid="stMain"] .katex { font-size: 1.12em; }
}
</style>
"""

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
_KEYS_JS = """
<script>
(() => {
  const NEXT = ["ArrowRight", "ArrowDown", "PageDown", " "], PREV = ["ArrowLeft", "ArrowUp", "PageUp"];
  window.__alPresenterPrefix = "__PREFIX__";  // the page presenting now; the listener below reads it
  const press = (name) => document.querySelector(".st-key-" + window.__alPresenterPrefix + "_present_" + name + " button");
  if (!window.__alPresenterKeys) {
    window.__alPresenterKeys = true;
    const queue = (window.__alPresenterQueue = { moves: [], waiting: null, target: null, closing: false, clicks: 0, openedAt: 0, closeAt: 0 });
    // A click on a button that draws a slide over this one (the live class's "Show the join code"):
    // the next press closes it, even when it comes before that slide (and its close button) is drawn.
    document.addEventListener("click", (e) => {
      const openers = window.__alPresenterOpeners, t = e.target;
      if (openers && t && t.closest && t.closest(openers)) queue.openedAt = performance.now();
    }, true);
    const running = () => {  // a run going on, or asked for ("rerunRequested") and not started yet
      const app = document.querySelector('[data-testid="stApp"]');
      return !!app && app.getAttribute("data-test-script-state") !== "notRunning";
    };
    const shown = () => {  // "prefix:slide" drawn last: the end-of-slide script, else the key script
      const p = window.__alPresenterPrefix + ":", d = window.__alPresenterDrawn;
      return d && d.startsWith(p) ? d : window.__alPresenterShown;
    };
    const pump = () => {  // one loop at a time (queue.pumping), every 30 ms while there is work
      const w = queue.waiting;
      if (w) {  // the last click's run: wait until it has drawn its change and ended (at most 15 s)
        if ((!w.drawn() || running()) && performance.now() - w.at < 15000) {
          setTimeout(pump, 30);
          return;
        }
        queue.waiting = null;
        queue.closing = false;
      }
      if (!queue.moves.length) { queue.pumping = false; queue.target = null; return; }
      queue.since = queue.since || performance.now();
      if (!running() || performance.now() - queue.since > 15000) {
        // A close asked for right after the slide's opener was clicked: wait for its close button
        // (at most 5 s; a slide that never came up leaves nothing to close).
        if (queue.moves[0] === "close" && !press("close") && performance.now() - queue.closeAt < 5000) {
          setTimeout(pump, 30);
          return;
        }
        queue.since = 0;
        const move = queue.moves.shift();
        const b = press(typeof move === "number" ? "go_" + move : move);
        if (move === "close" && !b) queue.closing = false;
        if (b && !b.disabled) {
          const t0 = performance.now(), search = location.search, want = window.__alPresenterPrefix + ":" + move;
          let seen = null;
          // Drawn: the wanted slide, and the address the run wrote (or 0.4 s): a click sent with
          // the address of a slide already left would take the page back there.
          const drawn = move === "close" ? () => !press("close") : move === "exit" ? () => !press("next") : () => {
            if (shown() !== want) return false;
            seen = seen || performance.now();
            return location.search !== search || performance.now() - seen > 400;
          };
          queue.waiting = { drawn, at: t0 };
          queue.clicks += 1;
          b.click();
        }
      }
      setTimeout(pump, 30);
    };
    const wanted = (e) => {
      if (!press("next") || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return null;
      const el = e.target;
      if (el && el.closest && el.closest("input, textarea, select, [contenteditable], [role=listbox], [role=combobox]")) return null;
      if (NEXT.includes(e.key)) return "next";
      if (PREV.includes(e.key)) return "prev";
      if (e.key === "Home") return "first";
      if (e.key === "End") return "last";
      if (e.key === "Escape") return "exit";
      return null;
    };
    // Each press becomes the slide it asks for, counted from the last one asked for while a move is
    // queued or not yet drawn (the screen may be a run behind), and from the slide on the screen
    // once nothing is (a mouse click on Next may have moved it since): the button for that slide is
    // clicked, so a run Streamlit repeats with the same click lands on the same slide.
    const busy = () => queue.moves.length > 0 || (!!queue.waiting && !queue.waiting.drawn());
    const over = () => window.__alPresenterOverlay || (queue.openedAt > 0 && performance.now() - queue.openedAt < 5000);
    const queued = (name) => {
      if (name === "exit") return "exit";
      if (!busy()) queue.target = null;
      if (over() && !queue.closing && !busy() && (name === "next" || name === "prev")) {
        queue.closing = true;  // a slide drawn over this one (the live class's join code): closed first
        queue.closeAt = performance.now();
        queue.openedAt = 0;
        window.__alPresenterOverlay = false;
        return "close";
      }
      const base = queue.target ?? window.__alPresenterStep, last = window.__alPresenterLast;
      const to = Math.max(1, Math.min(last, { next: base + 1, prev: base - 1, first: 1, last }[name]));
      if (to === base) return null;
      queue.target = to;
      queue.openedAt = 0;  // a step move closes a slide drawn over the step, too
      window.__alPresenterOverlay = false;
      return to;
    };
    document.addEventListener("keydown", (e) => {
      const name = wanted(e);
      if (!name) return;
      e.preventDefault();  // no page scroll, no second click of a focused button
      e.stopPropagation();
      if (e.repeat) return;
      const move = queued(name);
      if (move === null) return;
      queue.moves.push(move);
      if (!queue.pumping) { queue.pumping = true; pump(); }
    }, true);
    document.addEventListener("keyup", (e) => { if (wanted(e)) { e.preventDefault(); e.stopPropagation(); } }, true);
  }
  const STEP = __STEP__, LAST = __LAST__, OVERLAY = __OVERLAY__;
  window.__alPresenterShown = "__PREFIX__:" + STEP;  // the slide this run drew (the queue's pump waits for it)
  window.__alPresenterOpeners = "__OPENERS__";
  if (!window.__alPresenterQueue.closing) window.__alPresenterOverlay = OVERLAY;  // drawn over this step?
  if (OVERLAY) window.__alPresenterQueue.openedAt = 0;  // the opened slide is here: no longer pending
  window.__alPresenterStep = STEP;
  window.__alPresenterLast = LAST;
  let tries = 0;
  const settle = () => {
    const next = press("next"), prev = press("prev");
    const ready = next && prev && next.disabled === (STEP === LAST) && prev.disabled === (STEP === 1);
    if (!ready) { if (++tries < 60) setTimeout(settle, 50); return; }
    const active = document.activeElement;
    const CONTROLS = "__CONTROLS__";
    if (!active || active.disabled || !active.isConnected || !active.closest || !active.closest(CONTROLS)) {
      (next.disabled ? prev : next).focus();
    }
  };
  setTimeout(settle, 0);
})();
</script>
"""

# Constant JavaScript for the normal page (only the prefix is filled in): remember where the learner
# was when presenter mode started (the scroll position) and, after Exit, scroll back there and focus
# the presenter button.
_RETURN_JS = """
<script>
(() => {
  const P = "__PREFIX__";
  const SAVED = "attention-lab-present-return-" + P, EXITED = "attention-lab-present-exited-" + P;
  const scroller = () => {
    for (const sel of ['[data-testid="stMain"]', '[data-testid="stAppViewContainer"]']) {
      const el = document.querySelector(sel);
      if (el && el.scrollHeight > el.clientHeight + 1 && /(auto|scroll)/.test(getComputedStyle(el).overflowY)) return el;
    }
    return document.scrollingElement;
  };
  window.__alPresenterReturn = window.__alPresenterReturn || {};
  if (!window.__alPresenterReturn[P]) {
    window.__alPresenterReturn[P] = true;
    document.addEventListener("click", (e) => {
      const t = e.target;
      if (!t || !t.closest) return;
      if (t.closest(".st-key-" + P + "_present_start")) sessionStorage.setItem(SAVED, String(scroller().scrollTop));
      if (t.closest(".st-key-" + P + "_present_exit")) sessionStorage.setItem(EXITED, "1");
    }, true);
  }
  if (!sessionStorage.getItem(EXITED)) return;
  sessionStorage.removeItem(EXITED);
  const top = Number(sessionStorage.getItem(SAVED) || 0);
  sessionStorage.removeItem(SAVED);
  let tries = 0;
  const restore = () => {
    const el = scroller(), start = document.querySelector(".st-key-" + P + "_present_start button");
    if (!start || (el.scrollHeight < top + el.clientHeight && ++tries < 100)) { setTimeout(restore, 50); return; }
    el.scrollTop = top;
    start.focus({ preventScroll: true });
    // the page may still be settling (charts drawing): look once more
    setTimeout(() => {
      if (!document.activeElement || document.activeElement === document.body) start.focus({ preventScroll: true });
      if (Math.abs(el.scrollTop - top) > 2) el.scrollTop = top;
    }, 700);
  };
  setTimeout(restore, 0);
})();
</script>
"""

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


def keys(prefix: str) -> tuple[str, str]:
    """The session keys of a page's presenter: (presenting?, slide number)."""
    return f"{_checked(prefix)}_present", f"{prefix}_slide"


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
    selector = ", ".join(f".st-key-{name}" for name in names)
    script = _KEYS_JS.replace("__STEP__", str(int(step))).replace("__LAST__", str(int(last)))
    script = script.replace("__OVERLAY__", "true" if overlay else "false")
    script = script.replace("__OPENERS__", ", ".join(f".st-key-{name}" for name in openers))
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


def enter_button(
    t, prefix: str, words: Mapping[str, str] = SLIDE_WORDS, slide_key: str | None = None
) -> None:
    present, slide = keys(prefix)
    st.button(
        t(words["start"]),
        key=f"{prefix}_present_start",
        on_click=_enter,
        args=(present, slide_key or slide),
        icon=":material/slideshow:",
        help=t(words["help"]),
    )


def controls(
    t,
    prefix: str,
    step: int,
    last: int,
    *,
    words: Mapping[str, str] = SLIDE_WORDS,
    slide_key: str | None = None,
    extra: Callable[[object], None] | Sequence[Callable[[object], None]] | None = None,
) -> None:
    """The row that stays put from slide to slide: Previous, "k of n" (with the hidden Home/End
    buttons), Next, ``extra(column)`` for each extra given (the playground's head picker, the live
    class's start button), language, Exit."""
    present, slide = keys(prefix)
    slide = slide_key or slide
    extras = () if extra is None else tuple(extra) if isinstance(extra, (list, tuple)) else (extra,)
    widths = [1, 1.3, 1] + [1.4] * len(extras) + [1.1, 1]
    cols = st.columns(widths, vertical_alignment="center")
    c_prev, c_pos, c_next = cols[:3]
    c_lang, c_exit = cols[-2:]
    c_prev.button(
        t(words["prev"]),
        key=f"{prefix}_present_prev",
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
            key=f"{prefix}_present_{name}",
            on_click=_go_to,
            args=(slide, last, target),
            disabled=step == target,
        )
    # One hidden button per slide: the key script's queue clicks the slide a press asks for.
    for target in range(1, last + 1):
        c_pos.button(
            str(target), key=f"{prefix}_present_go_{target}", on_click=_go_to, args=(slide, last, target)
        )
    c_next.button(
        t(words["next"]),
        key=f"{prefix}_present_next",
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
        key=f"{prefix}_present_lang",
        on_click=_set_language,
        args=(target,),
        icon=":material/translate:",
        help=t(words["language"]),
        width="stretch",
    )
    c_exit.button(
        t(words["exit"]),
        key=f"{prefix}_present_exit",
        on_click=_leave,
        args=(present,),
        icon=":material/close:",
        width="stretch",
    )


def presenting(prefix: str) -> bool:
    return bool(st.session_state.get(keys(prefix)[0]))


class Deck:
    """One run of a page that opted in: counts its sections and, in presenter mode, draws only the
    current one, with the controls in a box at the top filled in once the count is known."""

    def __init__(self, prefix: str, link: bool) -> None:
        self.prefix, self.link, self.count = prefix, link, 0
        self.present = presenting(prefix)
        self.slide_key = keys(prefix)[1]
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
                enter_button(t, self.prefix)
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
            controls(t, self.prefix, self.step, last)


MAX_SLIDES = 64
_RUN = threading.local()  # the deck of the page running in this thread (one script run per thread)


def slides(prefix: str, link: bool) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Decorate a page's ``main``: its :func:`section` calls become slides (see the module doc)."""

    def wrap(main: Callable[[], None]) -> Callable[[], None]:
        @functools.wraps(main)
        def run() -> None:
            deck = _RUN.deck = Deck(prefix, link)
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
