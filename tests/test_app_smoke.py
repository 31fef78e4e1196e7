"""Every page of the app loads without an exception, in both languages.

Pages are discovered, not listed: every page of the navigation (attention_ui/nav.py, which app.py builds
its pages from) plus every file in ``app_pages/``, so a new page is covered the moment it lands.
"""

from __future__ import annotations

from pathlib import Path

import ja_text_rules
import pytest

from attention_ui import nav
from tests.apptest_pages import APP as APP_FILE
from tests.apptest_pages import ROOT, chart_label_problems, charts, open_page

APP = Path(APP_FILE)


def discover_pages() -> list[str]:
    named = {p.script for p in nav.PAGES}
    on_disk = {f"app_pages/{p.name}" for p in (ROOT / "app_pages").glob("*.py") if not p.name.startswith("_")}
    return sorted(p for p in named | on_disk if (ROOT / p).exists())


PAGES = discover_pages()


def test_discovery_finds_the_playground():
    assert "app_pages/playground.py" in PAGES


def test_no_pages_folder_next_to_app_py():
    """A ``pages/`` folder beside app.py makes Streamlit start each server in its legacy multipage mode:
    the first visitor sees the folder's file list and a "Page not found" dialog on a lab's link."""
    assert not (ROOT / "pages").exists()


def test_every_page_file_is_in_the_navigation():
    """A page file that the navigation (attention_ui/nav.py) does not list would be unreachable."""
    named = {p.script for p in nav.PAGES}
    assert set(PAGES) <= named


# The pages with a model choice, and the session key that holds it: each loads with every model below
# (its default model in each language is already among test_page_loads's runs).
MODEL_CHOICES = {"app_pages/decoder.py": "decoder_model", "app_pages/heads.py": "heads_model"}
OTHER_MODEL = {"en": "gemma3", "ja": "smollm2"}  # both pages open on SmolLM2 in English, Gemma in Japanese


def assert_charts_readable(at, where: str) -> None:
    """Every chart's tick labels and hover text are words, not blanks (see chart_label_problems)."""
    bad = {key: found for key, fig in charts(at).items() if (found := chart_label_problems(fig))}
    assert not bad, f"{where}: unreadable chart labels {bad}"


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("page", PAGES)
def test_page_loads(page: str, lang: str):
    at = open_page(page, lang=lang, check=False)
    assert not at.exception, f"{page} ({lang}): {at.exception}"
    assert at.title or at.header, f"{page} ({lang}) shows no title"
    assert_charts_readable(at, f"{page} ({lang})")
    if lang == "ja":  # no English inside the LaTeX a Japanese page renders (\text{...}, \mathrm{...})
        bodies = [el.value for kind in ("latex", "markdown", "caption") for el in getattr(at, kind)]
        english = [p for body in bodies for p in ja_text_rules.latin_problems(body) if "LaTeX" in p]
        assert not english, f"{page}: {english}"


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("page", sorted(MODEL_CHOICES))
def test_model_pages_have_readable_charts_with_the_other_model(page: str, lang: str):
    """The model a page does not open on in this language, chosen by the learner: its charts too."""
    other = OTHER_MODEL[lang]
    at = open_page(page, lang=lang, **{MODEL_CHOICES[page]: other})
    assert at.session_state[MODEL_CHOICES[page]] == other
    assert_charts_readable(at, f"{page} ({lang}, {other})")
