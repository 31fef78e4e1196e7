(() => {
  const data = JSON.parse(document.getElementById("al-quiz").textContent);
  const status = document.getElementById("al-status");
  const find = (win) => {
    for (let tries = 0; win && tries < 10; tries++) {
      try { if (win.API) return win.API; } catch (e) { return null; }
      if (!win.parent || win.parent === win) break;
      win = win.parent;
    }
    return null;
  };
  let api = find(window);
  try { if (!api && window.opener) api = find(window.opener); } catch (e) { api = null; }
  const start = Date.now();
  let open = false;
  if (api) open = String(api.LMSInitialize("")) === "true";
  if (!open) { status.textContent = data.texts.no_platform; status.hidden = false; }
  const get = (name) => (open ? String(api.LMSGetValue(name) || "") : "");
  const set = (name, value) => { if (open) api.LMSSetValue(name, String(value)); };
  const commit = () => { if (open) api.LMSCommit(""); };
  const timespan = (ms) => {
    const cs = Math.floor(ms / 10), s = Math.floor(cs / 100), pad = (v, n) => String(v).padStart(n, "0");
    return `${pad(Math.floor(s / 3600), 4)}:${pad(Math.floor(s / 60) % 60, 2)}:${pad(s % 60, 2)}.${pad(cs % 100, 2)}`;
  };
  let state = { a: {}, s: 0 };
  try { const saved = JSON.parse(get("cmi.suspend_data") || "{}"); if (saved && saved.a) state = saved; } catch (e) {}
  if (get("cmi.core.lesson_status") === "not attempted" || get("cmi.core.lesson_status") === "") set("cmi.core.lesson_status", "incomplete");
  const boxes = [...document.querySelectorAll("fieldset.question")];
  const save = () => { set("cmi.suspend_data", JSON.stringify(state)); commit(); };
  const show = () => {
    let right = 0;
    boxes.forEach((box, q) => {
      const chosen = state.a[q];
      const ok = chosen === data.correct[q];
      if (ok) right += 1;
      for (const input of box.querySelectorAll("input")) input.disabled = true;
      const mark = box.querySelector(".mark");
      mark.textContent = ok ? data.texts.right : data.texts.wrong[q];
      mark.className = "mark " + (ok ? "right" : "wrong");
      mark.hidden = false;
      const fb = box.querySelector(`.feedback[data-choice="${chosen}"]`);
      if (fb) fb.hidden = false;
    });
    const percent = Math.round((100 * right) / boxes.length);
    const result = document.getElementById("al-result");
    result.textContent = data.texts.score.replace("{correct}", right).replace("{total}", boxes.length)
      .replace("{percent}", percent).replace("{pass_mark}", data.passMark) + " " + (percent >= data.passMark ? data.texts.passed : data.texts.failed);
    result.hidden = false;
    return percent;
  };
  boxes.forEach((box, q) => {
    for (const input of box.querySelectorAll("input")) {
      if (state.a[q] === Number(input.value)) input.checked = true;
      input.addEventListener("change", () => { state.a[q] = Number(input.value); save(); });
    }
  });
  const finish = () => {
    if (!open) return;
    set("cmi.core.session_time", timespan(Date.now() - start));
    set("cmi.core.exit", state.s ? "" : "suspend");
    commit();
    api.LMSFinish("");
    open = false;
  };
  document.getElementById("al-submit").addEventListener("click", () => {
    const missing = boxes.filter((_, q) => state.a[q] === undefined).length;
    const warn = document.getElementById("al-missing");
    if (missing) { warn.textContent = data.texts.unanswered.replace("{count}", missing); warn.hidden = false; return; }
    warn.hidden = true;
    state.s = 1;
    const percent = show();
    set("cmi.core.score.min", 0);
    set("cmi.core.score.max", 100);
    set("cmi.core.score.raw", percent);
    set("cmi.core.lesson_status", percent >= data.passMark ? "passed" : "failed");
    set("cmi.core.session_time", timespan(Date.now() - start));
    set("cmi.core.exit", "");
    save();
    document.getElementById("al-submit").disabled = true;
  });
  if (state.s) { show(); document.getElementById("al-submit").disabled = true; }
  window.addEventListener("pagehide", finish);
  window.addEventListener("beforeunload", finish);
  document.body.dataset.ready = open ? "lms" : "alone";
})();
