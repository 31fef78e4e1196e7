"""The code tabs (issue 43) in AppTest: a closed tab draws no code, an open one the step's lines of the
program for the learner's own settings, the whole program with its downloads, the reference example one
box away; the same in the masks and multi-head labs."""

from __future__ import annotations

from attention_core import AttentionConfig, codegen, tokenize
from attention_ui.i18n import translate
from tests.apptest_pages import open_page

TEXT = "the cat sat on the mat"


def _captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


def _codes(at) -> list[str]:
    return [c.value.rstrip("\n") for c in at.code]  # st.code drops the last newline


def test_closed_code_tabs_draw_no_code():
    at = open_page(pg_text=TEXT)
    assert _codes(at) == []
    labels = [e.label for e in at.expander]
    assert labels.count(translate("en", "code.tab_label")) == 11  # one per step
    assert (
        translate("en", "code.whole_program") in labels and translate("en", "code.example_button") in labels
    )


def test_an_open_tab_shows_the_steps_lines_for_the_settings():
    at = open_page(pg_text=TEXT, pg_mask="causal", pg_heads=4, pg_code_raw=True, pg_code_mask=True)
    config = AttentionConfig(d_model=16, heads=4, mask="causal")
    program = codegen.layer_program(config, tokenize(TEXT).tokens)
    codes = _codes(at)
    assert program.step_source("raw") in codes and program.step_source("mask") in codes
    assert len(codes) == 2
    assert "scores = Q @ K.transpose(0, 2, 1)" in program.step_source("raw")


def test_the_whole_program_its_downloads_and_the_example():
    at = open_page(lang="ja", pg_text="猫が座った", pg_mask="causal+padding", pg_pad=2, pg_code_all=True)
    config = AttentionConfig(mask="causal+padding", pad=2)
    assert _codes(at) == [codegen.layer_program(config, tokenize("猫が座った").tokens).source.rstrip("\n")]
    assert translate("ja", "code.whole_caption") in _captions(at)
    at.session_state["pg_code_example"] = True
    at.run()
    assert codegen.example_program().source.rstrip("\n") in _codes(at)
    assert translate("ja", "code.example_caption") in _captions(at)


def test_the_example_preset_shows_the_example_program():
    at = open_page(pg_preset="example", pg_code_softmax=True)
    assert _codes(at) == [codegen.example_program().step_source("softmax")]


def test_the_multi_head_lab_shows_its_lines():
    at = open_page("app_pages/multihead.py", multihead_code_concat=True)
    codes = _codes(at)
    assert len(codes) == 1 and "concat = out.transpose(1, 0, 2).reshape(n, heads * d_v)" in codes[0]
    assert "output = concat @ W_O" in codes[0]


def test_the_masks_lab_shows_its_mask_and_none_for_the_sliding_window():
    at = open_page("app_pages/masks.py", masks_code=True, masks_kind="causal")
    codes = _codes(at)
    assert len(codes) == 1 and "allowed = ~np.triu(np.ones((n, n), dtype=bool), k=1)" in codes[0]
    at = open_page("app_pages/masks.py", masks_code=True, masks_kind="sliding")
    assert _codes(at) == []


def test_the_cell_explainer_points_at_the_line_that_made_the_cell():
    at = open_page(
        pg_text=TEXT,
        pg_heads=2,
        pg_head=1,
        pg_cell_q=3,
        pg_cell_k=1,
        pg_explain_cell=True,
        pg_code_softmax=True,
    )
    expected = translate(
        "en", "code.tab_cell", row=3, col=1, name="weights", index="1, 3, 1", line="weights = softmax(masked)"
    )
    assert expected in _captions(at)


def test_the_quiz_asks_code_questions_and_shows_every_options_run():
    from attention_core import codegen_questions as cq
    from attention_ui.i18n import Translator
    from attention_ui.program.consequences import consequences

    at = open_page("app_pages/quiz.py", learner_text="猫が座った")
    config = AttentionConfig(mask="causal+padding", pad=1)
    questions = cq.code_questions(config, tokenize("猫が座った").tokens, 0)
    assert len(questions) >= 10
    radio = at.radio(key=f"quiz_code_q_{questions[0].template}")
    wrong = (questions[0].answer_index + 1) % 4
    radio.set_value(wrong).run()
    shown = "\n".join(m.value for m in at.markdown)
    t = Translator("en")
    for option in questions[0].options:  # every option's consequence, computed from its run
        for line in consequences(t, questions[0], option):
            assert f"- {line}" in shown
    assert translate("en", "code.q_wrong", letter="ABCD"[questions[0].answer_index]) in [
        e.value for e in at.error
    ]
