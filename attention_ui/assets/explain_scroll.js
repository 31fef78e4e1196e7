(() => {
  const CLICK = __CLICK__, PANEL = ".st-key-pg___PANEL___panel";
  let tries = 0;
  const go = () => {
    const el = document.querySelector(PANEL);
    if (!el) { if (++tries < 80) setTimeout(go, 50); return; }
    el.setAttribute("tabindex", "-1");
    el.style.scrollMarginTop = "4.5rem";  // below the app's fixed header
    el.scrollIntoView({ block: "start" });
    el.focus({ preventScroll: true });
  };
  setTimeout(go, 0);
})();
