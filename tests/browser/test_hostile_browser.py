"""Hostile sentences typed into the playground in Chromium: shown literally, never run, never linked.

One page load; the browser-relevant entries of tests/data/hostile_inputs.json are typed in five
batches (each batch is one sentence of several payloads, at most 64 tokens so nothing is cut). After
each batch: no dialog opened, ``window.__pwned`` (set by the payloads' handlers if they ever ran) is
still undefined, no <img> from user text exists, no <a> with a javascript: or user-supplied href
exists, and the tokens appear literally in the token chips and the weight map's SVG tick labels.
"""

from __future__ import annotations

import json
import math

import pytest
from playwright.sync_api import Page
from st_browser import (
    PLOTLY_CHART,
    ROOT,
    assert_no_exception,
    screenshot,
    tick_labels,
    wait_for_app_run,
    wait_for_charts,
)

from attention_core import tokenize
from attention_ui.kit import CHIP_MAX_TOKENS

pytestmark = pytest.mark.browser

CORPUS = json.loads((ROOT / "tests" / "data" / "hostile_inputs.json").read_text(encoding="utf-8"))
BY_ID = {e["id"]: e["text"] for e in CORPUS["texts"]}
BATCHES = [
    ("script_tag", "img_pwned", "img_onerror"),
    ("plotly_link",),
    ("plotly_pseudo_html", "html_entities"),
    ("markdown", "latex"),
    ("emoji_zwj", "arabic_hebrew", "streamlit_directives", "one_token_5000", "mixed_everything"),
]
LABEL_MAX = 10  # tick labels longer than this end in "…" (hover and chips keep the whole token)
TICK_MAX = 32  # beyond this many tokens only every k-th tick is labelled

DOM_PROBE = """() => ({
  pwned: typeof window.__pwned,
  imgs: [...document.querySelectorAll('img')].map(i => i.getAttribute('src') || '').filter(s => s === 'x'),
  handlers: document.querySelectorAll('[onerror], [onload]:not(body):not(iframe):not(script)').length,
  links: [...document.querySelectorAll('a')].map(a => a.getAttribute('href') || a.getAttribute('xlink:href') || ''),
  svgLinks: document.querySelectorAll('.js-plotly-plot a').length,
})"""


SLOW_MS = 120_000  # the shared CI machine can be very busy; a slow page is not what this file tests


def open_playground(page: Page, url: str) -> None:
    response = page.goto(url)
    assert response is not None and response.ok, f"GET answered {response and response.status}"
    wait_for_app_run(page, timeout_ms=SLOW_MS)
    wait_for_charts(page, minimum=2, timeout_ms=SLOW_MS)


def expected_ticks(tokens: list[str]) -> list[str]:
    step = max(1, math.ceil(len(tokens) / TICK_MAX))
    shown = [tokens[i] for i in range(0, len(tokens), step)]
    return [t if len(t) <= LABEL_MAX else t[: LABEL_MAX - 1] + "…" for t in shown]


@pytest.mark.timeout(900)  # five reruns; about 30 s on an idle machine, far more on a loaded CI box
def test_hostile_sentences_are_shown_literally_and_never_run(page: Page, streamlit_server: str) -> None:
    app = page
    dialogs: list[str] = []
    app.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_playground(app, streamlit_server + "/")
    box = app.locator('[data-testid="stMain"] .st-key-pg_text textarea')
    base_links = set(app.evaluate(DOM_PROBE)["links"])
    for batch in BATCHES:
        sentence = " ".join(BY_ID[i] for i in batch)
        tokens = list(tokenize(sentence).tokens)
        assert tokenize(sentence).total_tokens == len(tokens) <= 64, batch
        print(f"batch {batch}: {len(tokens)} tokens", flush=True)
        box.fill(sentence)
        box.press("Control+Enter")
        wait_for_app_run(app, timeout_ms=SLOW_MS)
        weights = app.locator(f".st-key-pg_chart_weights {PLOTLY_CHART}")
        weights.wait_for(timeout=SLOW_MS)
        app.wait_for_function(
            "(n) => document.querySelectorAll('.st-key-pg_chart_weights g.ytick').length === n",
            arg=len(expected_ticks(tokens)),
            timeout=SLOW_MS,
        )
        assert_no_exception(app)
        assert dialogs == [], (batch, dialogs)
        probe = app.evaluate(DOM_PROBE)
        assert probe["pwned"] == "undefined", batch
        assert probe["imgs"] == [] and probe["handlers"] == 0, (batch, probe)
        assert probe["svgLinks"] == 0, batch
        new_links = set(probe["links"]) - base_links
        assert not [h for h in probe["links"] if h.strip().lower().startswith(("javascript:", "data:"))], (
            probe
        )
        assert not [h for h in new_links if "example.com" in h or h in sentence], (batch, new_links)
        # the tokens, literally, in the weight map's tick labels ...
        assert tick_labels(weights, "y") == expected_ticks(tokens), batch
        # ... and in the token chips ("i · token"), or for a long sentence the plain token line ("i token · ")
        if len(tokens) > CHIP_MAX_TOKENS:
            text = app.locator('[data-testid="stMain"] [data-testid="stText"]').first.inner_text(
                timeout=SLOW_MS
            )
            shown = [f"{i} {tok}" for i, tok in enumerate(tokens)]
        else:
            chips = app.locator('[data-testid="stMain"] [data-testid="stMarkdownContainer"]').filter(
                has_text="0 · "
            )
            text = chips.first.inner_text(timeout=SLOW_MS)
            shown = [f"{i} · {tok}" for i, tok in enumerate(tokens)]
        for i, item in enumerate(shown):
            assert item in text, (batch, i, item, text[:300])
    screenshot(app, "hostile_last_batch", full=False)


def test_malformed_query_string_is_ignored_or_shown_literally(page: Page, streamlit_server: str) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    q = next(e["query"] for e in CORPUS["query_strings"] if e["id"] == "hostile_text")
    noise = next(e["query"] for e in CORPUS["query_strings"] if e["id"] == "bad_numbers")
    open_playground(page, streamlit_server + "/" + q + "&" + noise.lstrip("?"))
    assert_no_exception(page)
    assert dialogs == []
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator("img[src='x']").count() == 0
