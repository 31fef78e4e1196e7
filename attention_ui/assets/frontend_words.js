(() => {
  window.__alWords = __WORDS__;
  if (window.__alFrontendWords) { window.__alFrontendWords(); return; }
  const ATTRIBUTES = __ATTRIBUTES__, TEXT = __TEXT__;
  const SELECTOR = ATTRIBUTES.map((a) => "[" + a + "]").join(",");
  const originals = new WeakMap();  // element -> {name: [Streamlit's value, the value shown]}
  const say = (english) => {
    const words = window.__alWords;
    if (Object.prototype.hasOwnProperty.call(words.exact, english)) return words.exact[english];
    for (const [source, template] of words.patterns) {
      const m = english.match(new RegExp(source));
      if (m) return template.split("{label}").join(m[1]);
    }
    return english;
  };
  // name: an attribute, or "" for the element's text (the text of its one text node)
  const put = (el, name) => {
    const node = name ? null : el.firstChild;
    if (!name && (!node || node.nodeType !== 3 || el.childNodes.length !== 1)) return;
    const now = name ? el.getAttribute(name) : node.nodeValue;
    if (now === null) return;
    const seen = originals.get(el) || {};
    const kept = seen[name];
    const english = kept && now === kept[1] ? kept[0] : now;  // else Streamlit wrote it anew
    const shown = say(english);
    seen[name] = [english, shown];
    originals.set(el, seen);
    if (now !== shown) { if (name) el.setAttribute(name, shown); else node.nodeValue = shown; }
  };
  const all = () => {
    for (const el of document.querySelectorAll(SELECTOR))
      for (const name of ATTRIBUTES) if (el.hasAttribute(name)) put(el, name);
    for (const el of document.querySelectorAll(TEXT)) put(el, "");
  };
  window.__alFrontendWords = all;
  let queued = false;
  const soon = () => { if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; all(); }); } };
  new MutationObserver(soon).observe(document.body, {
    childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: ATTRIBUTES,
  });
  all();
})();
