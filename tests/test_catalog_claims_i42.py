"""Issue 42, points 9-10: what the decoder's long-text section says its button does, and the names of
its two "back" buttons. The behaviour each sentence describes is driven in
tests/test_app_decoder_gemma.py (the long text leaves the learner's sentence in the box); here the words
are read in both languages, and the old wordings are named so they cannot return.
"""

from __future__ import annotations

import pytest

from attention_ui.i18n import translate


def both(key: str, **values: object) -> tuple[str, str]:
    return translate("en", key, **values), translate("ja", key, **values)


def test_the_long_text_button_is_said_to_leave_the_sentence_in_the_box() -> None:
    en, ja = both("decoder.g_explain_local_global", window=512)
    assert (
        "puts one in the sentence box" not in en and "入力欄に入れられます" not in ja
    )  # false: it never does
    assert "runs this page on one" in en and "your sentence stays in the box" in en
    assert (
        "長い文でこのページを動かします" in ja
        and "入力した文は入力欄にもほかのページにもそのまま残ります" in ja
    )


GENERATED = {"en": "generated tokens", "ja": "生成したトークン"}
LONG_TEXT = {"en": "long text", "ja": "長い文"}
BACK = {"en": ("back", "return", "undo"), "ja": ("戻",)}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_two_back_buttons_name_what_each_one_takes_away(lang: str) -> None:
    """「元の文に戻す」 (undo the generated tokens) and 「入力した文に戻る」 (leave the long text) were both
    a "back to the sentence": each now names what it removes, and only one of them says "back"."""
    reset, leave = translate(lang, "decoder.reset_button"), translate(lang, "decoder.g_back_button")
    assert GENERATED[lang] in reset and LONG_TEXT[lang] not in reset
    assert LONG_TEXT[lang] in leave and GENERATED[lang] not in leave
    assert not any(word in reset.lower() for word in BACK[lang])
    assert reset not in ("Back to the sentence", "元の文に戻す") and leave not in (
        "Back to your sentence",
        "入力した文に戻る",
    )
