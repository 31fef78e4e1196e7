"""Numbers the teaching text states, recomputed from the core.

Each test names the catalog message it holds to account, checks that the number is still written
there (in both languages), and recomputes it independently or with the core's own functions.

The statements a strict lecturer marked wrong (issue 24, points 12-26) are held to account the same way:
the corrected statement is what both catalogs now say (the old wording would fail), and where the core
can compute the claim, it is recomputed from a separate formula or by hand. (The SmolLM2 file's number
formats that decoder.limits names are read from the file in tests/models/test_smollm2.py.)
"""

from __future__ import annotations

import importlib.metadata
import math
import os

import numpy as np
import pytest

from attention_core.config import AttentionConfig
from attention_core.labs import decoder as lab_decoder
from attention_core.labs import efficient as lab_efficient
from attention_core.labs import heads as H
from attention_core.labs import inference as li
from attention_core.labs import positions as lp
from attention_core.labs import ring as lab_ring
from attention_core.labs.cost import MAX_DIRECT_N, measure_direct_attention, memory_table
from attention_core.labs.masks import LAB_MASK_KINDS, allowed_mask
from attention_core.labs.scaling import one_row
from attention_core.models.gemma3 import CHUNK_DISTRIBUTIONS, GEMMA3_270M, MODEL_DISTRIBUTION
from attention_core.models.llama import next_token_probs
from attention_core.rope import apply_rope
from attention_core.tiled import tiled_attention
from attention_ui.i18n import LANGUAGES, translate
from classroom.model import Poll, PollTally
from tests.apptest_pages import no_exception, open_page


def text(key: str, lang: str = "en", **values) -> str:
    return translate(lang, key, **values)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_sqrt_128_is_about_11_3(lang):
    assert "\\sqrt{128} \\approx 11.3" in text("scaling.explain_row", lang)
    assert "\\sqrt{64} = 8" in text("scaling.explain_row", lang)
    assert f"{AttentionConfig(d_model=128, heads=1).divisor:.1f}" == "11.3" == f"{math.sqrt(128):.1f}"
    assert AttentionConfig(d_model=64, heads=1).divisor == 8


def test_the_default_row_behaves_as_the_hint_says():
    """scaling.row_hint: divisor 1 gives one bar near 1 and a tiny ‖J‖; divisor 8 makes ‖J‖ several times larger."""
    row = [8, 4, 2, 0, -2, -6]
    assert "8, 4, 2, 0, -2, -6" in text("scaling.row_scores_help") and "8, 4, 2, 0, -2, -6" in text(
        "scaling.row_scores_help", "ja"
    )
    raw, scaled = one_row(row, 1.0), one_row(row, 8.0)
    assert raw.max_weight > 0.95
    assert scaled.jacobian_norm > 3 * raw.jacobian_norm


def test_exp_overflows_above_709_8():
    """quiz.comp_softmax_shift: float64 exp overflows above about 709.8."""
    assert "709.8" in text("quiz.comp_softmax_shift", scores="s", col=0)
    limit = math.log(np.finfo(np.float64).max)
    assert f"{limit:.1f}" == "709.8"
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(709.8)) and np.isfinite(np.exp(709.7))


def test_the_notes_table_reading():
    """cost.units_note: 8.39 MB in decimal units, and the notes' "1.9 TB" between 2.00 TB and 1.82 TiB."""
    note = text("cost.units_note", decimal="D", binary="B")
    assert "8.39 MB" in note and "1.9 TB" in note
    rows = memory_table()
    assert f"{rows[0].decimal_value:.2f} {rows[0].decimal_unit}" == "8.39 MB"
    last = rows[-1]
    assert last.bytes == 2 * 10**12
    assert (
        last.binary_value < 1.9 < last.decimal_value
        and last.decimal_unit == "TB"
        and last.binary_unit == "TiB"
    )
    # "in the first four rows each ×4 in n costs ×16 in memory"
    for a, b in zip(rows[:3], rows[1:4], strict=True):
        assert b.n == 4 * a.n and b.bytes == 16 * a.bytes


def test_the_largest_measurement_needs_about_0_3_gb():
    """cost.max_n_help: n = 4,096 needs about 0.3 GB. The direct peak is a fixed number of n × n float64
    matrices, so it is measured at n = 512 (cheap) and scaled to n = 4,096. (It was about 0.7 GB, five
    matrices, until steps.softmax stopped making two more n × n temporaries, issue 33.)"""
    assert "4,096" in text("cost.max_n_help") and "0.3 GB" in text("cost.max_n_help")
    assert MAX_DIRECT_N == 4096
    small = measure_direct_attention(512, d=64)
    matrices = small.peak_bytes / small.matrix_bytes
    assert 1.5 <= matrices <= 3
    predicted = matrices * 4096 * 4096 * 8
    assert 0.25e9 <= predicted <= 0.35e9


def test_no_row_of_the_masks_lab_is_fully_masked():
    """masks.explain_mask: every row keeps at least one allowed key (at least one real token, window ≥ 1)."""
    assert "at least one allowed key" in text("masks.explain_mask")
    for kind in LAB_MASK_KINDS:
        for n_real in range(1, 17):
            for pads in range(0, 5):
                for window in range(1, 9):
                    allowed = allowed_mask(kind, n_real + pads, pads, window)
                    assert allowed.any(axis=1).all(), (kind, n_real, pads, window)


def test_gqa_example():
    """cost.method_gqa: 32 query heads in 8 groups share 8 key/value heads: 4× fewer K and V."""
    for lang in LANGUAGES:
        assert "32" in text("cost.method_gqa", lang) and "8" in text("cost.method_gqa", lang)
    query_heads, groups = 32, 8
    assert query_heads // groups == 4 and "4×" in text("cost.method_gqa")


def test_without_positions_reordering_only_reorders_the_outputs():
    """playground.x_no_positional: with positional encoding off and no causal mask, attention is
    permutation-equivariant; with a causal mask it is not."""
    from attention_core import trace_tokens

    assert "reorders the outputs" in text("playground.x_no_positional")
    tokens = ("the", "cat", "sat", "on", "a", "mat")
    perm = [3, 0, 5, 1, 4, 2]
    for mask, equivariant in (("none", True), ("causal", False)):
        cfg = AttentionConfig(d_model=8, heads=2, positional=False, mask=mask)
        out = trace_tokens(tokens, cfg).output
        out_perm = trace_tokens(tuple(tokens[i] for i in perm), cfg).output
        assert np.allclose(out_perm, out[perm], atol=1e-12) == equivariant


# --------------------------------------------------------------------------------------------------
# Issue 33, points 8-10: each claim the catalogs make, worked out here independently of the code
# that shows it, then read back in both languages. The old wordings are named so they cannot return.


def both(key: str, **values: object) -> tuple[str, str]:
    return translate("en", key, **values), translate("ja", key, **values)


# --- 8. ring: when the b × b block is the largest part -------------------------------------------------


def _memory(b: int, d: int) -> dict[str, int]:
    return lab_ring.ring_costs(4 * b, d, 4, 2, 100e9, 100e12).memory  # P = 4 devices: block b


@pytest.mark.parametrize("d", [16, 64])
def test_the_score_block_is_largest_once_b_exceeds_2d_and_all_others_once_6d_plus_2(d: int) -> None:
    for b, largest, above_all in (
        (2 * d, False, False), (2 * d + 1, True, False), (6 * d + 2, True, False), (6 * d + 3, True, True),
    ):  # fmt: skip
        mem = _memory(b, d)
        others = [v for k, v in mem.items() if k != "scores"]
        assert mem["scores"] == b * b
        assert (mem["scores"] > max(others), mem["scores"] > sum(others)) == (largest, above_all), b
    en, ja = both("ring.memory_note")
    assert "largest single part once b > 2d" in en and "all the other parts together once b > 6d + 2" in en
    assert "b が 2d を超えると" in ja and "b が 6d + 2 を超えると" in ja and "exceeds 6d;" not in en


# --- 9. QK-norm caps the lengths; it does not fix them ----------------------------------------------------


def test_after_the_norm_a_length_is_at_most_root_d_times_the_largest_gain() -> None:
    rng = np.random.default_rng(0)
    d = 8
    gain = rng.uniform(-3.0, 2.0, d)
    x = rng.normal(size=(500, d)) * rng.uniform(0.01, 100.0, (500, 1))  # any lengths
    normed = gain * x / np.sqrt((x**2).mean(axis=1, keepdims=True))
    lengths = np.linalg.norm(normed, axis=1)
    cap = lab_decoder.norm_length_cap(gain)
    assert cap == pytest.approx(np.sqrt(d) * 3.0, rel=0.05) and lengths.max() <= cap
    assert lengths.max() - lengths.min() > 1.0  # the lengths vary: the norm does not fix them
    one_hot = np.eye(d)[np.abs(gain).argmax()]  # all of x on the largest gain reaches the cap
    reached = np.linalg.norm(gain * one_hot / np.sqrt((one_hot**2).mean()))
    assert reached == pytest.approx(cap)
    en, ja = both("decoder.g_h_qk_norm")
    assert "fixed" not in en and "caps" in en and "そろえる" not in ja and "上限" in ja
    en, ja = both("decoder.g_score_bound_holds")
    assert "this bound holds for this sentence" in en and "for any input" in en
    assert "この文についての上限" in ja and "どの入力でも" in ja


# --- 10. imprecise statements -------------------------------------------------------------------------


def test_induction_is_looking_and_copying_and_the_score_measures_the_looking() -> None:
    en, ja = both("heads.explain_induction")
    assert "both halves" in en and "measures the looking only" in en
    assert "見ることと写すことの両方" in ja and "測るのは見ることだけ" in ja


@pytest.mark.parametrize("m", [4, 10])
def test_uniform_bounds_with_and_without_bos(m: int) -> None:
    """A uniform head: query i of the second copy (positions m..2m-1 of the sequence) weighs each of
    the i + 1 keys it sees equally, one key more when <bos> is read first."""
    for bos, key, low, high in ((0, "induction_summary", "1/(2m)", "1/(m+1)"),
                                (1, "induction_summary_bos", "1/(2m+1)", "1/(m+2)")):  # fmt: skip
        weights = [1 / (i + 1 + bos) for i in range(m, 2 * m)]
        assert (min(weights), max(weights)) == (1 / (2 * m + bos), 1 / (m + 1 + bos))
        for text in both(f"heads.{key}"):
            assert f"{low} " in text and f"{high} " in text
    en, ja = both("heads.induction_bos")
    assert "losses below" in en and "下のスコア" in ja


def test_after_the_shift_the_mean_lengths_differ_and_the_text_says_so() -> None:
    rng = np.random.default_rng(1)
    Q, K = rng.normal(1.0, 1.0, (12, 6)), rng.normal(-2.0, 0.5, (12, 6))
    Qs, Ks, c = H.qk_common_space(Q, K)
    mean = lambda X: np.linalg.norm(X, axis=1).mean()  # noqa: E731
    assert mean(Q * c) == pytest.approx(mean(K / c))  # matched before the move
    assert abs(mean(Qs) - mean(Ks)) > 0.1  # not after it
    en, ja = both("heads.explain_qk")
    assert "no longer the queries'" in en and "もうクエリとそろっていません" in ja


def test_the_long_text_memory_figures() -> None:
    n = 827
    dropped = lab_decoder.dropped_detail_bytes(GEMMA3_270M, n)
    assert dropped["q"] == 18 * 4 * n * 256 * 4 and round(dropped["q"] / 1e6) == 61
    assert dropped["scores"] == 2 * 18 * 4 * n * n * 4 and dropped["scores"] > 6 * dropped["q"]
    en, ja = both("decoder.g_rope_long")
    assert "several hundred MB" not in en and "{scores_mb} MB" in en and "{q_mb} MB" in en
    assert "数百 MB" not in ja and "{scores_mb} MB" in ja


def test_the_install_sizes() -> None:
    en, ja = both("decoder.g_not_installed_pip")
    assert "four packages of about 63 MB" in en and "0.2 MB" in en and "250 MB" in en
    assert "各約 63 MB のパッケージ 4 個" in ja and "0.2 MB" in ja and "約 250 MB" in ja
    try:
        dists = [importlib.metadata.distribution(d) for d in (MODEL_DISTRIBUTION, *CHUNK_DISTRIBUTIONS)]
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("Gemma's packages are not installed: the sizes are not measured here")
    sizes = [sum(os.path.getsize(p) for f in d.files if (p := d.locate_file(f)).is_file()) for d in dists]
    assert sizes[0] < 0.3e6 and all(60e6 < s < 66e6 for s in sizes[1:])
    assert 245e6 < sum(sizes) < 260e6


def test_one_logsumexp_per_row_gives_back_the_weights() -> None:
    """FlashAttention-2/3 keep one statistic per row, L = m + log ℓ: exp(s - L) is the softmax row."""
    s = np.random.default_rng(2).normal(size=(5, 9)) * 4
    m, ell = s.max(axis=1, keepdims=True), np.exp(s - s.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)
    lse = m + np.log(ell)
    np.testing.assert_allclose(np.exp(s - lse), np.exp(s) / np.exp(s).sum(axis=1, keepdims=True), rtol=1e-12)
    en, ja = both("cost.method_flash")
    assert "FlashAttention-1 keeps two per row" in en and "keep one, their logsumexp" in en
    assert "logsumexp の 1 つ" in ja and "統計量 2 つ（" not in ja


def test_the_share_is_over_the_answers_given() -> None:
    poll = Poll("p", 1, 0, {}, 3, 0, "revealed")
    assert PollTally(poll, (2, 1, 1)).share_right == 0.5  # 2 of 4 answers, whatever the class size
    en, ja = both("class.revealed")
    assert "of the answers given" in en and "class that had it" not in en and "回答のうち" in ja


def test_nystrom_landmarks_come_from_queries_and_keys() -> None:
    for key in ("cost.method_linear", "quiz.q_ring_linear_why"):
        en, ja = both(key)
        assert "landmark keys" not in en and "queries" in en[en.index("Nyström") :]
        assert "クエリとキー" in ja[ja.index("ナイストローム") :]


def test_a_class_has_no_minimum_length(tmp_path) -> None:
    from classroom.sqlite_store import SqliteStore

    store = SqliteStore(tmp_path / "c.sqlite3")
    store.migrate()
    store.start_session(hours=0.001)  # 3.6 seconds: accepted, so "a few minutes" was no minimum
    en, ja = both("class.err_hours")
    assert "few minutes" not in en and "more than 0 and at most 48 hours" in en and "数分" not in ja


def test_the_ring_grid_says_what_grey_and_green_mean() -> None:
    """Green cells are the blocks a device folds in, grey the wholly future ones the causal mask hides."""
    from attention_ui.figures import cost as fcost

    lab = lab_ring.ring_lab(16, 4, 4, causal=True, row=0)
    bounds = lab_ring.block_bounds(16, 4)
    for p in range(4):
        for t in range(4):
            k0 = bounds[int(lab.ring.schedule[p, t])][0]
            assert lab.ring.computed[p, t] == (k0 < bounds[p][1])  # some key not after every query
    scale = fcost.block_grid_trace([[0.0, 1.0]]).colorscale  # 0 = skipped, 1 = folded in
    assert (scale[0][1], scale[-1][1]) == (fcost.SKIPPED_COLOR, fcost.COMPUTED_COLOR)
    en, ja = both("ring.schedule_note")
    assert "Green: the device folds" in en and "Grey: it skips" in en and "causal mask" in en
    assert "緑のマス" in ja and "灰色のマス" in ja


# --------------------------------------------------------------------------------------------------
# Issue 42, points 9-10: what the decoder's long-text section says its button does, and the names of
# its two "back" buttons. The behaviour each sentence describes is driven in
# tests/test_app_decoder_gemma.py (the long text leaves the learner's sentence in the box); here the words
# are read in both languages, and the old wordings are named so they cannot return.


def test_the_long_text_button_is_said_to_leave_the_sentence_in_the_box() -> None:
    en, ja = both("decoder.g_explain_local_global", window=512)
    assert (
        "puts one in the sentence box" not in en and "入力欄に入れられます" not in ja
    )  # false: it never does
    assert "runs this page on one" in en and "your sentence stays in the box" in en
    assert (
        "長い文でこのページを動かします" in ja
        and "入力した文は入力欄にもほかのページにもそのまま残ります" in ja
    )


GENERATED = {"en": "generated tokens", "ja": "生成したトークン"}
LONG_TEXT = {"en": "long text", "ja": "長い文"}
BACK = {"en": ("back", "return", "undo"), "ja": ("戻",)}


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_two_back_buttons_name_what_each_one_takes_away(lang: str) -> None:
    """「元の文に戻す」 (undo the generated tokens) and 「入力した文に戻る」 (leave the long text) were both
    a "back to the sentence": each now names what it removes, and only one of them says "back"."""
    reset, leave = translate(lang, "decoder.reset_button"), translate(lang, "decoder.g_back_button")
    assert GENERATED[lang] in reset and LONG_TEXT[lang] not in reset
    assert LONG_TEXT[lang] in leave and GENERATED[lang] not in leave
    assert not any(word in reset.lower() for word in BACK[lang])
    assert reset not in ("Back to the sentence", "元の文に戻す") and leave not in (
        "Back to your sentence",
        "入力した文に戻る",
    )


MIB = 2**20


def by_language(key: str) -> dict[str, str]:
    return {lang: translate(lang, key) for lang in LANGUAGES}


def test_rope_score_is_q_transpose_r_n_minus_m_k():
    """(R_m q)ᵀ(R_n k) = qᵀ R_{n−m} k, with R built by hand pair by pair (interleaved, base 10000)."""
    rng = np.random.default_rng(24)
    d, base, m, n = 8, 10000.0, 7, 3
    q, k = rng.standard_normal(d), rng.standard_normal(d)
    left = apply_rope(q[None], np.array([m]), base)[0] @ apply_rope(k[None], np.array([n]), base)[0]
    turned = np.empty(d)
    for i in range(d // 2):
        a = (n - m) * base ** (-2 * i / d)
        c, s = math.cos(a), math.sin(a)
        turned[2 * i], turned[2 * i + 1] = c * k[2 * i] - s * k[2 * i + 1], s * k[2 * i] + c * k[2 * i + 1]
    assert left == pytest.approx(q @ turned, abs=1e-12)
    en, ja = by_language("decoder.rope_offset_summary").values()
    assert "for a given q and k" in en and "R_{n-m}" in translate(
        "en", "decoder.rope_offset_summary", **_ph()
    )
    assert "q と k が同じなら" in ja and "R_{{n-m}}" in ja
    assert "given q and k" in translate("en", "decoder.h_offset")
    assert "For a given q and k" in translate("en", "positions.extrap_rope")
    assert "q と k が同じなら" in translate("ja", "positions.extrap_rope")
    assert "q·k turned by" not in en and "`RoPE`" not in ja


def _ph() -> dict[str, str]:
    return dict(i=1, j=0, offset=1, score=0, starts=0, spread=0, plain=0)


def test_high_temperature_flattens_towards_uniform():
    logits = np.array([3.0, 1.0, -2.0, -5.0])
    hot = next_token_probs(logits, temperature=1000.0)
    assert np.max(hot) - np.min(hot) < 0.01  # near 1/4 each, not piled on the least probable
    assert list(np.argsort(-hot)) == [0, 1, 2, 3]  # order kept
    assert next_token_probs(logits, temperature=0.05)[0] > 0.999
    en, ja = by_language("decoder.about_temperature").values()
    assert "uniform" in en and "least probable" not in en
    assert "一様分布" in ja and "最も確率の低い" not in ja


@pytest.mark.parametrize("lang", LANGUAGES)
def test_l_is_the_training_length_and_l_minus_1_the_longest_seen_position(lang):
    lab = lp.positions_lab(lp.PositionsSettings("a b c", seen=10))
    assert lab.extrapolation_positions[-1] == 3 * 10 - 1
    learned = lab.extrapolation["learned"]
    assert not np.isnan(learned[9]) and np.all(np.isnan(learned[10:]))  # rows 0 … L − 1 only
    assert "L − 1" in translate(lang, "positions.seen")
    text = translate(lang, "positions.explain_extrapolation", key="a", query="c", end=29, seen=10, last=9)
    assert "L − 1 = 9" in text
    assert "9" in translate(lang, "positions.alt_extrapolation", key="a", query="c", end=29, last=9)
    assert "longest seen position L" not in translate("en", "positions.seen")


def test_additive_encodings_go_in_before_w_v_too():
    for lang, text in by_language("positions.explain_schemes").items():
        assert "$W_V$" in text, lang


def test_gqa_keeps_the_attention_flops_and_shrinks_the_kv_projection():
    d, h, g, d_k = 64, 8, 2, 8
    for n in (1, 100, 4096):
        gap = li.step_flops_cached(n, d, h, h, d_k) - li.step_flops_cached(n, d, h, g, d_k)
        assert gap == 2 * d * 2 * (h - g) * d_k  # only the K and V projections of the new token
    assert li.cache_size(1, 100, h, g, d_k, 2).ratio == g / h  # the cache read per step, g/h of MHA's
    en, ja = by_language("inference.size_note").values()
    assert "projection" in en and "QKᵀ" in en and "the attention computation, stay the same" not in en
    assert "射影" in ja and "QKᵀ" in ja


def test_calculator_shapes_know_their_context_and_window():
    ctx = {p.key: (p.context, p.window) for p in li.PRESETS}
    assert ctx["gpt2"] == (1024, 0) and ctx["llama2_7b"] == (4096, 0) and ctx["llama2_70b"] == (4096, 0)
    assert ctx["mistral_7b"] == (8192, 4096) and ctx["smollm2"] == (8192, 0)
    # Mistral 7B, 8,192 tokens, FP16: 2 · 32 layers · 4,096 held · 8 KV heads · 128 · 2 bytes = 512 MiB
    size = li.cache_size(32, 8192, 32, 8, 128, 2, window=4096)
    assert size.bytes == 2 * 32 * 4096 * 8 * 128 * 2 == 512 * MIB and size.held == 4096
    assert li.cache_size(32, 8192, 32, 8, 128, 2).bytes == 1024 * MIB  # without the window: 1 GiB
    # a model whose window is in some layers only (local layers between global ones)
    mixed = li.cache_size(6, 8192, 8, 4, 64, 2, window=1024, window_layers=5)
    assert mixed.bytes == 2 * (5 * 1024 + 1 * 8192) * 4 * 64 * 2
    with pytest.raises(ValueError):
        li.ModelShape("x", "X", 4, 8, 4, 64, "s", context=100, window=10, window_layers=5)


def test_calculator_page_caps_at_the_window_and_at_the_context():
    mistral = [p.key for p in li.PRESETS].index("mistral_7b")
    at = open_page(
        "app_pages/inference.py",
        inference_preset=mistral,
        inference_calc_n=8192,
        inference_dtype="float16 / bfloat16",
    )
    no_exception(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[translate("en", "inference.size_metric", g=8)] == "512 MiB"
    assert any("4,096" in m.value and "8,192" in m.value for m in at.markdown)  # window_note
    at.selectbox(key="inference_preset").set_value([p.key for p in li.PRESETS].index("gpt2")).run()
    assert at.session_state["inference_calc_window"] == 0
    # GPT-2 small reads 1,024 tokens: 2 · 12 · 1,024 · 12 · 64 · 2 bytes = 36 MiB, with a warning
    assert {m.label: m.value for m in at.metric}[translate("en", "inference.size_metric", g=12)] == "36 MiB"
    assert any("1,024" in w.value for w in at.warning)


def test_cached_step_reaches_slope_1_past_d_h_2g_over_2h():
    assert li.flops_knee(16, 4, 2) == 16 == 16 * (4 + 2 * 2) / (2 * 4)  # the page's defaults
    curve = li.flops_curve([1, 2, 16, 32, 4096, 8192], 16, 4, 2)
    c = np.array(curve.cached, float)
    slopes = np.log2(c[1::2] / c[0::2])  # per doubling
    assert slopes[0] < 0.1 and 0.4 < slopes[1] < 0.7 and slopes[2] > 0.99
    for lang in LANGUAGES:
        assert "= 16" in translate(lang, "inference.alt_flops", n_max="65,536", knee=16)
        assert "d(h + 2g)/(2h)" in translate(lang, "inference.alt_flops")


def test_without_a_causal_mask_layer_0_kv_stay_and_deeper_kv_go_stale():
    rng = np.random.default_rng(22)
    n, d = 5, 8
    X = rng.standard_normal((n, d))
    W = [rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(6)]

    def layer(x, wq, wk, wv):  # unmasked single-head attention, written out here
        s = (x @ wq) @ (x @ wk).T / math.sqrt(d)
        a = np.exp(s - s.max(axis=1, keepdims=True))
        return (a / a.sum(axis=1, keepdims=True)) @ (x @ wv)

    def keys(x):  # layer 0's keys from the embeddings, layer 1's from layer 0's outputs
        return x @ W[1], layer(x, *W[:3]) @ W[4]

    k0_short, k1_short = keys(X[:-1])
    k0_full, k1_full = keys(X)
    assert np.array_equal(k0_short, k0_full[:-1])  # reusable
    assert np.max(np.abs(k1_short - k1_full[:-1])) > 1e-3  # stale
    en, ja = by_language("inference.explain_causal").values()
    assert "layer 0" in en and "recompute everything" not in en
    assert "層 0" in ja


def test_not_only_random_features_approximate_softmax():
    for key in ("cost.method_linear", "quiz.q_ring_linear_why"):
        en, ja = by_language(key).values()
        assert "Taylor" in en and "Nyström" in en and "only random-feature" not in en, key
        assert "テイラー" in ja and "ナイストローム" in ja and "ランダム特徴の写像だけ" not in ja, key
        assert "not meant to" in en, key


def test_tiled_attention_keeps_the_row_statistics_flash_attention_writes():
    rng = np.random.default_rng(24)
    Q, K, V = rng.standard_normal((7, 4)), rng.standard_normal((7, 4)), rng.standard_normal((7, 3))
    out = tiled_attention(Q, K, V, block_q=3, block_k=2, causal=True)
    s = Q @ K.T / 2.0
    s[np.triu_indices(7, 1)] = -np.inf
    assert out.row_max.shape == out.row_sum.shape == (7,)
    assert np.allclose(out.row_max, s.max(axis=1))
    assert np.allclose(out.row_max + np.log(out.row_sum), np.log(np.exp(s).sum(axis=1)))
    en, ja = by_language("cost.method_flash").values()
    assert "statistics" in en and "O(n)" in en and "only the output is written" not in en
    assert "統計量" in ja


@pytest.mark.parametrize("d", [16, 64])
def test_linear_crossover_against_full_and_causal_softmax(d):
    # recurrence n(4d² + 4d); full softmax n²(4d + 6); causal softmax n(n + 1)/2 · (4d + 6)
    full = next(n for n in range(1, 10**4) if n * (4 * d * d + 4 * d) < n * n * (4 * d + 6))
    causal = next(n for n in range(1, 10**4) if n * (4 * d * d + 4 * d) < n * (n + 1) / 2 * (4 * d + 6))
    assert lab_efficient.linear_crossover_n(d, d, d) == full
    assert lab_efficient.linear_crossover_n(d, d, d, causal=True) == causal
    assert abs(full - d) <= 1 and abs(causal - 2 * d) <= 2
    en = translate("en", "cost.lin_crossover", d=d, n=full, n_causal=causal)
    assert "full (non-causal) softmax" in en and f"from n = {causal} on" in en
    ja = translate("ja", "cost.lin_crossover", d=d, n=full, n_causal=causal)
    assert f"n = {causal} 以上" in ja and "因果マスクなし" in ja


def test_no_quadratic_form_for_the_n_squared_matrix():
    for key in ("cost.lin_diff", "cost.lin_ok", "quiz.q_linear_state_why"):
        en, ja = translate("en", key), translate("ja", key)
        assert "quadratic form" not in en and "二次の形" not in ja, key
        assert "O(n²) matrix form" in en and "O(n²) の行列の形" in ja, key


def em_width(text: str) -> float:
    """Rough rendered width in em: wide (CJK) characters 1 em, everything else half of one."""
    import unicodedata

    return sum(1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.5 for ch in text)


# The cost lab's window check puts four metrics in a row: at 1366 × 768 each label has about 220 px,
# 16 em of the 14 px label font, before Streamlit cuts it with "…" (two ja labels were cut).
@pytest.mark.parametrize("lang", LANGUAGES)
def test_cost_window_metric_labels_fit_a_quarter_of_the_page(lang):
    for key in ("cost.win_diff", "cost.win_model_diff", "cost.check_tiles", "cost.win_scores"):
        assert em_width(translate(lang, key)) <= 16, (lang, key, translate(lang, key))


def test_second_reading_conditions_are_stated():
    """quiz.q_rope_offset_why carries point 15's condition; decoder.about_top_k says for which T."""
    en, ja = by_language("quiz.q_rope_offset_why").values()
    assert "for a given q and k" in en and "q と k が同じなら" in ja
    logits = np.array([2.0, 1.5, -1.0, 0.5])
    for temp in (0.3, 1.0, 7.0):  # top-2 keeps the same two tokens at every T > 0
        assert set(np.flatnonzero(next_token_probs(logits, temperature=temp, top_k=2))) == {0, 1}
    for lang, text in by_language("decoder.about_top_k").items():
        assert "T > 0" in text, lang
