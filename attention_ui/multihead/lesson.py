"""The multi-head lab in the offline lesson (issue 45): every head's weights side by side, the figure
the page draws (:func:`heads_figure`), with the section's text and formula."""

from __future__ import annotations

from attention_ui.figures import heatmaps
from attention_ui.takehome.lesson import Figure, Section

FORMULA = r"\mathrm{head}_i = \mathrm{softmax}\!\left(\frac{Q_i K_i^\top}{\sqrt{d_k}}\right) V_i,\quad i = 0, \dots, h-1"


def heads_figure(t, trace, hover):
    return heatmaps.heads_small_multiples(
        trace.weights, trace.tokens, hover=hover, head_title=t("multihead.head_name", h="{h}")
    )


def section(t, lab, hover) -> Section:
    trace = lab.trace
    return Section(
        anchor="lab-heads",
        title=t("multihead.sec_heads"),
        text=t("multihead.explain_heads"),
        formulas=(FORMULA,),
        figures=(
            Figure(heads_figure(t, trace, hover), t("multihead.alt_heads", heads=trace.heads, n=trace.n)),
        ),
        note=t("multihead.heads_distinct", distinct=lab.distinct_patterns, heads=trace.heads),
    )
