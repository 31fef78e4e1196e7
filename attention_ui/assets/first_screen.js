(() => {
  const started = performance.now();
  const PENDING = ".st-key-__PENDING__";
  // Streamlit rewrites the address (its query) before this runs and drops the fragment; the page's
  // navigation entry keeps the address it was opened at (used only while the path is still that one).
  let wanted = "";
  try {
    const nav = performance.getEntriesByType("navigation")[0];
    const opened = new URL(nav ? nav.name : window.location.href);
    const hash = window.location.hash || (opened.pathname === window.location.pathname ? opened.hash : "");
    wanted = decodeURIComponent(hash.slice(1));
  } catch (e) { wanted = ""; }
  const follow = (id) => {
    let placed = 0, stopped = false;
    const stop = () => { stopped = true; };
    for (const kind of ["wheel", "touchstart", "keydown", "mousedown"])
      window.addEventListener(kind, stop, { once: true, capture: true, passive: true });
    const look = setInterval(() => {
      const el = document.getElementById(id);
      if (stopped || performance.now() - started > 20000 || (placed && performance.now() - placed > 3000)) {
        clearInterval(look); return;
      }
      if (!el || document.querySelector(PENDING)) return;
      const header = document.querySelector('[data-testid="stHeader"]');
      const top = header ? header.getBoundingClientRect().bottom : 0;
      const off = el.getBoundingClientRect().top - top;
      if (!placed || Math.abs(off) > 4) {
        el.style.scrollMarginTop = top + "px";
        el.scrollIntoView({ block: "start" });
      }
      if (!placed) placed = performance.now();
    }, 50);
  };
  const tick = setInterval(() => {
    const button = document.querySelector(PENDING + " button");
    if (!button) { if (performance.now() - started > 15000) clearInterval(tick); return; }
    const drawn = document.querySelector('[data-testid="stMain"] .js-plotly-plot .mlayer > *');
    if (!wanted && !drawn && performance.now() - started < 8000) return;
    clearInterval(tick);
    if (button.dataset.alClicked) return;
    button.dataset.alClicked = "1";
    requestAnimationFrame(() => requestAnimationFrame(() => button.click()));
    if (wanted) follow(wanted);
  }, 50);
})();
