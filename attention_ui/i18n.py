"""Message catalogs: every user-visible string, in English and Japanese.

Catalogs live in ``locales/<lang>/<namespace>.json``; a key is ``"<namespace>.<name>"``, e.g.
``t("playground.title")``. Each page owns its namespace file, so pages never share a file.
Placeholders use ``str.format`` names: ``"{n} tokens"``.
"""

from __future__ import annotations

import json
import string
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "ja")
DEFAULT_LANGUAGE = "en"
LANGUAGE_NAMES = {"en": "English", "ja": "日本語"}
_LOCALES = Path(__file__).parent / "locales"


@cache
def catalog(lang: str) -> dict[str, str]:
    """All messages of one language, keyed ``namespace.name``."""
    messages: dict[str, str] = {}
    for path in sorted((_LOCALES / lang).glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for name, text in data.items():
            messages[f"{path.stem}.{name}"] = text
    return messages


def placeholders(text: str) -> set[str]:
    """The ``{name}`` fields a message uses."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def language_from_locale(locale: str | None) -> str:
    """Map a browser locale such as ``ja-JP`` to a supported language."""
    if locale and locale.lower().startswith("ja"):
        return "ja"
    return DEFAULT_LANGUAGE


def translate(lang: str, key: str, /, **values: object) -> str:
    """The message ``key`` in ``lang`` (English if missing), with placeholders filled in.

    Values are inserted as plain text; callers that render Markdown must escape user text first.
    """
    text = catalog(lang).get(key) or catalog(DEFAULT_LANGUAGE).get(key)
    if text is None:
        raise KeyError(f"no message {key!r}")
    return text.format(**values) if values else text


class Translator:
    """``t = Translator("ja"); t("playground.title")``."""

    def __init__(self, lang: str) -> None:
        self.lang = lang if lang in LANGUAGES else DEFAULT_LANGUAGE

    def __call__(self, key: str, /, **values: object) -> str:
        return translate(self.lang, key, **values)
