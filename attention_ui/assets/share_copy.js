(() => {
  for (const button of document.querySelectorAll(".al-copy-link")) {
    if (button.dataset.ready) continue;
    button.dataset.ready = "1";
    const status = button.parentElement.querySelector(".al-copy-status");
    const fallback = (text) => {
      const box = document.createElement("textarea");
      box.value = text; box.setAttribute("readonly", ""); box.style.position = "fixed"; box.style.opacity = "0";
      document.body.appendChild(box); box.select();
      let ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      box.remove();
      return ok;
    };
    button.addEventListener("click", async () => {
      const url = window.location.href;
      let ok = false;
      try { await navigator.clipboard.writeText(url); ok = true; } catch (e) { ok = fallback(url); }
      status.textContent = ok ? button.dataset.done : button.dataset.failed;
    });
  }
})();
