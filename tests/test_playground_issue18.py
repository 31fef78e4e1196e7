"""Issue 18, playground side (besides presenter mode): the explainer follows a click and frames the
chosen cell, raw and scaled scores share one colour scale, sharing and export, text that follows the
input, and the pretrained overview's click-to-pick."""

from __future__ import annotations

import pytest

from attention_ui.playground import explain_view
from tests.apptest_pages import charts, open_page


def frames(spec: dict) -> list[tuple[float, float, float, float]]:
    return [(s["x0"], s["x1"], s["y0"], s["y1"]) for s in spec["layout"].get("shapes", [])]


def test_open_cell_explainer_frames_its_cell_on_every_score_and_weight_map():
    at = open_page(params={"mask": "causal"})
    assert all(not frames(charts(at)[f"pg_chart_{k}"]) for k in ("raw", "scaled", "masked", "weights"))
    at.session_state["pg_cell_q"], at.session_state["pg_cell_k"] = 3, 1
    at.toggle(key="pg_explain_cell").set_value(True).run()
    drawn = charts(at)
    for key in ("raw", "scaled", "masked", "weights"):
        assert frames(drawn[f"pg_chart_{key}"]) == [(0.5, 1.5, 2.5, 3.5)], key  # column 1, row 3
    assert not frames(drawn["pg_chart_x"])  # feature maps are not framed
    at.toggle(key="pg_explain_cell").set_value(False).run()
    assert not frames(charts(at)["pg_chart_raw"])


def test_scroll_script_fills_in_only_numbers_and_a_fixed_panel_name():
    a = explain_view.scroll_script("cell", 4)
    assert "const CLICK = 4," in a and ".st-key-pg_cell_panel" in a
    assert explain_view.scroll_script("cell", 5) != a  # a new click runs it again
    with pytest.raises(ValueError):
        explain_view.scroll_script("<img>", 1)


def test_raw_and_scaled_scores_share_one_colour_scale_by_default():
    import numpy as np

    from attention_ui.i18n import translate
    from tests.apptest_pages import z

    at = open_page(lang="ja")
    drawn = charts(at)
    raw, scaled = drawn["pg_chart_raw"], drawn["pg_chart_scaled"]
    bound = np.nanmax(np.abs(z(raw)))  # √8 > 1: the raw scores hold the largest |score|
    for spec in (raw, scaled):
        assert spec["data"][0]["zmin"] == pytest.approx(-bound) and spec["data"][0]["zmax"] == pytest.approx(
            bound
        )
    assert np.nanmax(np.abs(z(scaled))) == pytest.approx(bound / np.sqrt(8))
    note = translate("ja", "playground.shared_scale_scaled", bound=f"{bound:.3g}", step=3)
    assert note in [c.value for c in at.caption]
    at.toggle(key="pg_shared_scale").set_value(False).run()
    assert at.query_params["shared"] == "0"
    scaled = charts(at)["pg_chart_scaled"]
    assert scaled["data"][0]["zmax"] == pytest.approx(bound / np.sqrt(8))  # its own range again
    assert note not in [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_step_1_text_follows_the_sentence_and_step_4_writes_the_divisor_apart(lang):
    from attention_ui.i18n import translate

    at = open_page(lang=lang, params={"text": "a dog saw a cat"} if lang == "en" else {"text": "犬と犬"})
    text = " ".join(m.value for m in at.markdown)
    assert "the cat sat on the mat" not in text and "猫" not in text
    if lang == "en":
        assert (
            "“a”" in text
            and translate("en", "playground.explain_x_repeat", token="a", first=0, second=3) in text
        )
    else:
        assert translate("ja", "playground.explain_x_repeat", token="犬", first=0, second=2) in text
    latex = [m.value.strip("$\n") for m in at.latex if m.value.startswith("$$\nS' =")]
    assert latex == [r"S' = \frac{S}{\sqrt{d_k}},\qquad \sqrt{d_k} = \sqrt{8} \approx 2.828"]
    other = open_page(lang=lang, params={"text": "one two three"})
    assert translate(lang, "playground.explain_x") in [m.value for m in other.markdown]


def test_step_1_text_escapes_a_repeated_markdown_token():
    from attention_ui.playground.steps_view import x_explanation

    said = x_explanation(lambda key, **v: f"{key}|{v.get('token', '')}", ["*", "b", "*"])
    assert said == r"playground.explain_x_repeat|\*"
    assert x_explanation(lambda key, **v: key, ["x", "[PAD]", "[PAD]"], n_pad=2) == "playground.explain_x"


def test_matrix_csv_matches_the_trace_for_one_or_all_heads():
    import csv
    import io
    import math

    import numpy as np

    from attention_core import AttentionConfig, export, trace_text

    tr = trace_text('a b, "c" =d a', AttentionConfig(d_model=8, heads=2, mask="causal", seed=3))
    n = tr.n

    def rows(name, heads=None):
        data = export.matrix_csv(tr, name, heads)
        assert data.startswith("\ufeff".encode())  # BOM for spreadsheets
        return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))

    one = rows("weights", [1])
    assert one[0] == ["head", "query"] + [f"{i} {tok}" for i, tok in enumerate(tr.tokens)]
    assert len(one) == 1 + n and all(r[0] == "1" for r in one[1:])
    for i in range(n):  # independently: a causal softmax of the scaled raw scores, head 1
        s = [
            sum(tr.Q[1, i, c] * tr.K[1, j, c] for c in range(tr.Q.shape[2])) / math.sqrt(4)
            for j in range(i + 1)
        ]
        e = [math.exp(x - max(s)) for x in s]
        expect = [x / sum(e) for x in e] + [0.0] * (n - i - 1)
        np.testing.assert_allclose([float(x) for x in one[1 + i][2:]], expect, atol=1e-12)
    every = rows("scores_masked")
    assert [r[0] for r in every[1:]] == ["0"] * n + ["1"] * n
    assert every[1][3] == "-inf"  # query 0 may not see key 1
    shared = rows("X", [0])
    assert shared[0][:3] == ["token", "d0", "d1"] and len(shared) == 1 + n
    assert all(r[0][0].isdigit() for r in shared[1:])  # labels start with the position, never "=", "-"
    with pytest.raises(ValueError):
        export.matrix_csv(tr, "W_Q")
    with pytest.raises(ValueError):
        export.matrix_csv(tr, "weights", [2])


def test_step_4_says_equals_for_an_exact_root_and_approx_otherwise():
    from attention_core import AttentionConfig, trace_text
    from attention_ui.playground.steps_view import scaled_latex

    exact = trace_text("a b c", AttentionConfig(d_model=16, heads=4))  # d_k = 4
    assert scaled_latex(exact, False).endswith(r"\sqrt{4} = 2")
    inexact = trace_text("a b c", AttentionConfig(d_model=16, heads=2))  # d_k = 8
    assert scaled_latex(inexact, False).endswith(r"\sqrt{8} \approx 2.828")


@pytest.mark.parametrize("stale", ["2 · sat", None, True, 1.0])
def test_a_stale_cell_label_from_the_browser_is_no_chosen_cell(stale):
    """The export menu reads the chosen cell before the selectboxes are drawn; the browser may still
    send the label of a cell of the previous sentence (seen in Chromium: "2 · sat" stopped the page)."""
    opened = {explain_view.CELL_OPEN: True, explain_view.Q_KEY: 3, explain_view.K_KEY: 1}
    assert explain_view.chosen_cell(opened) == (3, 1)
    assert explain_view.chosen_cell({**opened, explain_view.CELL_OPEN: False}) is None
    assert explain_view.chosen_cell({**opened, explain_view.Q_KEY: stale}) is None
    assert explain_view.chosen_cell({**opened, explain_view.K_KEY: stale}) is None
    assert explain_view.chosen_cell({explain_view.CELL_OPEN: True}) == (0, 0)  # nothing chosen yet
