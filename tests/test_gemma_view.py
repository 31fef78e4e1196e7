"""The Gemma 3 view's checks and figures (issue 25): the band check and the score bound against
hand-built inputs, each with a deliberately broken input it must report; the figure builders through
``fig.data`` / ``fig.layout``; the long preset's length; the URL's model parameter."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.labs import decoder as lab_decoder
from attention_core.models import gemma3
from attention_ui.decoder import models, url
from attention_ui.figures import decoder as fdc
from attention_ui.figures.base import AxisText


def banded(n: int, window: int) -> np.ndarray:
    """Uniform causal weights inside a band of ``window`` keys: ``[1, n, n]``."""
    i, j = np.indices((n, n))
    allowed = (i - j >= 0) & (i - j < window)
    return (allowed / allowed.sum(axis=1, keepdims=True))[None]


def test_band_check_holds_on_a_band_and_reports_a_leak() -> None:
    w = banded(10, 3)
    assert lab_decoder.weight_outside_window(w, 3) == 0.0
    broken = w.copy()
    broken[0, 9, 2] = 0.25  # a key 7 positions back
    assert lab_decoder.weight_outside_window(broken, 3) == 0.25
    assert lab_decoder.weight_outside_window(broken, None) == 0.0  # a global layer has no band
    assert lab_decoder.keys_read_per_query(w).tolist() == [1, 2, 3, 3, 3, 3, 3, 3, 3, 3]


def test_score_bound_holds_and_reports_a_score_beyond_it() -> None:
    q_len, k_len = np.array([[2.0, 3.0]]), np.array([[4.0, 1.0]])
    ok = lab_decoder.score_bound(q_len, k_len, np.array([-0.5, 0.74]), 16.0)
    assert ok.bound == pytest.approx(3.0 * 4.0 / 16.0) and ok.largest == 0.74 and ok.holds
    broken = lab_decoder.score_bound(q_len, k_len, np.array([-0.9, 0.2]), 16.0)
    assert not broken.holds and broken.largest == 0.9


def test_mark_layers_frames_the_given_layers() -> None:
    grid = np.arange(18 * 4, dtype=float).reshape(18, 4)
    fig = fdc.head_grid(grid, (0, 0), value_title="v", kv_head_of=[0, 0, 0, 0])
    marked = fdc.mark_layers(fig, [5, 11, 17], "global <b>")
    names = [s.name for s in marked.layout.shapes if (s.name or "").startswith("marked")]
    assert names == ["marked layer 5", "marked layer 11", "marked layer 17"]
    rect = next(s for s in marked.layout.shapes if s.name == "marked layer 11")
    assert (rect.y0, rect.y1, rect.x0, rect.x1) == (10.5, 11.5, -0.5, 3.5)
    assert marked.layout.meta == {"marked": "global &lt;b&gt;"}
    assert len(fig.layout.shapes) == len(marked.layout.shapes) - 3  # the input is not changed


def test_mqa_diagram_links_four_query_heads_to_one_kv_head() -> None:
    fig = fdc.gqa_diagram(4, 1, 2)
    xs = [x for x in fig.data[0].x if x is not None]
    assert len(fig.data[1].x) == 4 and len(fig.data[2].x) == 1
    assert xs[1::2] == [1.5] * 4  # every line ends at the one KV head, centred under the four


def test_lengths_and_keys_read_figures_carry_the_numbers() -> None:
    fig = fdc.lengths_figure(np.array([3.0, 40.0]), np.array([16.0, 15.5]), before_name="b", after_name="a",
                             axes=AxisText("x", "y"))  # fmt: skip
    assert list(fig.data[0].y) == [3.0, 40.0] and list(fig.data[1].y) == [16.0, 15.5]
    fig = fdc.keys_read_figure(
        [[1, 2, 2], [1, 2, 3]], ["l0", "l5"], 2, axes=AxisText("x", "y"), window_name="w"
    )
    assert [list(d.y) for d in fig.data] == [[1, 2, 2], [1, 2, 3], [2, 2]]


def test_url_reads_the_model_and_ignores_an_unknown_one() -> None:
    values, ignored = url.parse({"model": "gemma3", "layer": "17", "head": "3"})
    assert values == {"decoder_model": "gemma3", "decoder_layer": 17, "decoder_head": 3} and ignored == ()
    values, ignored = url.parse({"model": "gpt5"})
    assert values == {} and ignored == ("model",)
    assert url.serialise({"decoder_model": "gemma3"}) == {"model": "gemma3"}


def test_windows_of_the_two_models() -> None:
    assert not models.has_window(models.config("smollm2"))
    assert models.has_window(models.config("gemma3"))
    assert [lay for lay in range(18) if models.config("gemma3").window_of(lay) is None] == [5, 11, 17]


@pytest.mark.skipif(not gemma3.is_available(), reason="Gemma 3 270M not installed")
@pytest.mark.parametrize("lang", ["en", "ja"])
def test_long_preset_is_longer_than_the_window(lang: str) -> None:
    from attention_ui.decoder.gemma_view import long_preset

    n = gemma3.encode(long_preset(lang)).total_tokens
    assert 512 < n <= gemma3.MAX_TOKENS, n


def test_pair_norm_change_reads_the_models_pairing() -> None:
    from attention_core.rope import apply_rope

    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 8))
    turned = apply_rope(x, np.arange(5), 10_000.0, "half")
    assert lab_decoder.max_pair_norm_change(x, turned, "half") < 1e-12
    # the broken case: reading a rotate-half vector as interleaved pairs sees lengths change
    assert lab_decoder.max_pair_norm_change(x, turned, "interleaved") > 1e-3


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_comparison_tables_cells_are_plain_text(lang):
    """A table cell shows its text as it is (no Markdown), so no cell of the two decoders' table
    may carry Markdown marks: the Japanese head_dim row once showed its backticks."""
    from attention_ui.decoder.gemma_view import compare_rows
    from attention_ui.i18n import Translator

    rows = compare_rows(Translator(lang), "The cat sat")
    cells = [str(v) for r in rows for v in (*r.keys(), *r.values())]
    assert len(rows) == 8 and cells
    assert not [c for c in cells if any(mark in c for mark in ("`", "**", "$"))], cells
