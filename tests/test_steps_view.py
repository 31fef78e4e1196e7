"""The playground's step texts (attention_ui/playground/steps_view.py): step 1's text escapes a repeated
Markdown token, step 4 writes = for an exact root and ≈ otherwise."""

from __future__ import annotations


def test_step_1_text_escapes_a_repeated_markdown_token():
    from attention_ui.playground.steps_view import x_explanation

    said = x_explanation(lambda key, **v: f"{key}|{v.get('token', '')}", ["*", "b", "*"])
    assert said == r"playground.explain_x_repeat|\*"
    assert x_explanation(lambda key, **v: key, ["x", "[PAD]", "[PAD]"], n_pad=2) == "playground.explain_x"


def test_step_4_says_equals_for_an_exact_root_and_approx_otherwise():
    from attention_core import AttentionConfig, trace_text
    from attention_ui.playground.steps_view import scaled_latex

    exact = trace_text("a b c", AttentionConfig(d_model=16, heads=4))  # d_k = 4
    assert scaled_latex(exact, False).endswith(r"\sqrt{4} = 2")
    inexact = trace_text("a b c", AttentionConfig(d_model=16, heads=2))  # d_k = 8
    assert scaled_latex(inexact, False).endswith(r"\sqrt{8} \approx 2.828")
