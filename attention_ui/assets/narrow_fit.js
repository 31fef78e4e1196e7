(() => {
  if (window.__alFormulaFit) return;
  window.__alFormulaFit = true;
  const MIN_ZOOM = __MIN_ZOOM__, SLACK_PX = __SLACK_PX__;
  let fitted = new WeakMap();  // box -> [its width, the formula] when last fitted
  const fitOne = (box) => {
    const formula = box.firstElementChild;
    const width = box.clientWidth;
    if (!formula || !width) return;
    const last = fitted.get(box);
    if (last && last[0] === width && last[1] === formula) return;
    formula.style.zoom = "";
    // a few steps, as parts of a formula (struts, rounding to whole pixels) do not scale exactly
    for (let zoom = 1, i = 0; i < 4 && zoom > MIN_ZOOM && box.scrollWidth > width + SLACK_PX; i++) {
      zoom = Math.max(MIN_ZOOM, Math.floor(1000 * zoom * width / box.scrollWidth) / 1000 - 0.005);
      formula.style.zoom = String(zoom);
    }
    fitted.set(box, [width, formula]);
  };
  const FRAME = __FRAME_JS__;
  const scrollers = new WeakMap();  // frame -> the box in it that scrolls sideways
  const scroller = (frame) => {
    let s = scrollers.get(frame);
    if (!s || !frame.contains(s)) {
      s = frame.querySelector(".dvn-scroller")
        || [...frame.querySelectorAll("div")].find((d) => /auto|scroll/.test(getComputedStyle(d).overflowX));
      if (s) scrollers.set(frame, s);
    }
    return s;
  };
  const cue = (frame) => {
    const s = scroller(frame);
    if (!s) return;
    const left = s.scrollLeft > 1, right = s.scrollLeft + s.clientWidth < s.scrollWidth - 1;
    const more = left && right ? "both" : left ? "left" : right ? "right" : "";
    if ((frame.dataset.alMore || "") === more) return;
    if (more) frame.dataset.alMore = more; else delete frame.dataset.alMore;
  };
  document.addEventListener("scroll", (e) => {
    const frame = e.target && e.target.closest && e.target.closest(FRAME);
    if (frame) cue(frame);
  }, { capture: true, passive: true });
  let queued = false;
  const fitAll = () => {
    queued = false;
    document.querySelectorAll(".katex-display").forEach(fitOne);
    document.querySelectorAll(FRAME).forEach(cue);
  };
  const soon = () => { if (!queued) { queued = true; requestAnimationFrame(fitAll); } };
  new MutationObserver(soon).observe(document.body, { childList: true, subtree: true });
  // a table lays its columns out after its frame is drawn, with no change a MutationObserver of the
  // page's structure sees: the (few) frames are looked at again twice a second
  setInterval(() => document.querySelectorAll(FRAME).forEach(cue), 500);
  window.addEventListener("resize", soon);
  if (document.fonts) document.fonts.addEventListener("loadingdone", () => { fitted = new WeakMap(); soon(); });
  soon();
})();
