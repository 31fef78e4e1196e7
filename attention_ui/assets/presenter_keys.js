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
