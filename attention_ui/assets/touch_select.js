(() => {
  if (window.__alTouchSelect) return;
  window.__alTouchSelect = true;
  document.addEventListener("touchstart", (e) => {
    if (e.touches.length !== 1 || !e.target || !e.target.closest) return;
    const drag = e.target.closest(".js-plotly-plot .nsewdrag");
    const gd = drag && drag.closest(".js-plotly-plot");
    const mode = gd && gd._fullLayout && gd._fullLayout.clickmode;
    if (!mode || mode.indexOf("select") < 0) return;
    const touch = e.touches[0];
    drag.dispatchEvent(new MouseEvent("mousemove", {
      bubbles: true, cancelable: true, view: window, clientX: touch.clientX, clientY: touch.clientY,
    }));
  }, { capture: true, passive: true });
})();
