(() => {
  if (window.__alClassWatchdog) return;
  const counts = (window.__alClassWatchdog = { resyncs: 0, quiet: 0, mismatch: 0 });
  const quietMs = __QUIET__ * 1000, mismatchMs = __MISMATCH__ * 1000;
  let lastAsk = performance.now(), lastClick = -Infinity, mismatchSince = null;
  // Each tick of the watcher's timer sends the server a rerun request (a few hundred bytes; the
  // connection's heartbeat is a few bytes): note when the page last asked.
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if ((data.byteLength ?? data.size ?? data.length ?? 0) > __ASK_BYTES__) lastAsk = performance.now();
    return send.call(this, data);
  };
  const marker = (prefix) => {
    const el = document.querySelector('[class*="st-key-' + prefix + '"]');
    const name = el && [...el.classList].find((c) => c.startsWith("st-key-" + prefix));
    return name ? name.slice(("st-key-" + prefix).length) : null;
  };
  const stepShown = () => {  // "step 4 of 11" / "ステップ 4 / 11": the teacher's step, as drawn
    const text = [...document.querySelectorAll('[data-testid="stCaptionContainer"]')].map((e) => e.innerText);
    const m = text.join(" ").match(/(\d+) of \d+|(\d+) \/ \d+/);
    return m ? m[1] || m[2] : null;
  };
  setInterval(() => {
    const now = performance.now();
    const app = document.querySelector('[data-testid="stApp"]');
    const button = document.querySelector(".st-key-__BOX___now button");
    if (!app || !button || app.getAttribute("data-test-connection-state") !== "CONNECTED") {
      lastAsk = now;  // not a following page, or not connected: nothing to watch
      mismatchSince = null;
      return;
    }
    if (app.getAttribute("data-test-script-state") !== "notRunning") return;  // in a run: wait
    // The page's DRAWN marker against the watcher's EXPECT one; without a DRAWN marker (seen under
    // load on pages that showed the right step, cause unknown), the step its caption shows.
    const [expected, expectedStep] = (marker("__EXPECT__") || "").split("_step");
    const drawn = marker("__DRAWN__"), shown = stepShown();
    const wrong = expected && (drawn !== null ? drawn !== expected : shown !== null && shown !== expectedStep);
    if (!wrong) mismatchSince = null;
    else if (mismatchSince === null) mismatchSince = now;
    const lost = mismatchSince !== null && now - mismatchSince >= mismatchMs;
    if ((now - lastAsk < quietMs && !lost) || now - lastClick < quietMs) return;
    lastClick = lastAsk = now;
    mismatchSince = null;
    counts.resyncs += 1;
    counts[lost ? "mismatch" : "quiet"] += 1;
    if (lost) counts.states = [...(counts.states || []), [expected, drawn, expectedStep, shown]].slice(-5);
    button.click();
  }, 1000);
})();
