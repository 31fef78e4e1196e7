"""The masks lab in the offline lesson (issue 45): the chosen mask, the masked scores and the weights,
the same figures the page draws (:func:`maps`), with the section's text and formula."""

from __future__ import annotations

from attention_ui.figures import heatmaps
from attention_ui.takehome.lesson import Figure, Section

# Attention with the additive mask, and the mask: two parts, side by side where they fit and one
# below the other on a phone (kit.latex; in the lesson, two formulas).
FORMULA = (
    r"\mathrm{Attention}(Q,K,V) = \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}} + M\right)V,",
    r"M_{ij} = \begin{cases} 0 & j \in \mathcal{A}_i \\ -\infty & j \notin \mathcal{A}_i \end{cases}",
)
TITLES = {"mask": "m_title", "masked_scores": "masked_scores_title", "weights": "weights_title"}


def maps(lab, **axes) -> dict:
    """The chosen mask, the masked scores and the weights of the correct method, as heatmaps."""
    tokens, allowed = lab.settings.tokens, lab.mask.allowed
    weights = lab.methods[0].effective_weights
    return {
        "mask": heatmaps.mask_heatmap(allowed, tokens, **axes),
        "masked_scores": heatmaps.attention_heatmap(lab.masked_scores, tokens, allowed=allowed, **axes),
        "weights": heatmaps.attention_heatmap(weights, tokens, kind="weights", allowed=allowed, **axes),
    }


def summary(t, lab, kind_name: str) -> str:
    """What the mask forbids, then what this kind of mask is for (Markdown)."""
    mask, n = lab.mask, len(lab.settings.tokens)
    per_query = ", ".join(str(int(c)) for c in mask.allowed_per_query)
    counts = dict(kind=kind_name, masked=mask.masked_cells, total=n * n, per_query=per_query)
    about = t(f"masks.about_{mask.kind.replace('+', '_')}", w=lab.settings.window)
    return t("masks.mask_summary", **counts) + "\n\n" + about


def section(t, lab, hover, kind_name: str) -> Section:
    axes = dict(hover=hover, query_title=t("masks.axis_query"), key_title=t("masks.axis_key"))
    n = len(lab.settings.tokens)
    figures = tuple(
        Figure(fig, t(f"masks.alt_{name}", n=n), t(f"masks.{TITLES[name]}"))
        for name, fig in maps(lab, **axes).items()
    )
    return Section(
        anchor="lab-masks",
        title=t("masks.h_mask"),
        text=t("masks.explain_mask") + "\n\n" + t("masks.allowed_set"),
        formulas=FORMULA,
        figures=figures,
        note=summary(t, lab, kind_name),
        figures_in_row=True,
    )
