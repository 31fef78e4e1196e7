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
    "app_pages/cost.py": "attention_ui.cost.settings",
    "app_pages/masks.py": "attention_ui.masks.settings",
    "app_pages/multihead.py": "attention_ui.multihead.settings",
    "app_pages/positions.py": "attention_ui.positions.settings",
    "app_pages/scaling.py": "attention_ui.scaling.settings",
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


@pytest.mark.parametrize("page", sorted(CONVERTED))
def test_a_page_leaves_only_declared_keys_in_the_session(page):
    at = open_page(page)
    for module in CONVERTED.values():
        importlib.import_module(module)
    undeclared = [k for k in at.session_state.keys() if S.owner(k) is None and k not in S.APP_KEYS]
    assert undeclared == [], f"{page} keeps session keys no table declares: {sorted(undeclared)}"
