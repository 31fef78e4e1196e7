"""attention_ui/nav.py: the navigation as data. Every page has its script and its title in each
language, and the URLs people linked to before the pages took one name keep reaching their page."""

from __future__ import annotations

import json
from pathlib import Path

from attention_ui import nav

ROOT = Path(__file__).resolve().parent.parent

# Every URL path app.py served before the pages took one name (main at a05c9b4), with the page (script
# stem) it opened then, as it is called now. A rename that drops or re-points one of them fails here;
# tests/browser/test_deep_links.py opens them in a browser, query string included.
URLS_BEFORE = {
    "start": "playground", "playground": "playground", "": "playground",
    "why-sqrt-dk": "scaling", "why_sqrt_dk": "scaling", "masks": "masks", "multi-head": "multihead",
    "multi_head": "multihead", "cost": "cost", "block": "block", "lookalikes": "lookalikes",
    "positions": "positions", "inference": "inference", "quiz": "quiz", "decoder": "decoder",
    "heads": "heads", "training": "training", "path": "path", "worksheet": "worksheet",
    "code_check": "codecheck", "class_teach": "class_teach", "class_join": "class_join",
}  # fmt: skip


def test_every_old_url_still_opens_its_page() -> None:
    served = nav.served()  # URL path -> page (script stem), what app.py builds its navigation from
    assert {url: served.get(url) for url in URLS_BEFORE} == URLS_BEFORE


def test_a_dropped_old_url_is_caught(monkeypatch) -> None:
    kept = {old: new for old, new in nav.OLD_URL_PATHS.items() if old != "why_sqrt_dk"}
    assert "why_sqrt_dk" in nav.served() and kept != nav.OLD_URL_PATHS
    monkeypatch.setattr(nav, "OLD_URL_PATHS", kept)
    assert "why_sqrt_dk" not in nav.served()


def test_every_page_of_the_navigation_has_its_script_and_its_title_in_each_language() -> None:
    """A page's script and title key follow from its one name (attention_ui/nav.py)."""
    for p in nav.PAGES:
        assert (ROOT / p.script).is_file(), p
        for lang in ("en", "ja"):
            catalog = json.loads((ROOT / "attention_ui" / "locales" / lang / "app.json").read_text("utf-8"))
            assert catalog.get(p.title_key.removeprefix("app.")), (lang, p.title_key)
    assert len({p.name for p in nav.PAGES}) == len({p.url_path for p in nav.PAGES}) == len(nav.PAGES)


def test_every_redirect_leads_to_a_page_app_py_can_switch_to() -> None:
    """app.py switches an old URL to a lab's or a practice page's URL, or to "/" (the playground)."""
    targets = {p.url_path for p in (*nav.LABS, *nav.PRACTICE)} | {""}
    assert set(nav.redirects().values()) <= targets, nav.redirects()
