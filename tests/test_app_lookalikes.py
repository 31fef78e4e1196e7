"""The look-alikes page driven through app.py with AppTest: every control changed, no traceback,
and the drawn numbers checked against independent NumPy loops."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from attention_core import AttentionConfig, trace_text
from attention_ui.i18n import translate
from tests.apptest_pages import box, captions, charts, go, open_page, z

ROOT = Path(__file__).resolve().parents[1]
PAGE = "app_pages/lookalikes.py"


@pytest.fixture
def at() -> AppTest:
    return open_page(PAGE)


def naive_weights(Q: np.ndarray, K: np.ndarray, d_k: int, causal: bool = False) -> np.ndarray:
    """softmax(q_i·k_j/√d_k) with plain loops; causal: keys j > i excluded."""
    n_q, n_k = Q.shape[0], K.shape[0]
    W = np.zeros((n_q, n_k))
    for i in range(n_q):
        allowed = [j for j in range(n_k) if not (causal and j > i)]
        s = [sum(Q[i, c] * K[j, c] for c in range(d_k)) / math.sqrt(d_k) for j in allowed]
        m = max(s)
        e = [math.exp(x - m) for x in s]
        for j, v in zip(allowed, e, strict=True):
            W[i, j] = v / sum(e)
    return W


def test_default_page_draws_every_section(at: AppTest) -> None:
    assert at.title[0].value == translate("en", "lookalikes.title")
    assert set(charts(at, "lookalikes_chart_")) == {
        "self",
        "cross",
        "additive",
        "dot",
        "bidir",
        "causal",
        "path",
        "cost",
        *(
            f"ssm_{name}"
            for name in ("attention", "linear", "ssm_fixed", "ssm_selective", "row", "steps", "state")
        ),
    }
    # two static comparison tables: RNN vs attention (4 aspects) and the confusable terms (6 rows)
    assert [len(t.value) for t in at.table] == [4, 6]
    assert not at.error


def test_cross_attention_is_rectangular_and_matches_a_loop(at: AppTest) -> None:
    spec = charts(at, "lookalikes_chart_")["cross"]
    w = z(spec)
    assert w.shape == (6, 7)  # "the cat sat on the mat" x "le chat était assis sur le tapis"
    assert spec["layout"]["yaxis"]["ticktext"] == ["the", "cat", "sat", "on", "the", "mat"]
    assert spec["layout"]["xaxis"]["ticktext"][:2] == ["le", "chat"]
    cfg = AttentionConfig(d_model=16, heads=2, seed=0)
    a = trace_text("the cat sat on the mat", cfg)
    b = trace_text("le chat était assis sur le tapis", cfg)
    Q = a.X @ a.W_Q[0]  # head 0: queries from sentence 1
    K = b.X @ a.W_K[0]  # keys from sentence 2, same weights
    np.testing.assert_allclose(w, naive_weights(Q, K, Q.shape[1]), atol=1e-9)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-9)


def test_second_sentence_and_head_change_the_columns(at: AppTest) -> None:
    at.text_input(key="lookalikes_text_b").set_value("a b c").run()
    at.selectbox(key="lookalikes_heads").set_value(4).run()
    at.selectbox(key="lookalikes_head").set_value(3).run()
    assert not at.exception
    cfg = AttentionConfig(d_model=16, heads=4, seed=0)
    a, b = trace_text("the cat sat on the mat", cfg), trace_text("a b c", cfg)
    w = z(charts(at, "lookalikes_chart_")["cross"])
    assert w.shape == (6, 3)
    np.testing.assert_allclose(w, naive_weights(a.X @ a.W_Q[3], b.X @ a.W_K[3], a.W_Q.shape[2]), atol=1e-9)
    # fewer heads than the chosen head: the head resets to 0 instead of failing
    at.selectbox(key="lookalikes_heads").set_value(1).run()
    assert not at.exception
    assert at.selectbox(key="lookalikes_head").value == 0


def test_causal_map_masks_the_future_and_keeps_the_last_row(at: AppTest) -> None:
    c = charts(at, "lookalikes_chart_")
    bidir, causal = z(c["bidir"]), z(c["causal"])
    n = bidir.shape[0]
    assert np.isnan(causal[np.triu_indices(n, 1)]).all()  # masked cells are drawn by the grey overlay
    assert causal[0, 0] == pytest.approx(1.0)
    np.testing.assert_allclose(causal[-1], bidir[-1], atol=1e-12)
    cfg = AttentionConfig(d_model=16, heads=2, seed=0)
    a = trace_text("the cat sat on the mat", cfg)
    Q, K = a.X @ a.W_Q[0], a.X @ a.W_K[0]
    ref = naive_weights(Q, K, Q.shape[1], causal=True)
    np.testing.assert_allclose(np.nan_to_num(causal), ref, atol=1e-9)


def test_additive_vs_dot_and_hidden_size(at: AppTest) -> None:
    c = charts(at, "lookalikes_chart_")
    add, dot = z(c["additive"]), z(c["dot"])
    assert add.shape == dot.shape == (6, 6)
    np.testing.assert_allclose(add.sum(axis=1), 1.0, atol=1e-9)
    # parameter count of vᵀ tanh(W1 q + W2 k): d_a·d_k + d_a·d_k + d_a with d_k = 8, d_a = 8
    assert any("136" in cap.value for cap in at.caption)
    at.slider(key="lookalikes_d_a").set_value(3).run()
    assert not at.exception
    assert any(str(3 * 8 + 3 * 8 + 3) in cap.value for cap in at.caption)
    assert not np.allclose(z(charts(at, "lookalikes_chart_")["additive"]), add)


def test_rnn_path_widgets(at: AppTest) -> None:
    at.slider(key="lookalikes_n").set_value(12).run()
    at.slider(key="lookalikes_i").set_value(2).run()
    at.slider(key="lookalikes_j").set_value(9).run()
    metrics = [m.value for m in at.metric][:4]  # the state-space section's metrics follow
    assert metrics == ["7", "1", "12", "1"]  # |9 − 2| RNN steps, one attention hop, n sequential steps
    # shrinking n clamps i and j instead of raising
    at.slider(key="lookalikes_n").set_value(4).run()
    assert not at.exception
    assert at.slider(key="lookalikes_j").value == 3
    assert [m.value for m in at.metric][0] == "1"  # |3 − 2|


def test_cost_verdict_follows_n_and_d(at: AppTest) -> None:
    at.number_input(key="lookalikes_cost_n").set_value(100).run()
    at.number_input(key="lookalikes_cost_d").set_value(400).run()
    text = " ".join(m.value for m in at.markdown)
    assert "4×" in text  # n·d² / n²·d = d/n = 4
    assert any("16,000,000" in tex.value.replace("{,}", ",") for tex in at.latex)  # 100²·400
    at.number_input(key="lookalikes_cost_n").set_value(400).run()
    assert any(translate("en", "lookalikes.cost_equal") == m.value for m in at.markdown)
    spec = charts(at, "lookalikes_chart_")["cost"]
    xs, att, rnn = (
        np.array(spec["data"][0]["x"]),
        np.array(spec["data"][0]["y"]),
        np.array(spec["data"][1]["y"]),
    )
    np.testing.assert_allclose(att, xs**2 * 400)
    np.testing.assert_allclose(rnn, xs * 400**2)


def test_empty_sentence_is_a_message_not_a_traceback(at: AppTest) -> None:
    at.text_input(key="lookalikes_text_a").set_value("   ").run()
    assert not at.exception
    assert [e.value for e in at.error] == [translate("en", "lookalikes.err_empty_a")]
    assert {"path", "cost"} <= set(
        charts(at, "lookalikes_chart_")
    )  # the RNN section does not need a sentence


def test_tables_toggle_and_long_input(at: AppTest) -> None:
    at.toggle(key="lookalikes_tables").set_value(True).run()
    at.text_input(key="lookalikes_text_a").set_value(" ".join(f"w{i}" for i in range(40))).run()
    assert not at.exception
    assert len(at.dataframe) >= 6
    assert at.warning and "40" in at.warning[0].value
    assert z(charts(at, "lookalikes_chart_")["self"]).shape == (16, 16)


def test_japanese(at: AppTest) -> None:
    at.session_state["lang"] = "ja"  # the language switch lives in app.py's sidebar
    at.run()
    assert not at.exception
    assert at.title[0].value == translate("ja", "lookalikes.title")
    assert charts(at, "lookalikes_chart_")["cross"]["layout"]["yaxis"]["title"]["text"] == translate(
        "ja", "lookalikes.axis_query"
    )


def test_catalogs_have_the_same_keys_and_placeholders() -> None:
    from attention_ui.i18n import placeholders

    base = ROOT / "attention_ui" / "locales"
    en = json.loads((base / "en" / "lookalikes.json").read_text(encoding="utf-8"))
    ja = json.loads((base / "ja" / "lookalikes.json").read_text(encoding="utf-8"))
    assert set(en) == set(ja)
    for key in en:
        assert en[key].strip() and ja[key].strip(), key
        assert placeholders(en[key]) == placeholders(ja[key]), key


def test_a_labs_own_sentence_is_said_to_be_its_own_and_a_typed_one_carries_back():
    at = open_page("app_pages/lookalikes.py")
    own = translate("en", "lookalikes.default_text_a")
    assert box(at, "lookalikes_text_a").value == own
    assert translate("en", "app.sentence_own") in captions(at)
    assert translate("en", "app.sentence_yours") not in captions(at)
    at.text_input(key="lookalikes_text_a").input("a bird sang").run()
    assert translate("en", "app.sentence_yours") in captions(at)
    go(at, "app_pages/cost.py")
    assert at.text_area(key="cost_text").value == "a bird sang"
    go(at, "app_pages/playground.py")
    assert at.text_area(key="pg_text").value == "a bird sang"
