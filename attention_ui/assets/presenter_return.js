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
