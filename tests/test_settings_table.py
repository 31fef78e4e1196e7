"""The pages' tables of settings (attention_ui/settings_table.py): a key is declared once, a name that
is not declared fails at once, and a page leaves in the session only keys some table declares."""

from __future__ import annotations

import importlib

import pytest
from apptest_pages import open_page

from attention_ui import kit
from attention_ui import settings_table as S
from attention_ui.settings_table import NO_DEFAULT, Setting, Table

# The pages whose settings are all in their table (issue 46, ask 1), and each table's module.
CONVERTED = {
    "app_pages/block.py": "attention_ui.block.settings",
    "app_pages/decoder.py": "attention_ui.decoder.settings",
    "app_pages/inference.py": "attention_ui.inference.settings",
    "app_pages/lookalikes.py": "attention_ui.lookalikes.settings",
    "app_pages/masks.py": "attention_ui.masks.settings",
}


def test_a_declared_name_gives_its_key_and_an_undeclared_one_raises():
    table = Table("zz", Setting("pad", 2), Setting("q_*", why="questions"), kit=False)
    assert table.key("pad") == table["pad"] == "zz_pad"
    assert table.key("q", "ffn") == "zz_q_ffn"
    assert table.family("q") == "zz_q"
    with pytest.raises(KeyError, match="zz has no setting 'pads'"):
        table.key("pads")
    with pytest.raises(KeyError, match="family"):
        table.key("q_*")
    with pytest.raises(KeyError):
        table.key("pad", 1)  # 'pad' is not a family
    with pytest.raises(KeyError):
        table.family("pad")


@pytest.mark.parametrize(
    "build",
    [
        lambda: Table("zz", Setting("a"), Setting("a")),  # twice
        lambda: Table("zz", Setting("tables")),  # a kit key declared again
        lambda: Table("Z", Setting("a")),  # not a prefix
        lambda: Setting("Bad name"),
        lambda: Setting("a", 1, text="x.y"),  # two defaults
        lambda: Setting("a", accepts=lambda v: True),  # accepts without sharing
    ],
)
def test_a_malformed_table_fails_when_it_is_built(build):
    with pytest.raises(ValueError):
        build()


def test_the_kit_reads_defaults_choices_and_sharing_from_the_table():
    accept = kit.whole_in(1, 4)
    table = Table(
        "zy",
        Setting("text", text="zy.default_text", shared=kit.LEARNER_TEXT),
        Setting("heads", 2, shared=kit.LEARNER_HEADS, accepts=accept),
        Setting("kind", "a", translated=True),
        Setting("button"),
    )
    page = kit.Page.of(table, "zy")
    assert page.defaults == {"zy_heads": 2, "zy_kind": "a"}
    assert page.translated_defaults == {"zy_text": "zy.default_text"}
    assert page.choice_keys == ("zy_kind",)
    assert list(page.shared) == ["zy_text", "zy_heads"]  # in the table's order
    assert page.shared_accepts == {"zy_heads": accept}
    assert page.key("heads") == "zy_heads"
    with pytest.raises(KeyError):
        page.widget(lambda k, **v: k, "toggle", "nope")
    # the kit's own keys and the shared settings' exchange markers are declared with the table
    for key in (
        "zy_tables",
        "zy_present",
        "zy_present_next",
        "zy_text_synced",
        "zy_chart_x",
        "zy_url_written",
    ):
        assert table.owns(key), key
    assert not table.owns("zy_nope") and not table.owns("zyx_heads") and not table.owns("zy_button_2")
    assert S.owner("zy_heads") is table and S.owner("zz9_heads") is None


def test_a_page_without_a_table_still_builds_its_keys():
    assert kit.Page("ab", "ab").key("q", 3) == "ab_q_3"


@pytest.mark.parametrize("module", sorted(set(CONVERTED.values())))
def test_a_shared_setting_travels_under_the_url_name_of_the_learner_context(module):
    table = importlib.import_module(module).TABLE
    for s in table:
        if s.shared:
            assert s.url == kit.CONTEXT_URL[s.shared], (table.prefix, s.name)
        assert s.default is NO_DEFAULT or s.text is None


def undeclared_keys(at) -> list[str]:
    for module in CONVERTED.values():
        importlib.import_module(module)
    return sorted(k for k in at.session_state.keys() if S.owner(k) is None and k not in S.APP_KEYS)


@pytest.mark.parametrize("page", sorted(CONVERTED))
def test_a_page_leaves_only_declared_keys_in_the_session(page):
    at = open_page(page)
    assert undeclared_keys(at) == [], f"{page} keeps session keys no table declares"


def test_the_decoder_on_its_other_model_and_generating_leaves_only_declared_keys():
    """The decoder's first run shows SmolLM2 in English: Gemma 3's own sections and a generated
    token set keys of their own."""
    at = open_page("app_pages/decoder.py", decoder_model="gemma3")
    at.button(key="decoder_next").click().run()
    assert not at.exception and at.session_state["decoder_generated"]
    assert undeclared_keys(at) == []


def test_the_decoder_url_reads_and_writes_each_url_setting_of_its_table():
    """The decoder keeps its view in its own URL (attention_ui/decoder/url.py): the parameters that
    code reads and writes are the table's ``url`` entries, each under its setting's key, and each
    reads back what it wrote. The URL code forgetting an entry, or a parameter the table does not
    declare, fails here."""
    from attention_ui.decoder import url
    from attention_ui.decoder.settings import TABLE

    carried = {p.url: p.state for p in url.PARAMS if p.url != "lang"}  # the language is the app's
    assert carried == {name: key for key, name in TABLE.url_names.items()}
    state = {key: TABLE.defaults.get(key, "smollm2") for key in TABLE.url_names}
    state[TABLE.key("text")] = "the cat sat"
    state[TABLE.key("layer")], state[TABLE.key("head")] = 5, 3  # not the defaults: the value travels
    assert url.parse(url.serialise(state)) == (state, ())
