(() => {
  if (window.__alPanelWatchdog) return;
  const state = (window.__alPanelWatchdog = { down: 0, reloading: false });
  const afterMs = __AFTER__ * 1000, everyMs = __EVERY__ * 1000, storeKey = "alPanelReloadAt";
  let downSince = null;
  setInterval(async () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute("data-test-connection-state") === "CONNECTED") {
      downSince = null;
      return;
    }
    const now = Date.now();
    if (downSince === null) downSince = now;
    state.down = now - downSince;
    if (state.reloading || now - downSince < afterMs) return;
    if (now - Number(sessionStorage.getItem(storeKey) || 0) < everyMs) return;
    try {
      const answer = await fetch(__HEALTH__, { cache: "no-store" });
      if (!answer.ok) return;
    } catch (err) {
      return;  // the server is down: Streamlit's own retries reconnect when it is back
    }
    state.reloading = true;
    sessionStorage.setItem(storeKey, String(now));
    location.reload();
  }, 1000);
})();
