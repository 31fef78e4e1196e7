"""Issue 24, points 1-3 through AppTest: a shared link's sentence goes on into the labs; the decoder,
the look-alikes lab's first sentence and the cost lab's linear-attention sentence start from the
learner's sentence (their own only when there is none) and say which; the receiver's language wins
over the link's, with the same numbers."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.models import gemma3, smollm2
from attention_ui.i18n import translate
from tests.apptest_pages import charts, no_exception, open_page, z

SENTENCES = {"en": "hello world again today", "ja": "先生の文がラボに届く"}
LABS = {  # page -> its sentence box, and whether it is a text area (else a text input)
    "app_pages/masks.py": "masks_text",
    "app_pages/lookalikes.py": "lookalikes_text_a",
    "app_pages/cost.py": "cost_text",
    "app_pages/block.py": "block_text",
}


def go(at: AppTest, page: str) -> AppTest:
    """The learner clicks ``page`` in the sidebar: Streamlit's navigation drops the query string."""
    at.query_params.clear()
    at.switch_page(page).run()
    no_exception(at)
    return at


def box(at: AppTest, key: str):
    found = [w for w in (*at.text_area, *at.text_input) if w.key == key]
    assert found, f"no sentence box {key}"
    return found[0]


def captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_shared_links_sentence_goes_on_into_the_labs(lang):
    sentence = SENTENCES[lang]
    at = open_page(params={"text": sentence}, lang=lang)
    assert at.text_area(key="pg_text").value == sentence
    for page, key in LABS.items():
        go(at, page)
        assert box(at, key).value == sentence, page
        assert translate(lang, "app.sentence_yours") in captions(at) or page in (
            "app_pages/masks.py",
            "app_pages/block.py",
        ), page
        assert at.query_params["text"] in (sentence, [sentence]), page  # the lab's own link keeps it


def test_a_labs_own_sentence_is_said_to_be_its_own_and_a_typed_one_carries_back():
    at = open_page("app_pages/lookalikes.py")
    own = translate("en", "lookalikes.default_text_a")
    assert box(at, "lookalikes_text_a").value == own
    assert translate("en", "app.sentence_own") in captions(at)
    assert translate("en", "app.sentence_yours") not in captions(at)
    at.text_input(key="lookalikes_text_a").input("a bird sang").run()
    assert translate("en", "app.sentence_yours") in captions(at)
    go(at, "app_pages/cost.py")
    assert at.text_area(key="cost_text").value == "a bird sang"
    go(at, "app_pages/playground.py")
    assert at.text_area(key="pg_text").value == "a bird sang"


def test_the_cost_labs_linear_sentence_is_the_learners():
    at = open_page("app_pages/cost.py")
    assert at.text_area(key="cost_text").value == translate("en", "cost.default_text")
    assert translate("en", "app.sentence_own") in captions(at)
    n_own = z(charts(at)["cost_chart_softmax_weights"]).shape
    at = open_page(params={"text": "one two three"})
    go(at, "app_pages/cost.py")
    assert z(charts(at)["cost_chart_softmax_weights"]).shape == (3, 3) != n_own
    assert translate("en", "app.sentence_yours") in captions(at)


@pytest.mark.skipif(not smollm2.is_available(), reason="decoder model not installed")
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_decoder_starts_from_the_learners_sentence(lang):
    # one sentence for both interface languages: the model runs on it once (the trace is cached)
    at = open_page(lang=lang)
    at.text_area(key="pg_text").input(SENTENCES["en"]).run()
    go(at, "app_pages/decoder.py")
    assert at.text_area(key="decoder_text").value == SENTENCES["en"]
    assert translate(lang, "app.sentence_yours") in captions(at)
    # the page's model: SmolLM2 in English, Gemma 3 in Japanese (issue 25), each with its own tokens
    core = {"smollm2": smollm2, "gemma3": gemma3}[at.session_state["decoder_model"]]
    assert at.session_state["decoder_model"] == ("gemma3" if lang == "ja" else "smollm2")
    expected = core.run_text(SENTENCES["en"]).n
    assert z(charts(at)["decoder_chart_weights_0"]).shape == (expected, expected)
    if lang == "en":  # with no sentence of the learner's: the page's own (test_app_decoder's), and it says so
        own = open_page("app_pages/decoder.py", lang=lang)
        assert own.text_area(key="decoder_text").value == translate(lang, "decoder.default_text")
        assert translate(lang, "app.sentence_own") in captions(own)
    else:
        assert translate("en", "app.sentence_yours") not in captions(at)  # said in the page's language


def test_a_decoder_link_s_sentence_goes_on_into_the_labs():
    at = open_page("app_pages/decoder.py", params={"text": "the sky is"}, check=False)
    go(at, "app_pages/masks.py")
    assert at.text_area(key="masks_text").value == "the sky is"


@pytest.mark.parametrize(("locale", "link", "shown"), [("en-US", "ja", "en"), ("ja-JP", "en", "ja")])
def test_the_receivers_language_wins_and_the_numbers_stay(locale, link, shown):
    sentence = SENTENCES["ja"]
    params = {"text": sentence, "lang": link, "seed": "5", "heads": "4"}
    at = open_page(params=params, lang=None, locale=locale)
    assert at.session_state["lang"] == shown
    assert at.title[0].value == translate(shown, "playground.title")
    sender = open_page(params=params, lang=link)  # the teacher's own view of the same link
    mine, theirs = charts(at)["pg_chart_weights"], charts(sender)["pg_chart_weights"]
    np.testing.assert_array_equal(z(mine), z(theirs))
    assert at.query_params["lang"] == shown  # the page now writes the receiver's language


def test_a_link_s_language_counts_only_without_a_browser_locale():
    at = open_page(params={"lang": "ja"}, lang=None)  # no st.context.locale
    assert at.session_state["lang"] == "ja"
    at = open_page(params={"lang": "xx"}, lang=None, locale="ja-JP")
    assert at.session_state["lang"] == "ja"
