"""The hostile input corpus typed into every sentence box of the app (AppTest).

For each page with a text box and each hostile text: no uncaught exception; refused text gets an
error, cut text a warning; whatever reaches Plotly has no markup left in it; Markdown shown on the
page carries no live link, maths or directive made from the user's text. On the playground the
tokens are also read back from the token chips, the tick labels, the hover data and the tables and
compared with the tokenizer's tokens.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from attention_core import tokenize
from attention_core.models import smollm2
from attention_ui.kit import CHIP_MAX_TOKENS
from tests.apptest_pages import chart_spec, charts, messages, open_page

ROOT = Path(__file__).resolve().parent.parent
CORPUS = json.loads((ROOT / "tests" / "data" / "hostile_inputs.json").read_text(encoding="utf-8"))
TEXTS = CORPUS["texts"]
BY_ID = {e["id"]: e for e in TEXTS}

# (page file, widget kind, widget key) for every free-text box in the app.
TEXT_BOXES = [
    ("app_pages/playground.py", "text_area", "pg_text"),
    ("app_pages/masks.py", "text_area", "masks_text"),
    ("app_pages/masks.py", "text_input", "masks_replacement"),
    ("app_pages/multihead.py", "text_area", "multihead_text"),
    ("app_pages/lookalikes.py", "text_input", "lookalikes_text_a"),
    ("app_pages/lookalikes.py", "text_input", "lookalikes_text_b"),
    ("app_pages/scaling.py", "text_input", "scaling_row"),
    ("app_pages/positions.py", "text_area", "positions_text"),
    ("app_pages/inference.py", "text_area", "inference_text"),
    ("app_pages/cost.py", "text_area", "cost_text"),
    ("app_pages/block.py", "text_area", "block_text"),
    # the decoder page draws its sentence only with the optional model installed
    *([("app_pages/decoder.py", "text_area", "decoder_text")] if smollm2.is_available() else []),
]

# The lab pages get a cross-section of the corpus (every kind of hostility once); the playground,
# the main page, gets all of it below. Each AppTest rerun of a lab costs about a second.
LAB_TEXT_IDS = (
    "empty",
    "blank",
    "chars_25000",
    "tokens_1000",
    "one_token_5000",
    "emoji_zwj",
    "arabic_hebrew",
    "control_nul",
    "zero_width",
    "img_pwned",
    "plotly_link",
    "markdown",
    "latex",
    "streamlit_directives",
)

# Markup Plotly would act on (the app's own templates use only <br>, <b>, <sub> and <extra>), and Markdown that would make a link, maths or a directive out of user text.
PLOTLY_MARKUP = re.compile(r"<\s*/?\s*(script|img|a|span|sup|i|s|u|em|iframe|svg)\b|javascript:\S*\"", re.I)
MD_LIVE = re.compile(
    r"(?<!\\)\]\((?:javascript|https?):|(?<!\\)\$\\href|(?<!\\)<script|(?<!\\):red\[|(?<!\\)\*\*x"
)


def strings(obj) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in strings(v)]
    return []


def assert_nothing_live(at: AppTest, where: str) -> None:
    for fig in charts(at).values():
        for s in strings(fig):
            assert not PLOTLY_MARKUP.search(s), (where, s[:200])
    for md in at.markdown:
        assert not MD_LIVE.search(md.value), (where, md.value[:300])


def type_text(at: AppTest, kind: str, key: str, text: str) -> None:
    getattr(at, kind)(key=key).input(text)
    at.run()


@pytest.mark.parametrize(("page", "kind", "key"), TEXT_BOXES, ids=[k for _, _, k in TEXT_BOXES])
def test_every_text_box_survives_the_corpus(page: str, kind: str, key: str) -> None:
    at = open_page(page)
    for entry in (BY_ID[i] for i in LAB_TEXT_IDS):
        type_text(at, kind, key, entry["text"])
        where = f"{page} {key} <- {entry['id']}"
        assert not at.exception, (where, at.exception)
        msgs = messages(at)
        if entry["expect"]["refused"] and key not in ("masks_replacement",):
            assert msgs["error"], (where, "empty text must be refused with a message")
        if entry["expect"]["truncated"] and key in (
            "pg_text",
            "masks_text",
            "multihead_text",
            "lookalikes_text_a",
            "lookalikes_text_b",
            "positions_text",
            "inference_text",
            "cost_text",
            "block_text",
            "decoder_text",
        ):
            assert msgs["warning"], (where, "cut text must be announced", msgs)
        assert_nothing_live(at, where)


# --- the playground in detail ---------------------------------------------------------------------

MD_PUNCT = set("\\`*_{}[]()#+-.!|<>~$:&\"'=^")


def unescape_markdown(s: str) -> str:
    """Drop the backslash in front of escaped characters; fail on any special character left bare."""
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append(s[i + 1])
            i += 2
            continue
        assert s[i] not in "`*_[]$<>:\\", f"unescaped {s[i]!r} in chip text {s!r}"
        out.append(s[i])
        i += 1
    return "".join(out)


def chip_tokens(at: AppTest, expected: list[str]) -> list[str]:
    """The tokens written in the ':blue-badge[i · token]' chips, unescaped; a long sentence is one
    plain st.text line instead, which must spell every token literally."""
    chips_md = [m.value for m in at.markdown if m.value.startswith((":blue-badge[", ":gray-badge["))]
    if len(expected) > CHIP_MAX_TOKENS:
        assert not chips_md, "no chips for a long sentence"
        # the first plain text is the token line; later ones (the course files' echo of the
        # sentence, further down the page) are the sentence itself, not tokens
        plain = [el.value for el in at.text]
        assert plain and plain[0] == " · ".join(f"{i} {tok}" for i, tok in enumerate(expected)), plain[:1]
        return expected
    assert len(chips_md) == 1, "one line of token chips"
    chips = re.split(r" (?=:(?:blue|gray)-badge\[\d+ · )", chips_md[0])
    tokens = []
    for i, chip in enumerate(chips):
        m = re.fullmatch(r":(?:blue|gray)-badge\[(\d+) · (.*)\]", chip, flags=re.S)
        assert m and int(m.group(1)) == i, chip
        tokens.append(unescape_markdown(m.group(2)))
    return tokens


PLAYGROUND_IDS = [e["id"] for e in TEXTS if not e["expect"]["refused"]]


@pytest.fixture(scope="module")
def playground() -> AppTest:
    at = open_page("app_pages/playground.py")
    at.toggle(key="pg_tables").set_value(True)
    at.run()
    return at


@pytest.mark.parametrize("text_id", PLAYGROUND_IDS)
def test_playground_shows_hostile_tokens_literally(playground: AppTest, text_id: str) -> None:
    at = playground
    entry = BY_ID[text_id]
    type_text(at, "text_area", "pg_text", entry["text"])
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    expected = list(tokenize(entry["text"], max_tokens=64).tokens)
    msgs = messages(at)
    if entry["expect"]["truncated"]:
        assert any(str(len(expected)) in w for w in msgs["warning"]), msgs
    if entry["expect"]["chars_cut"]:
        assert any(
            f"{len(entry['text']) - 20_000:,}" in w or str(len(entry["text"]) - 20_000) in w
            for w in msgs["warning"]
        ), msgs
    if entry["expect"]["removed_controls"]:
        assert msgs["info"], msgs
    # token chips
    assert chip_tokens(at, expected) == expected
    # tick labels and hover of the attention-weight map
    fig = chart_spec(at, "pg_chart_weights")
    y = fig["layout"]["yaxis"]
    for val, text in zip(y["tickvals"], y["ticktext"], strict=True):
        assert "<" not in text and ">" not in text, text
        label = html.unescape(text)
        tok = expected[val]
        assert label == tok or (label.endswith("…") and tok.startswith(label[:-1])), (val, text, tok)
    hover = [html.unescape(row[0][0]) for row in fig["data"][0]["customdata"]]
    assert hover == [f"#{i} {tok}" for i, tok in enumerate(expected)]
    # tables: the labels are plain text "<position> <token>", shown by st.dataframe as text
    frame = at.dataframe[-1].value
    assert list(frame.index) == [f"{i} {tok}" for i, tok in enumerate(expected)]
    assert_nothing_live(at, text_id)


def test_playground_config_extremes() -> None:
    at = open_page("app_pages/playground.py")
    # heads > d_model with automatic d_k: refused with the divisibility message, no chart
    at.number_input(key="pg_d_model").set_value(4)
    at.number_input(key="pg_heads").set_value(8)
    at.run()
    assert not at.exception and at.error and not at.get("plotly_chart")
    # heads > d_model with d_k = d_v = 1 by hand: a valid setting that runs
    at.toggle(key="pg_auto_dims").set_value(False)
    at.run()
    at.number_input(key="pg_d_k").set_value(1)
    at.number_input(key="pg_d_v").set_value(1)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    weights = chart_spec(at, "pg_chart_weights")
    assert len(weights["data"][0]["z"]) == 6
    # the largest seed the widget allows
    at.number_input(key="pg_seed").set_value(2**31 - 1)
    at.run()
    assert not at.exception and not at.error
    # out-of-range values forced into the session (as old state could): no crash, and the value the
    # page works with is back inside the widget's range (Streamlit 1.67 clamps) or an error says why
    ranges = {"pg_seed": (0, 2**31 - 1), "pg_d_model": (1, 256), "pg_pad": (0, 16), "pg_heads": (1, 16)}
    for key, value in (
        ("pg_seed", -5),
        ("pg_seed", 10**30),
        ("pg_d_model", 0),
        ("pg_pad", -1),
        ("pg_heads", 10**9),
    ):
        at.session_state[key] = value
        at.run()
        assert not at.exception, (key, value, at.exception)
        lo, hi = ranges[key]
        assert lo <= at.number_input(key=key).value <= hi or at.error, (key, value)
        at.session_state[key] = {"pg_seed": 0, "pg_d_model": 16, "pg_pad": 0, "pg_heads": 2}[key]


# --- malformed query strings (the playground keeps its view in the URL: attention_ui/playground/url_state.py) --

QUERIES = CORPUS["query_strings"]


@pytest.mark.parametrize("entry", QUERIES, ids=[q["id"] for q in QUERIES])
def test_playground_survives_malformed_query_strings(entry: dict) -> None:
    from urllib.parse import parse_qs

    params = parse_qs(entry["query"].lstrip("?"), keep_blank_values=True)
    at = open_page(
        params={key: v if len(v) > 1 else v[0] for key, v in params.items()}, lang=None, check=False
    )
    where = f"query {entry['id']}"
    assert not at.exception, (where, at.exception)
    # the page still draws (bad values fall back to defaults) unless the text itself is refused
    assert at.get("plotly_chart") or at.error, where
    for msg in [*at.warning, *at.info, *at.error]:
        assert not MD_LIVE.search(msg.value), (where, msg.value)
        assert not re.search(r"(?<!\\)\]\(|(?<!\\)\$\\href|(?<!\\)\*\*b", msg.value), (where, msg.value)
    assert_nothing_live(at, where)
    if entry["id"] == "hostile_text":
        # a sentence from the URL is shown like a typed one: split into literal tokens
        expected = list(tokenize('<img src=x onerror="window.__pwned=1">').tokens)
        assert chip_tokens(at, expected) == expected
