"""The playground's colour scales stay distinguishable from the masked grey with colour-vision
deficiency: CIELAB distance after Machado et al. (2009) full-severity simulation, computed here."""

from __future__ import annotations

import numpy as np
import plotly.colors as pc
import pytest

from attention_ui.figures import base, heatmaps

SIMULATIONS = {
    "normal": np.eye(3),
    "protanopia": np.array(
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
    ),
    "deuteranopia": np.array(
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
    ),
    "tritanopia": np.array(
        [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]
    ),
}
MIN_DELTA_E = 15.0  # clearly different patches side by side (ΔE ≈ 2 is "just noticeable")


def linear(rgb255: np.ndarray) -> np.ndarray:
    c = np.asarray(rgb255, float) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lab(lin_rgb: np.ndarray) -> np.ndarray:
    m = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = lin_rgb @ m.T / np.array([0.9505, 1.0, 1.089])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], -1)


def scale_colours(name: str) -> np.ndarray:
    cols = pc.sample_colorscale(name, np.linspace(0, 1, 201).tolist(), colortype="tuple")
    return np.array([[v * 255 if max(c) <= 1 else v for v in c] for c in cols])


def hex_rgb(h: str) -> np.ndarray:
    return np.array([[int(h[i : i + 2], 16) for i in (1, 3, 5)]])


def test_the_distance_detects_a_confusable_pair():
    # control: mid Viridis and mid grey collapse for deuteranopes, so the measure can fail
    viridis = scale_colours("Viridis")
    sim = SIMULATIONS["deuteranopia"]
    d = np.linalg.norm(
        lab(np.clip(linear(viridis) @ sim.T, 0, 1)) - lab(np.clip(linear(hex_rgb("#8c8c8c")) @ sim.T, 0, 1)),
        axis=1,
    )  # noqa: E501
    assert d.min() < 3


@pytest.mark.parametrize("scale", [base.WEIGHT_SCALE, base.DIVERGING_SCALE])
@pytest.mark.parametrize("vision", list(SIMULATIONS))
def test_masked_grey_is_distinguishable_from_every_colour_of_the_scale(scale, vision):
    sim = SIMULATIONS[vision]
    colours = lab(np.clip(linear(scale_colours(scale)) @ sim.T, 0, 1))
    grey = lab(np.clip(linear(hex_rgb(base.MASK_COLOR)) @ sim.T, 0, 1))
    assert np.linalg.norm(colours - grey, axis=1).min() >= MIN_DELTA_E


def _weights_figures():
    """Every figure that draws attention weights, built on a small causal example."""
    from attention_ui.masks import figures as figures_masks
    from attention_ui.playground import pretrained_figures as figures_pretrained

    tokens = ["a", "b", "c"]
    causal = np.tril(np.ones((3, 3), bool))
    w = np.where(causal, 1.0, 0.0) / causal.sum(axis=1, keepdims=True)
    return {
        "playground map": heatmaps.attention_heatmap(w, tokens, kind="weights", allowed=causal),
        "playground heads": heatmaps.heads_small_multiples(np.stack([w, w]), tokens, allowed=causal),
        "masks lab panels": figures_masks.panels_figure(
            [w, w], ["x", "y"], tokens, kind="weights", allowed=causal
        ),
        "pretrained overview": figures_pretrained.heads_overview(np.stack([np.stack([w, w])] * 2), tokens),
    }


def _scales_used(fig) -> list[list[str]]:
    scales = [tr.colorscale for tr in fig.data if tr.name == "values" and tr.colorscale is not None]
    if fig.layout.coloraxis.colorscale is not None:
        scales.append(fig.layout.coloraxis.colorscale)
    # a scale can be stored by name (layouts built from plain dicts skip Plotly's validation)
    return [[c for _, c in (pc.get_colorscale(s) if isinstance(s, str) else s)] for s in scales]


@pytest.mark.parametrize(
    "name", ["playground map", "playground heads", "masks lab panels", "pretrained overview"]
)
def test_every_weights_figure_uses_the_tested_weight_scale(name):
    used = _scales_used(_weights_figures()[name])
    assert used, "no weights colour scale found"
    expected = [c for _, c in pc.get_colorscale(base.WEIGHT_SCALE)]
    assert all(colours == expected for colours in used), (name, used)


# ---------------------------------------------------------------- text contrast (WCAG 2.1 AA, issue 18)

AA_TEXT = 4.5  # WCAG 2.1 AA for text below 18 pt (chart ticks, titles and cell numbers all are)


def wcag_contrast(rgb_a, rgb_b) -> float:
    """Contrast ratio written out from WCAG 2.1's definition (independent of base.contrast_ratio)."""

    def lum(rgb):
        c = [v / 255 for v in rgb]
        c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    hi, lo = sorted((lum(rgb_a), lum(rgb_b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def rgb_of(colour: str) -> tuple[float, ...]:
    colour = colour.strip()
    if colour.startswith("#"):
        return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return tuple(float(v) for v in colour[colour.index("(") + 1 : -1].split(",")[:3])


def cell_colour(trace, value: float) -> tuple[float, ...]:
    """The colour a heatmap trace paints ``value``: piecewise-linear RGB between its scale's stops."""
    scale = trace.colorscale
    stops = pc.get_colorscale(scale) if isinstance(scale, str) else scale
    pos = (value - trace.zmin) / (trace.zmax - trace.zmin)
    xs = [float(p) for p, _ in stops]
    cols = np.array([rgb_of(c) for _, c in stops], float)
    return tuple(np.interp(min(max(pos, 0.0), 1.0), xs, cols[:, k]) for k in range(3))


def test_the_contrast_measure_matches_known_pairs():
    assert wcag_contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert wcag_contrast(rgb_of("#808495"), (255, 255, 255)) == pytest.approx(3.72, abs=0.01)  # the old ticks
    # control: white on a mid-blue weight (0.6) fails AA, so the per-cell test below can fail
    mid_blue = cell_colour(heatmaps.attention_heatmap(np.eye(2), ("a", "b"), kind="weights").data[0], 0.6)
    assert wcag_contrast((255, 255, 255), mid_blue) < AA_TEXT


def test_chart_text_reaches_aa_on_white():
    template_font = base.PLAIN_TEMPLATE.layout.font.color
    assert wcag_contrast(rgb_of(template_font), (255, 255, 255)) >= AA_TEXT
    assert wcag_contrast(rgb_of(base.AXIS_TEXT_COLOR), (255, 255, 255)) >= AA_TEXT


def _text_maps():
    rng = np.random.default_rng(7)
    n = 8
    causal = np.tril(np.ones((n, n), bool))
    logits = rng.normal(0, 2, (n, n))
    w = np.exp(np.where(causal, logits, -np.inf))
    w /= w.sum(axis=1, keepdims=True)
    w[0, 0] = 1.0
    scores = rng.normal(0, 3, (n, n))
    tokens = [f"t{i}" for i in range(n)]
    return {
        "weights": heatmaps.attention_heatmap(w, tokens, kind="weights", allowed=causal),
        "weights, every level": heatmaps.attention_heatmap(
            np.linspace(0, 1, 64).reshape(8, 8), tokens, kind="weights"
        ),
        "signed scores": heatmaps.attention_heatmap(
            np.where(causal, scores, -np.inf), tokens, allowed=causal
        ),
        "signed, every level": heatmaps.attention_heatmap(np.linspace(-1, 1, 64).reshape(8, 8), tokens),
        # scaled scores on the raw scores' wider scale (steps 3/4): a cell that is dark on its own
        # scale is light on the shared one, and its number's colour must follow the shared one
        "signed, shared bound": heatmaps.attention_heatmap(
            np.linspace(-1, 1, 64).reshape(8, 8), tokens, bound=2.9
        ),
        "features": heatmaps.feature_heatmap(rng.normal(0, 1, (n, 4)), tokens),
        "mask": heatmaps.mask_heatmap(causal, tokens),
    }


@pytest.mark.parametrize("name", list(_text_maps()))
def test_every_printed_cell_number_reaches_aa_against_its_cell(name):
    fig = _text_maps()[name]
    main = next(tr for tr in fig.data if tr.name == "values")
    z = np.array([[np.nan if v is None else v for v in row] for row in main.z], float)
    checked = 0
    for trace in fig.data:
        if trace.texttemplate is None or trace.text is None:
            continue
        ink = rgb_of(trace.textfont.color)
        for i, row in enumerate(trace.text):
            for j, label in enumerate(row):
                if not label:
                    continue
                if trace.name == "masked":
                    paper = rgb_of(base.MASK_COLOR)
                else:
                    paper = cell_colour(main, z[i, j])
                    assert label == f"{z[i, j]:.2f}".replace("-", "−")  # the number shown is the cell's
                ratio = wcag_contrast(ink, paper)
                assert ratio >= AA_TEXT, (name, trace.name, i, j, label, ratio)
                checked += 1
    assert checked > 0 or name == "mask"


def test_leakage_numbers_and_exact_zeros_reach_aa():
    from attention_ui.masks import figures as figures_masks

    moved = np.array([[0.5, 1e-3, 0.0], [1e-16, 0.0, 1e-9], [0.0, 1e-6, 0.2]])
    fig = figures_masks.leakage_heatmap(moved, ["a", "b", "c"], zero_label="0")
    colours, zeros = fig.data[:2]
    z = np.array([[np.nan if v is None else v for v in row] for row in colours.z], float)
    checked = 0
    for trace in fig.data:
        ink = rgb_of(trace.textfont.color)
        for i, row in enumerate(trace.text):
            for j, label in enumerate(row):
                if label:
                    paper = (
                        rgb_of(zeros.colorscale[0][1])
                        if trace.name == "exact zero"
                        else cell_colour(colours, z[i, j])
                    )
                    assert wcag_contrast(ink, paper) >= AA_TEXT, (trace.name, i, j, label)
                    checked += 1
    assert checked == 9


def test_exact_zero_diamond_labels_reach_aa_on_white():
    from attention_ui.masks import figures as figures_masks

    assert wcag_contrast(rgb_of(figures_masks.EXACT_ZERO_TEXT), (255, 255, 255)) >= AA_TEXT
