"""Message catalogs: every namespace exists in both languages with the same keys, no empty message,
the same placeholders, and every literal key the playground and app.py use is defined."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

from attention_ui.i18n import LANGUAGES, catalog, placeholders, translate

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "attention_ui" / "locales"
NAMESPACES = sorted({p.stem for lang in LANGUAGES for p in (LOCALES / lang).glob("*.json")})
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def load(lang: str, namespace: str) -> dict:
    path = LOCALES / lang / f"{namespace}.json"
    assert path.exists(), f"{path.relative_to(ROOT)} is missing"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_there_are_catalogs():
    assert {"app", "playground"} <= set(NAMESPACES)


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_same_keys_in_every_language(namespace):
    keys = {lang: set(load(lang, namespace)) for lang in LANGUAGES}
    for lang in LANGUAGES:
        missing = keys["en"] - keys[lang]
        extra = keys[lang] - keys["en"]
        assert not missing, f"{lang}/{namespace}.json lacks {sorted(missing)}"
        assert not extra, f"{lang}/{namespace}.json has keys English lacks: {sorted(extra)}"


@pytest.mark.parametrize("namespace", NAMESPACES)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_empty_or_broken_message(lang, namespace):
    for key, text in load(lang, namespace).items():
        assert isinstance(text, str) and text.strip(), f"{lang}/{namespace}.{key} is empty"
        list(string.Formatter().parse(text))  # raises on a stray "{" or "}"


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_same_placeholders(namespace):
    en, ja = load("en", namespace), load("ja", namespace)
    for key in en.keys() & ja.keys():
        assert placeholders(en[key]) == placeholders(ja[key]), f"{namespace}.{key}: placeholders differ"


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_japanese_catalogs_are_japanese(namespace):
    ja = load("ja", namespace)
    with_cjk = sum(bool(CJK.search(v)) for v in ja.values())
    assert with_cjk >= len(ja) // 2, (
        f"ja/{namespace}.json looks untranslated ({with_cjk}/{len(ja)} in Japanese)"
    )


UI_SOURCES = [
    "app.py",
    "app_pages/playground.py",
    "attention_ui/playground/steps_view.py",
    "attention_ui/playground/explain_view.py",
    "attention_ui/playground/presenter.py",
    "attention_ui/playground/examples.py",
    "attention_ui/playground/settings.py",
]
KEY_LITERAL = re.compile(r"""["']((?:app|playground)\.[a-z0-9_]+)["']""")


@pytest.mark.parametrize("source", UI_SOURCES)
def test_every_literal_key_used_by_the_ui_exists(source):
    text = (ROOT / source).read_text(encoding="utf-8")
    used = set(KEY_LITERAL.findall(text))
    assert used, f"{source} uses no catalog key literally"
    for lang in LANGUAGES:
        missing = sorted(k for k in used if not catalog(lang).get(k))
        assert not missing, f"{source} uses keys missing in {lang}: {missing}"


def test_step_and_choice_keys_built_at_run_time_exist():
    from attention_core import MASK_KINDS
    from attention_ui.playground.settings import PRESETS, SCALE_CHOICES
    from attention_ui.playground.steps_view import STEPS

    built = [f"playground.step_{s}" for s in STEPS] + [f"playground.explain_{s}" for s in STEPS]
    built += [f"playground.mask_{m.replace('+', '_')}" for m in MASK_KINDS]
    built += [f"playground.scale_{s}" for s in SCALE_CHOICES] + [f"playground.preset_{p}" for p in PRESETS]
    for lang in LANGUAGES:
        assert not [k for k in built if not catalog(lang).get(k)], lang


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_step_numbers_named_in_help_texts_match_the_steps(lang):
    """Help texts that name playground steps by number name the right ones (they are fixed text)."""
    import re

    from attention_ui.playground.steps_view import PER_HEAD, STEPS

    number = {name: i + 1 for i, name in enumerate(STEPS)}
    numbers = [int(x) for x in re.findall(r"\d+", translate(lang, "playground.head_help"))]
    first, last = number[PER_HEAD[0]], number[PER_HEAD[-1]]
    assert numbers == [first, last, number["mask"], number["all_heads"]], numbers
    assert "mask" not in PER_HEAD and first < number["mask"] < last  # the one step inside that is shared
    pointer = [int(x) for x in re.findall(r"(?<![{\w])\d+", translate(lang, "pretrained.head_pointer"))]
    assert pointer == [first, last], pointer
    shared = [int(x) for x in re.findall(r"\d+", translate(lang, "playground.shared_scale"))]
    assert shared == [number["raw"], number["scaled"]]


def test_one_default_sentence_per_language_and_pages_with_their_own_say_why() -> None:
    """Issue 33: the pages share the playground's sentence until the learner sets one; the decoder and
    heads pages start from their own (an unfinished sentence, a repetition) and say why."""

    for lang in ("en", "ja"):
        messages = catalog(lang)
        shared = messages["playground.default_text"]
        for key in ("masks.default_text", "multihead.default_text", "inference.default_text",
                    "lookalikes.default_text_a", "block.default_text", "cost.default_text"):  # fmt: skip
            assert messages[key] == shared, (lang, key)
        for page in ("decoder", "heads", "positions"):
            assert messages[f"{page}.default_text"] != shared and messages[f"{page}.own_example"]


# Japanese labels in boxes that were cut at 1366 px (issue 33): characters that fit, measured there
# (a metric in a row of 4 holds about 13, one in a row of 3 about 20, the sidebar's select
# placeholder about 12; the issue saw 16, 25 and 14 cut there).
NARROW_JA = {
    "ring.metric_send_step": 13,
    "ring.metric_send_total": 13,
    "playground.examples_placeholder": 12,
}


def test_japanese_labels_in_narrow_boxes_fit() -> None:
    ja = catalog("ja")
    for key, most in NARROW_JA.items():
        assert len(ja[key].replace(" ", "")) <= most, (key, ja[key])
    longest = max(len(ja[f"positions.scheme_{s}"]) for s in ("sinusoidal", "learned", "rope"))
    assert len(translate("ja", "positions.spread_metric", name="").replace(" ", "")) + longest <= 20


def _doubled_keys(text: str) -> list[str]:
    """The keys that one JSON object of the text names twice (json.loads keeps only the last)."""
    doubled: list[str] = []

    def pairs_hook(pairs):
        names = [k for k, _ in pairs]
        doubled.extend(sorted({k for k in names if names.count(k) > 1}))
        return dict(pairs)

    json.loads(text, object_pairs_hook=pairs_hook)
    return doubled


def test_no_catalog_names_a_key_twice() -> None:
    """A merge of two branches that both touched a catalog can leave a key twice; JSON keeps the last
    one silently, which brought back a sentence the glossary had corrected (issue 33, 'あなたの文')."""
    files = sorted(LOCALES.rglob("*.json"))
    assert files
    doubled = {
        str(p.relative_to(LOCALES)): d for p in files if (d := _doubled_keys(p.read_text(encoding="utf-8")))
    }
    assert not doubled, doubled
    assert _doubled_keys('{"a": 1, "b": {"a": 2}, "a": 3}') == ["a"]  # a double in one object, not across


def catalog_strings(lang: str):
    import json
    from pathlib import Path

    for path in sorted(
        (Path(__file__).resolve().parents[1] / "attention_ui" / "locales" / lang).glob("*.json")
    ):
        for key, text in json.loads(path.read_text(encoding="utf-8")).items():
            if isinstance(text, str) and not key.startswith("hover_"):
                yield f"{path.stem}.{key}", text


@pytest.mark.parametrize(
    ("lang", "hover", "tap"), [("en", "hover", "tap"), ("ja", "カーソルを合わせ", "タップ")]
)
def test_text_that_says_hover_also_says_tap(lang, hover, tap):
    said = {key: text for key, text in catalog_strings(lang) if hover in text.lower()}
    assert said  # the playground's intro says it
    assert [key for key, text in said.items() if tap not in text] == []
