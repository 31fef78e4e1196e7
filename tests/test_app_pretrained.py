"""The playground's pretrained mode through Streamlit's AppTest.

Numbers on the page are checked against the golden file made once with Hugging Face transformers
on PyTorch (tests/data/minilm_golden.npz, see scripts/make_golden_minilm.py), not against our own
forward pass. The missing-model test runs everywhere; the rest skip when the model is missing.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core.models import minilm as pretrained
from attention_ui.i18n import translate
from tests.apptest_pages import charts, open_page, z
from tests.test_app_playground import assert_box_after_intro

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "minilm_golden.npz"
TOL = 1e-4  # the golden tolerance of the core's own test

needs_model = pytest.mark.skipif(not pretrained.is_available(), reason="pretrained model not installed")


def golden_case(i: int) -> tuple[dict, np.ndarray]:
    data = np.load(GOLDEN)
    meta = json.loads(bytes(data["meta_json"]).decode())["cases"][i]
    return meta, np.asarray(data[f"case{i}_attentions"], dtype=float)  # [L, h, n, n]


def assert_healthy(at: AppTest) -> None:
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def to_pretrained(at: AppTest, text: str | None = None, pad: int | None = None) -> AppTest:
    at.radio(key="pg_weights").set_value("pretrained").run()
    if text is not None:
        at.text_area(key="pg_text").input(text).run()
    if pad is not None:
        at.number_input(key="pg_pad").set_value(pad).run()
    assert_healthy(at)
    return at


@pytest.fixture
def at() -> AppTest:
    return open_page()


@needs_model
def test_switch_to_pretrained_shows_wordpieces_overview_and_the_steps(at):
    meta, golden = golden_case(0)  # "Tokenization makes transformers surprisingly interesting."
    to_pretrained(at, meta["text"], 0)
    figs = charts(at)
    overview = figs["pg_chart_pt_overview"]
    # 72 panels, then one trace of click targets per panel (heatmaps report no clicks)
    assert [tr["type"] for tr in overview["data"]] == ["heatmap"] * 72 + ["scatter"] * 72
    # subword tokens exactly as the tokenizer makes them, [CLS]/[SEP] included, in order
    assert overview["data"][0]["x"] == [f"#{i} {tok}" for i, tok in enumerate(meta["tokens"])]
    for layer in range(6):
        for head in range(12):
            np.testing.assert_allclose(z(overview, layer * 12 + head), golden[layer, head], atol=TOL)
    # the same step-by-step views as with random weights, for layer 0 head 0 (one sentence, no
    # padding: nothing is masked, so the mask steps say so instead of drawing all-zero maps)
    for step in ("x", "q", "k", "v", "raw", "scaled", "weights", "head_out", "all_heads", "concat", "output"):
        assert f"pg_chart_{step}" in figs, step
    assert "pg_chart_mask" not in figs and "pg_chart_masked" not in figs
    weights = figs["pg_chart_weights"]
    ticks = weights["layout"]["xaxis"]["ticktext"]
    assert ticks[:4] == ["[CLS]", "token", "##ization", "makes"] and ticks[-2:] == [".", "[SEP]"]
    for tick, tok in zip(ticks[4:7], ("transformers", "surprisingly", "interesting"), strict=True):
        assert tick.endswith("…") and tok.startswith(tick[:-1]), (tick, tok)  # long labels shortened
    np.testing.assert_allclose(z(weights), golden[0, 0], atol=TOL)
    assert z(figs["pg_chart_x"]).shape == (9, 384)  # d_model follows the model
    assert z(figs["pg_chart_q"]).shape == (9, 32)  # d_k
    assert len(at.selectbox(key="pg_head").options) == 12  # one line above the overview
    # where the playground has its head radio, the steps say which head they show and link back
    assert not any(r.key == "pg_head" for r in at.radio)
    assert any(
        m.value == translate("en", "pretrained.head_pointer", layer=0, head=0, anchor="#pretrained-overview")
        for m in at.markdown
    )
    # the fixed shape is stated, and the random-weights controls are gone
    assert any("384" in i.value and "32" in i.value for i in at.info)
    keys = {w.key for w in at.get("number_input")}
    assert "pg_d_model" not in keys and "pg_heads" not in keys and "pg_pad" in keys
    assert not any("[UNK]" in i.value for i in at.info)  # no [UNK] in an English sentence


@needs_model
def test_layer_and_head_selectors_pick_the_right_matrix_and_frame_it(at):
    meta, golden = golden_case(0)
    to_pretrained(at, meta["text"], 0)
    at.radio(key="pg_pt_layer").set_value(3).run()
    at.selectbox(key="pg_head").set_value(5).run()
    assert_healthy(at)
    figs = charts(at)
    np.testing.assert_allclose(z(figs["pg_chart_weights"]), golden[3, 5], atol=TOL)
    np.testing.assert_allclose(z(figs["pg_chart_all_heads"], 5), golden[3, 5], atol=TOL)
    # the red frame sits on panel (3, 5): axes number 3*12+5 = 41 -> "x42"/"y42"
    overview = figs["pg_chart_pt_overview"]
    (frame,) = overview["layout"]["shapes"]
    x0, x1 = overview["layout"]["xaxis42"]["domain"]
    y0, y1 = overview["layout"]["yaxis42"]["domain"]
    assert frame["x0"] < x0 < x1 < frame["x1"] and frame["y0"] < y0 < y1 < frame["y1"]
    assert any(h.value.startswith(translate("en", "pretrained.steps_title", layer=3)) for h in at.header)


@needs_model
def test_padding_mask_only_and_pads_do_not_change_the_real_tokens(at):
    meta, golden = golden_case(2)  # "The cat sat on the mat." with 3 [PAD]s
    to_pretrained(at, meta["text"], meta["pad"])
    figs = charts(at)
    weights = z(figs["pg_chart_weights"])
    n = len(meta["tokens"])
    assert weights.shape == (n, n)
    real = n - 3
    np.testing.assert_allclose(weights[:, :real], golden[0, 0][:, :real], atol=TOL)
    assert np.isnan(weights[:, real:]).all()  # [PAD] keys are masked (grey overlay)
    mask_overlay = z(figs["pg_chart_mask"], 1)
    assert np.isnan(mask_overlay[:, :real]).all() and (mask_overlay[:, real:] == 1).all()  # padding only
    assert any(translate("en", "playground.mask_padding") in m.value for m in at.markdown)


@needs_model
def test_hiding_special_tokens_removes_their_rows_and_columns_only_from_the_display(at):
    meta, golden = golden_case(0)
    to_pretrained(at, meta["text"], 0)
    at.toggle(key="pg_pt_hide_special").set_value(True).run()
    assert_healthy(at)
    figs = charts(at)
    keep = [i for i, tok in enumerate(meta["tokens"]) if tok not in ("[CLS]", "[SEP]")]
    weights = z(figs["pg_chart_weights"])
    np.testing.assert_allclose(weights, golden[0, 0][np.ix_(keep, keep)], atol=TOL)
    assert "[CLS]" not in figs["pg_chart_weights"]["layout"]["xaxis"]["ticktext"]
    assert (weights.sum(axis=1) < 1 - 1e-3).all()  # the UI says rows no longer add up to 1
    assert any(i.value == translate("en", "pretrained.hidden_note") for i in at.info)
    overview = figs["pg_chart_pt_overview"]
    assert [tr["type"] for tr in overview["data"]].count("heatmap") == 72
    np.testing.assert_allclose(z(overview, 71), golden[5, 11][np.ix_(keep, keep)], atol=TOL)
    # the token chips still list every token
    assert any("CLS" in m.value and "SEP" in m.value for m in at.markdown)


@needs_model
def test_japanese_sentence_gets_unk_note_and_japanese_ui(at):
    meta, golden = golden_case(1)  # Japanese: [UNK] for kanji, voicing marks stripped
    at.session_state["lang"] = "ja"
    at.run()
    to_pretrained(at, meta["text"], 0)
    figs = charts(at)
    overview = figs["pg_chart_pt_overview"]
    assert [lab.split(" ", 1)[1] for lab in overview["data"][0]["x"]] == meta["tokens"]
    np.testing.assert_allclose(z(overview, 0), golden[0, 0], atol=TOL)
    unk = meta["tokens"].count("[UNK]")
    assert any(i.value == translate("ja", "pretrained.unk_note", count=unk) for i in at.info)
    assert at.radio(key="pg_weights").label == translate("ja", "pretrained.weights")
    assert any(h.value == translate("ja", "pretrained.overview_title") for h in at.header)


@needs_model
def test_switching_back_to_random_restores_the_random_playground(at):
    to_pretrained(at)
    at.selectbox(key="pg_head").set_value(11).run()
    at.radio(key="pg_weights").set_value("random").run()
    assert_healthy(at)
    figs = charts(at)
    assert "pg_chart_pt_overview" not in figs
    assert z(figs["pg_chart_weights"]).shape == (6, 6)  # "the cat sat on the mat", random tokenizer
    assert len(at.radio(key="pg_head").options) == 2


def test_missing_model_shows_the_install_command_and_the_rest_keeps_working(at, monkeypatch):
    monkeypatch.setattr(pretrained, "is_available", lambda: False)
    at.radio(key="pg_weights").set_value("pretrained").run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == [translate("en", "pretrained.missing")]
    codes = [c.value for c in at.code]
    assert "make model" in codes
    assert pretrained.INSTALL_COMMAND in codes
    assert "pg_chart_pt_overview" not in charts(at)
    # the rest of the app still works: back to random weights
    at.radio(key="pg_weights").set_value("random").run()
    assert_healthy(at)
    assert "pg_chart_weights" in charts(at)


def test_model_failing_to_load_shows_the_same_message(at, monkeypatch):
    def unavailable(*args, **kwargs):
        raise pretrained.PretrainedUnavailable("The optional library 'tokenizers' is not installed")

    monkeypatch.setattr(pretrained, "is_available", lambda: True)
    monkeypatch.setattr(pretrained, "run_text", unavailable)
    at.radio(key="pg_weights").set_value("pretrained").run()
    at.text_area(key="pg_text").input("a sentence never computed before 7f3a").run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == [translate("en", "pretrained.missing")]
    assert "make model" in [c.value for c in at.code]


def step_one_heading(at: AppTest) -> str:
    (heading,) = [h.value for h in at.header if h.value.startswith("1. ")]
    return heading


@needs_model
def test_shared_url_opens_the_pretrained_layer_and_head_with_the_models_weights():
    meta, golden = golden_case(0)
    at = open_page(
        params={"weights": "pretrained", "layer": "3", "head": "5", "hide": "0", "text": meta["text"]}
    )
    assert_healthy(at)
    assert not at.warning, [w.value for w in at.warning]
    assert at.radio(key="pg_weights").value == "pretrained" and at.radio(key="pg_pt_layer").value == 3
    assert at.selectbox(key="pg_head").value == 5
    figs = charts(at)
    np.testing.assert_allclose(z(figs["pg_chart_weights"]), golden[3, 5], atol=TOL)  # independent (PyTorch)
    trace = pretrained.run_text(meta["text"]).layers[3]
    np.testing.assert_allclose(z(figs["pg_chart_weights"]), trace.weights[5], atol=1e-12)
    assert at.query_params["weights"] == "pretrained" and at.query_params["layer"] == "3"
    # and the other way: changing the view writes it back into the URL
    at.radio(key="pg_pt_layer").set_value(1).run()
    at.toggle(key="pg_pt_hide_special").set_value(True).run()
    assert at.query_params["layer"] == "1" and at.query_params["hide"] == "1"


@needs_model
def test_malformed_pretrained_url_values_fall_back_with_a_notice():
    at = open_page(params={"weights": "pretrained", "layer": "9", "hide": "perhaps"})
    assert_healthy(at)
    notice = " ".join(w.value for w in at.warning)
    assert "layer" in notice and "hide" in notice
    assert at.radio(key="pg_pt_layer").value == 0 and at.toggle(key="pg_pt_hide_special").value is False
    assert "layer" in at.query_params and at.query_params["layer"] == "0"


@needs_model
def test_step_one_describes_the_models_own_input(at):
    random_heading = step_one_heading(at)
    assert random_heading == "1. " + translate("en", "playground.step_x")
    to_pretrained(at)
    assert step_one_heading(at) == "1. " + translate("en", "pretrained.step_x_first")
    assert any("LayerNorm" in lat.value for lat in at.latex) and not any(
        lat.value == "X = E + P" for lat in at.latex
    )
    at.radio(key="pg_pt_layer").set_value(4).run()
    assert step_one_heading(at) == "1. " + translate("en", "pretrained.step_x_later", previous=3)
    assert any(
        m.value == translate("en", "pretrained.explain_x_later", layer=4, previous=3) for m in at.markdown
    )
    at.radio(key="pg_weights").set_value("random").run()
    assert step_one_heading(at) == random_heading


@pytest.mark.skipif(not pretrained.is_available(), reason="all-MiniLM-L6-v2 not installed")
def test_the_pretrained_view_has_the_same_box_in_the_same_place() -> None:
    at = open_page(pg_weights="pretrained")
    assert_box_after_intro(at, "en", "pretrained.intro")
    assert at.main.text_area(key="pg_text").help == translate("en", "pretrained.text_help")
