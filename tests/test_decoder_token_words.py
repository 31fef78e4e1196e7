"""The decoder's next-token candidates in words (attention_ui/decoder/token_words.py), both languages,
on readings the core computes from hand-made bytes (no model needed)."""

from __future__ import annotations

import pytest

from attention_core.models import byte_bpe as B
from attention_ui.decoder import token_words as W
from attention_ui.i18n import Translator

NEKO, HA = "猫".encode(), "は".encode()


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_candidates_in_words_never_hex_alone(lang):
    t = Translator(lang)
    completes = B.read_token(NEKO[:2], NEKO[2:] + HA)
    part = B.read_token(b"\xe3", b"\x81")
    stray = B.read_token(b"a", b"\x81")
    word = B.read_token(b"a", b" cat")
    assert W.short_label(t, completes) == t("decoder.tok_completes_short", char="猫") + "+は"
    assert W.short_label(t, part) == t("decoder.tok_part_short", span="ぁ…み")
    assert W.short_label(t, word) == "␣cat" and W.short_label(t, None, "<|im_end|>") == "<|im_end|>"
    assert W.short_label(t, stray) == "\ufffd"
    long = W.long_label(t, part)
    assert "ぁ" in long and "み" in long and "63" in long and "2" in long and "3" in long
    assert "猫" in W.long_label(t, completes) and "は" in W.long_label(t, completes)
    assert W.long_label(t, stray) == t("decoder.tok_stray", count=1)
    for reading in (completes, part, stray, word):
        for text in (W.short_label(t, reading), W.long_label(t, reading)):
            assert "⟨" not in text and "E3" not in text and "81" not in text
    assert W.in_parts(completes) and W.in_parts(part) and W.in_parts(stray)
    assert not W.in_parts(word) and not W.in_parts(None)
