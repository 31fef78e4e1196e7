"""What the page's code box starts from (attention_core/codecheck/templates.py): the code generator's
one-head function with exactly its scaling line replaced by a TODO, and the empty template when the
generator writes no such line. (That the preset runs and is named ``no_scaling`` by the real check is
tested in test_check.py.)"""

from __future__ import annotations

from attention_core import codegen
from attention_core.codecheck import templates


def test_the_preset_is_the_generated_function_with_only_the_scaling_line_taken_out():
    right = codegen.one_head_function().splitlines()
    preset = templates.one_step_removed()
    assert preset.endswith("\n")
    changed = [(a, b) for a, b in zip(right, preset.splitlines(), strict=True) if a != b]
    assert len(changed) == 1
    before, after = changed[0]
    assert before.lstrip().startswith("scaled = ") and "sqrt" in before
    indent = before[: len(before) - len(before.lstrip())]
    assert after == indent + "scaled = scores  # TODO: the scaling step was removed: put it back"


def test_without_a_scaling_line_the_preset_is_the_empty_template(monkeypatch):
    monkeypatch.setattr(codegen, "one_head_function", lambda: "def attention(X):\n    return X\n")
    assert templates.one_step_removed() == templates.TEMPLATE
    assert "def attention(X, W_Q, W_K, W_V, mask, d_k):" in templates.TEMPLATE
    assert "return np.zeros((n, d_v))" in templates.TEMPLATE
