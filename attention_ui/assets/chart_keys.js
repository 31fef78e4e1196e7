(() => {
  window.__alToolbarName = __NAME__;
  if (window.__alChartKeys) { window.__alChartKeys(); return; }
  const BUTTON = "button.modebar-btn";
  const current = new WeakMap();  // toolbar -> the button Tab reaches
  const group = (bar) => {
    const buttons = [...bar.querySelectorAll(BUTTON)];
    if (!buttons.length) return;
    bar.setAttribute("role", "toolbar");
    bar.setAttribute("aria-label", window.__alToolbarName);
    const chosen = buttons.includes(current.get(bar)) ? current.get(bar) : buttons[0];
    buttons.forEach((b) => { b.tabIndex = b === chosen ? 0 : -1; });
  };
  const groupAll = () => document.querySelectorAll(".modebar").forEach(group);
  window.__alChartKeys = groupAll;
  document.addEventListener("focusin", (e) => {
    const button = e.target.closest && e.target.closest(BUTTON);
    const bar = button && button.closest(".modebar");
    if (bar) { current.set(bar, button); group(bar); }
  });
  document.addEventListener("keydown", (e) => {
    const button = e.target.closest && e.target.closest(BUTTON);
    const bar = button && button.closest(".modebar");
    if (!bar) return;
    const buttons = [...bar.querySelectorAll(BUTTON)];
    const i = buttons.indexOf(button);
    const next = { ArrowRight: i + 1, ArrowDown: i + 1, ArrowLeft: i - 1, ArrowUp: i - 1, Home: 0, End: buttons.length - 1 }[e.key];
    if (next === undefined) return;
    e.preventDefault();
    buttons[(next + buttons.length) % buttons.length].focus();
  });
  let queued = false;
  new MutationObserver(() => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; groupAll(); }); }
  }).observe(document.body, { childList: true, subtree: true });
  groupAll();
})();
