(() => {
  if (window.__alNarrowSidebar) return;
  window.__alNarrowSidebar = true;
  const NARROW_PX = __NARROW_PX__;
  const TEXT = '[data-testid="stSidebar"] textarea, [data-testid="stSidebar"] input[type="text"]';
  const collapse = () => document.querySelector('[data-testid="stSidebarCollapseButton"] button');
  const close = () => {
    if (window.innerWidth >= NARROW_PX) return;
    const button = collapse();
    // only while it is open: Streamlit closes it itself on a "mobile" user agent, and the button toggles
    if (button && button.getAttribute("aria-expanded") === "true") button.click();
  };
  const soon = () => setTimeout(close, 150);
  document.addEventListener("click", (e) => {
    if (e.target && e.target.closest && e.target.closest('[data-testid="stSidebarNavLink"]')) soon();
  });
  document.addEventListener("change", (e) => { if (e.target && e.target.matches && e.target.matches(TEXT)) soon(); });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && e.target && e.target.matches && e.target.matches(TEXT)) soon();
  });
})();
