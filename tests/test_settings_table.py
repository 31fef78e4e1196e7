"""The pages' tables of settings (attention_ui/settings_table.py): a key is declared once, a name that
is not declared fails at once, and a page leaves in the session only keys some table declares."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator

import pytest
from apptest_pages import open_page

from attention_ui import kit
from attention_ui import settings_table as S
from attention_ui.classroom import state
from attention_ui.settings_table import NO_DEFAULT, Setting, Table
from tests.test_class_pages import JOIN, PLAYGROUND, TEACH, choose, join, start_class
from tests.test_class_pages import class_store as _a_new_store_each_test  # noqa: F401 (autouse: the class pages')

# The pages whose settings are all in their table (issue 46, ask 1), and each table's module.
CONVERTED = {
    "app_pages/block.py": "attention_ui.block.settings",
    "app_pages/decoder.py": "attention_ui.decoder.settings",
    "app_pages/inference.py": "attention_ui.inference.settings",
    "app_pages/lookalikes.py": "attention_ui.lookalikes.settings",
    "app_pages/cost.py": "attention_ui.cost.settings",
    "app_pages/masks.py": "attention_ui.masks.settings",
    "app_pages/multihead.py": "attention_ui.multihead.settings",
    "app_pages/positions.py": "attention_ui.positions.settings",
    "app_pages/scaling.py": "attention_ui.scaling.settings",
    "app_pages/playground.py": "attention_ui.playground.settings",
    "app_pages/quiz.py": "attention_ui.quiz.settings",
    "app_pages/heads.py": "attention_ui.heads.settings",
    "app_pages/training.py": "attention_ui.training.settings",
    "app_pages/codecheck.py": "attention_ui.codecheck.settings",
    "app_pages/worksheet.py": "attention_ui.worksheet.settings",
    "app_pages/path.py": "attention_ui.path.settings",
    TEACH: "attention_ui.classroom.settings",
    JOIN: "attention_ui.classroom.settings",
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
    assert not table.owns("zy_chartx")  # a family's members only: <stem>_<part>
    assert S.owner("zy_heads") is table and S.owner("zz9_heads") is None


def test_a_page_may_give_a_kit_key_its_default_and_url_name():
    """The playground's URL carries the kit's tables switch and presenter flag: declared again with more
    (a default, a URL name), the page's entry replaces the kit's; declared again bare, it is an error."""
    table = Table("zx", Setting("tables", False, url="tables"), Setting("present", url="present"))
    assert table.defaults == {"zx_tables": False}
    assert table.url_names == {"zx_tables": "tables", "zx_present": "present"}
    assert table.owns("zx_present_next") and table.key("slide") == "zx_slide"  # the rest of the kit stays
    with pytest.raises(ValueError, match="declared twice"):
        Table("zw", Setting("tables", False, url="t"), Setting("tables", True, url="t"))


def test_the_longest_prefix_owns_a_key_two_tables_could_claim():
    wide = Table("za", Setting("c_*", why="a family"), kit=False)
    narrow = Table("za_c", Setting("d", 1), kit=False)
    assert wide.owns("za_c_d") and narrow.owns("za_c_d")
    assert S.owner("za_c_d") is narrow and S.owner("za_c_e") is wide


def test_a_page_without_a_table_still_builds_its_keys():
    assert kit.Page("ab", "ab").key("q", 3) == "ab_q_3"


@pytest.mark.parametrize("module", sorted(set(CONVERTED.values())))
def test_a_shared_setting_travels_under_the_url_name_of_the_learner_context(module):
    table = importlib.import_module(module).TABLE
    for s in table:
        if s.shared:
            assert s.url == kit.CONTEXT_URL[s.shared], (table.prefix, s.name)
        assert s.default is NO_DEFAULT or s.text is None


def keys_of(at) -> set[str]:
    """The session keys of ``at`` and the keys of the elements it drew (boxes, charts: not in the session,
    yet spelled like its keys, and looked up by the page's CSS and script); a form's submit button as
    its form's key."""

    def named(key: str) -> str:  # a form's submit button is keyed by Streamlit after its form and label
        return key.removeprefix("FormSubmitter:").split("-")[0] if key.startswith("FormSubmitter:") else key

    def drawn(node) -> Iterator[str]:
        for child in getattr(node, "children", {}).values():
            if getattr(child, "key", None):
                yield str(child.key)
            yield from drawn(child)

    # from the tree's root: a dialog is drawn in neither at.main nor at.sidebar, but in the event block
    keys = {str(k) for k in at.session_state.keys()} | set(drawn(at._tree))
    return {named(k) for k in keys}


def undeclared(keys) -> list[str]:
    """The ``keys`` (an AppTest's, or a set of keys) that no table declares (nor the app-wide list). The
    live class writes the playground's keys (the view it adopts, presenter mode's step): the playground's
    table declares them."""
    for module in CONVERTED.values():
        importlib.import_module(module)
    keys = keys if isinstance(keys, set) else keys_of(keys)
    return sorted(k for k in keys if S.owner(k) is None and k not in S.APP_KEYS)


@pytest.mark.parametrize("page", sorted(CONVERTED))
def test_a_page_leaves_only_declared_keys_in_the_session(page):
    at = open_page(page)
    assert undeclared(at) == [], f"{page} keeps session keys no table declares"


@pytest.mark.parametrize(
    "params",
    [
        {"present": "1", "step": "5"},  # presenter mode, a per-head step (the head picker in its controls)
        {"present": "1", "step": "9"},  # a wide step's slide box
        {"weights": "pretrained", "layer": "2", "hide": "1"},  # the pretrained weights' view
        {"auto": "0", "scale": "custom", "all_heads": "1", "tables": "1"},  # hand-set sizes, every switch on
    ],
)
def test_the_playgrounds_other_views_leave_only_declared_keys(params):
    """The playground's views beyond its first: presenter mode, the pretrained weights, the gradients
    step, the cell and row explainers, the export menu and the take-home buttons (drawn with the steps)."""
    from attention_core.models import minilm

    if params.get("weights") and not minilm.is_available():
        pytest.skip("pretrained model not installed")
    at = open_page(params=params)
    if "present" not in params:
        for switch in ("pg_grads", "pg_explain_cell", "pg_explain_row"):
            at.toggle(key=switch).set_value(True).run()
        assert not at.exception
    assert undeclared(at) == [], f"the playground ({params}) keeps keys no table declares"


def test_the_live_class_leaves_only_declared_keys_on_the_panel_and_the_phones():
    """A running class, a phone that joined, a code poll open, answered, revealed, the phone away at its
    own step, the end asked: every key the panel and the phone keep or draw is the class's table's."""
    store = state.store()  # this test's own (the autouse fixture)
    teacher, cls = start_class()
    phone = join(cls["code"], "Ann")
    keys = set()

    def note(*pages) -> None:
        for at in pages:
            assert not at.exception, [e.value for e in at.exception]
            keys.update(keys_of(at))

    teacher.selectbox(key="cls_pick").set_value(("live", "code_scale_order")).run()
    teacher.button(key="cls_open").click().run()
    poll = store.tallies(cls["sid"], cls["token"])[-1].poll
    phone.run()
    choose(phone, f"cls_choice_{poll.poll_id}", 0)
    note(teacher, phone)
    phone.button(key=f"cls_send_{poll.poll_id}").click().run()
    teacher.run()
    teacher.button(key=f"cls_reveal_{poll.seq}").click().run()
    phone.run()
    note(teacher, phone)
    # the presenter's strip and join-code slide, and the normal playground's banner, of the same browser
    shown = open_page(PLAYGROUND, pg_present=True, pg_step=2, **{state.TEACHER_KEY: dict(cls)})
    shown.button(key="cls_present_code").click().run()
    note(shown, open_page(PLAYGROUND, **{state.TEACHER_KEY: dict(cls)}))
    phone.button(key="cls_explore").click().run()
    phone.button(key="cls_own_next").click().run()
    teacher.button(key="cls_end").click().run()
    note(teacher, phone)
    # the runs reached what they should check: the poll's, the dialog's and the phone's own keys
    for key in (f"cls_hist_{poll.seq}", f"cls_close_{poll.seq}", f"cls_code_{poll.seq}_consequences",
                f"cls_choice_{poll.poll_id}", f"cls_send_{poll.poll_id}", f"cls_code_{poll.poll_id}_consequences",
                "cls_poll_box", "cls_end_box", "cls_own_prev", "cls_resync", "cls_teach_watchdog",
                "cls_present_strip", "cls_code_big", "cls_pg_banner"):  # fmt: skip
        assert key in keys, key
    assert any(k.startswith("cls_drawn_") and k[len("cls_drawn_") :][0].isdigit() for k in keys)
    assert undeclared(keys) == []


def test_the_decoder_on_its_other_model_and_generating_leaves_only_declared_keys():
    """The decoder's first run shows SmolLM2 in English: Gemma 3's own sections and a generated
    token set keys of their own."""
    at = open_page("app_pages/decoder.py", decoder_model="gemma3")
    at.button(key="decoder_next").click().run()
    assert not at.exception and at.session_state["decoder_generated"]
    assert undeclared(at) == []


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


def _answer_the_quiz(at) -> None:
    """Answer a question wrongly, retry the missed ones, answer a code question."""
    radio = next(r for r in at.main.radio if r.key and r.key.startswith("quiz_r_"))
    radio.set_value(0).run()
    for r in at.main.radio:
        if r.key and r.key.startswith("quiz_r_") and r.key != radio.key:
            r.set_value(0)
    at.run()
    at.button(key="quiz_retry_btn").click().run()
    code = next(r for r in at.main.radio if r.key and r.key.startswith("quiz_code_q_"))
    code.set_value(1).run()


def _train(at) -> None:
    """Press Train on a tiny model and follow the run to its maps, snapshot and questions."""
    from tests.test_app_training import TINY, train

    # a seed of its own: a run kept by the server would change what test_app_training's pages say
    for k, v in (TINY | {"training_seed": 17}).items():
        at.session_state[k] = v
    train(at.run())


def _check_code(at) -> None:
    """Load a preset and check it (the check turned on, as tests/test_app_codecheck.py does), so the
    report's keys are checked too."""
    from attention_ui.codecheck import gate

    before = os.environ.get(gate.ENV)
    os.environ[gate.ENV] = "1"
    try:
        at.button(key="codecheck_load").click().run()
        at.button(key="codecheck_check").click().run()
    finally:
        if before is None:
            del os.environ[gate.ENV]
        else:
            os.environ[gate.ENV] = before
    assert "codecheck_report" in at.session_state


def _build_worksheet(at) -> None:
    """A class too large (the builder's message), then a causal sheet with its code questions."""
    at.number_input(key="worksheet_students").set_value(60).run()
    at.number_input(key="worksheet_exercises").set_value(4).run()
    at.number_input(key="worksheet_students").set_value(2).run()
    at.toggle(key="worksheet_causal").set_value(True).run()
    at.toggle(key="worksheet_code").set_value(True).run()
    assert at.get("download_button")


def _walk_the_path(at) -> None:
    """Every stop to the summary: the mask stop's code question answered, one step back on the way."""
    at.button(key="path_next").click().run()
    at.button(key="path_back").click().run()
    for _ in range(2):
        at.button(key="path_next").click().run()
    at.radio(key="path_code_q").set_value(0).run()
    assert "path_code_answer" in at.session_state
    while any(b.key == "path_next" for b in at.button):
        at.button(key="path_next").click().run()
    assert at.dataframe  # the summary's table


# A page's other views and actions, driven so that the keys they leave are checked too.
DRIVEN = {
    "app_pages/quiz.py": _answer_the_quiz,
    "app_pages/training.py": _train,
    "app_pages/codecheck.py": _check_code,
    "app_pages/worksheet.py": _build_worksheet,
    "app_pages/path.py": _walk_the_path,
}


@pytest.mark.parametrize("page", sorted(DRIVEN))
def test_a_driven_page_leaves_only_declared_keys_in_the_session(page):
    at = open_page(page)
    DRIVEN[page](at)
    assert not at.exception, at.exception
    assert undeclared(at) == [], f"{page} keeps session keys no table declares"
