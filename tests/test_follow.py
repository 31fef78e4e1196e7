"""The live class's view (attention_ui/classroom/follow.py): a student receives exactly the settings the
playground's table marks ``live``, and each comes back into a session that adopts the view."""

from __future__ import annotations

from attention_ui.classroom import follow
from attention_ui.playground.settings import CONFIG_KEYS, DEFAULTS, TABLE


def _teacher_state() -> dict:
    """A teacher's playground with every live setting away from its default."""
    key = TABLE.key
    return {
        key("text"): "the teacher's own sentence",
        key("preset"): "sentence",
        key("max_tokens"): 40,
        key("d_model"): 12,
        key("heads"): 3,
        key("auto_dims"): False,
        key("d_k"): 5,
        key("d_v"): 6,
        key("mask"): "causal",
        key("pad"): 1,
        key("scale"): "custom",
        key("divisor"): 3.5,
        key("seed"): 42,
        key("positional"): False,
        key("head"): 2,
        key("step"): 6,
        key("all_heads"): True,  # not live: a student's own
        "lang": "en",
    }


def test_a_student_receives_the_tables_live_settings_and_nothing_else():
    teacher = _teacher_state()
    live = {TABLE.setting(k.removeprefix("pg_")).name for k in TABLE.live_keys}
    assert {"text", "step", "head"} | set(CONFIG_KEYS) <= live
    view = follow.view_of(teacher)
    assert set(view) - {"config"} | set(view["config"]) == live
    assert set(view["config"]) == set(CONFIG_KEYS)
    student: dict = {}
    follow.adopt_view(student, view)
    for key in TABLE.live_keys:
        assert student.get(key) == teacher[key], f"{key} does not reach the student"
    assert TABLE.key("all_heads") not in student


def test_a_setting_marked_live_is_sent_even_when_the_teacher_never_touched_it():
    view = follow.view_of({"lang": "ja"})
    assert view["config"]["d_model"] == DEFAULTS[TABLE.key("d_model")] and view["step"] == 1
    assert view["text"]  # the starting sentence in the teacher's language
