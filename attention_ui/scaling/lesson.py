"""The √d_k lab in the offline lesson (issue 45): the variance of q·k against d_k, raw and scaled,
the same figures the page draws (:func:`variance_figures`), with the section's text and formula."""

from __future__ import annotations

from attention_ui.figures.base import AxisText
from attention_ui.scaling import figures as fsq
from attention_ui.takehome.lesson import Figure, Section

FORMULA = (
    r"\operatorname{Var}(q\cdot k) = \sum_{i=1}^{d_k} \operatorname{Var}(q_i k_i) = d_k,"
    r"\qquad \operatorname{Var}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right) = 1"
)


def variance_figures(t, res) -> dict:
    """The measured variance against d_k, raw (``"raw"``) and divided by √d_k (``"scaled"``)."""
    figures = {}
    for kind in ("raw", "scaled"):
        theory = t("scaling.theory_one" if kind == "scaled" else "scaling.theory_dk")
        axes = AxisText("d_k", t(f"scaling.axis_var_{kind}"), t(f"scaling.title_var_{kind}"))
        figures[kind] = fsq.dot_variance_figure(
            res, kind == "scaled", measured_name=t("scaling.measured"), theory_name=theory, axes=axes
        )
    return figures


def section(t, res, d_ks, samples: int) -> Section:
    figures = tuple(
        Figure(fig, t(f"scaling.alt_var_{kind}", lo=d_ks[0], hi=d_ks[-1]))
        for kind, fig in variance_figures(t, res).items()
    )
    return Section(
        anchor="lab-sqrt",
        title=t("scaling.h_variance"),
        text=t("scaling.explain_variance"),
        formulas=(FORMULA,),
        figures=figures,
        note=t("scaling.caption_variance", samples=samples, k=f"{fsq.ERROR_BAR_SE:g}"),
        figures_in_row=True,
    )
