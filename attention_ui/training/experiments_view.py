"""The training lab's five experiments, one click each (``attention_core.training.experiments``).

Each runs in a worker like a training run (:mod:`.cached`; finished results are kept per settings,
so a second click, or another student, gets them at once) and ends in a conclusion built from its
own numbers: :mod:`attention_core.training.verdicts` decides each verdict by named conditions and
margins, and :func:`conclusions` turns each verdict into its own sentence (``training.x_<name>_<verdict>``)
filled with the numbers it tested (tests/test_training_experiments.py drives every branch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

from attention_core.training import experiments as X
from attention_core.training import tasks
from attention_core.training import verdicts as V
from attention_core.training.train import DEFAULT_STEPS
from attention_ui import kit
from attention_ui.figures.base import AxisText
from attention_ui.training import cached
from attention_ui.training import figures as ftr
from attention_ui.training.jobs import was_stopped
from attention_ui.training.settings import PAGE, TABLE
from attention_ui.training.views import followed_job, progress_and_stop

POLL_S = 0.4
NAMES = ("sqrt_dk", "leaky_mask", "heads_specialise", "induction_layers", "positions")
RUNS = {"sqrt_dk": 6, "leaky_mask": 2, "heads_specialise": 1, "induction_layers": 2, "positions": 4}
PREFIX = {"sqrt_dk": "sqrt", "leaky_mask": "leaky", "heads_specialise": "heads", "induction_layers": "induction",
          "positions": "positions"}  # fmt: skip


def settings_for(name: str, text: str):
    """The experiment's settings: its defaults, the leaky-mask one on the learner's text."""
    if name == "leaky_mask":
        return X.LeakySettings(text=text)
    return {"sqrt_dk": X.SqrtDkSettings, "heads_specialise": X.HeadsSettings,
            "induction_layers": X.InductionSettings, "positions": X.PositionsSettings}[name]()  # fmt: skip


def keep_units(text: str) -> str:
    """A number and its unit on one line: "100.0 %" never breaks before the "%" (a no-break space)."""
    return text.replace(" %", "\u00a0%")


def pct(x: float) -> str:
    return f"{100 * float(x):.1f}"


def num(x: float) -> str:
    return f"{float(x):.3g}"


def mean(xs) -> float:
    xs = [float(x) for x in xs]
    return sum(xs) / len(xs) if xs else math.nan


@dataclass(frozen=True)
class Words:
    """A value that is itself a catalog message (its key and its own values), translated when the
    conclusion is shown: the task's name, "head 1" or "heads 0, 1"."""

    key: str
    values: tuple[tuple[str, object], ...] = ()


def fill(t, values: dict) -> dict:
    """``values`` with each :class:`Words` translated by ``t``."""
    return {k: t(v.key, **dict(v.values)) if isinstance(v, Words) else v for k, v in values.items()}


def steps_list(steps, total: int) -> str:
    """Each seed's steps to the level, in seed order; ``> N`` for a run that never got there."""
    return ", ".join(str(s) if s is not None else f"> {total}" for s in steps)


# --- conclusions: (catalog key, values) from a result ----------------------------------------------


def sqrt_conclusions(r) -> list[tuple[str, dict]]:
    s, ratios = r.seeds, [float(x) for x in r.grad_ratio]
    values = dict(
        n=len(s), d_k=r.settings.d_k, steps=r.settings.steps, lo=num(min(ratios)), hi=num(max(ratios)),
        ratio=V.GRAD_RATIO, ws=f"{mean(x.max_weight_scaled for x in s):.3f}",
        wu=f"{mean(x.max_weight_unscaled for x in s):.3f}", level=X.LOSS_LEVEL, w=X.LEVEL_WINDOW,
        ss=steps_list([x.steps_scaled for x in s], r.settings.steps),
        su=steps_list([x.steps_unscaled for x in s], r.settings.steps), speed=f"{V.SPEED_RATIO:g}",
        early=X.EARLY_STEP, es=num(mean(x.early_scaled for x in s)), eu=num(mean(x.early_unscaled for x in s)),
        ls=num(mean(x.loss_scaled for x in s)), lu=num(mean(x.loss_unscaled for x in s)),
    )  # fmt: skip
    return [(f"training.x_sqrt_{v}", values) for v in V.sqrt_verdicts(r)]


def leaky_conclusions(r) -> list[tuple[str, dict]]:
    c, k = r.causal, r.leaky
    n = len(k.visible)
    values = dict(
        lc=num(c.final_loss), ll=num(k.final_loss), n=n, n1=n - 1, n2=n - 2,
        vis=pct(mean(k.visible[:-1])), pre=pct(mean(k.prefix[:-1])), w=f"{mean(k.next_weight):.2f}",
        f=f"{mean(k.future_weight[:-1]):.2f}", gap=f"{100 * V.LEAK_GAP:.0f}", reads=V.READS_FUTURE,
        last=pct(k.prefix[-1]), k=len(k.short.prompt), k1=len(k.short.prompt) - 1,
        gs=pct(k.short.accuracy), gf=pct(k.full.accuracy), c=pct(mean(c.visible)),
        cw=f"{float(max(c.future_weight, default=0.0)):.3g}",
    )  # fmt: skip
    return [("training.x_leaky_numbers", values)] + [
        (f"training.x_leaky_{v}", values) for v in V.leaky_verdicts(r)
    ]


def heads_conclusions(r) -> list[tuple[str, dict]]:
    prev, first = [float(x) for x in r.previous_score], [float(x) for x in r.first_score]
    hp, hf = V.taker(prev), V.taker(first)
    hp = hp if hp is not None else int(prev.index(max(prev)))
    hf = hf if hf is not None else int(first.index(max(first)))
    lost = r.accuracy_lost
    values = dict(
        acc=pct(r.accuracy), pa=pct(r.previous_accuracy), fa=pct(r.first_accuracy), hp=hp, hf=hf,
        pp=f"{prev[hp]:.2f}", po=f"{prev[1 - hp]:.2f}", ff=f"{first[hf]:.2f}", fo=f"{first[1 - hf]:.2f}",
        p0=f"{prev[0]:.2f}", p1=f"{prev[1]:.2f}", f0=f"{first[0]:.2f}", f1=f"{first[1]:.2f}",
        lp_p=pct(lost[hp, 1]), lp_f=pct(lost[hp, 2]), lf_p=pct(lost[hf, 1]), lf_f=pct(lost[hf, 2]),
        weight=V.TAKES_WEIGHT, margin=V.TAKES_MARGIN, cost=f"{100 * V.ABLATION_COST:.0f}",
        spare=f"{100 * V.ABLATION_SPARE:.0f}", target=f"{100 * V.TARGET_ACCURACY:.0f}",
    )  # fmt: skip
    return [(f"training.x_heads_{v}", values) for v in V.heads_verdicts(r)]


def induction_conclusions(r) -> list[tuple[str, dict]]:
    one, two = r.one, r.two
    li, hi = r.induction_head
    ph = two.phase
    lo_m, hi_m = tasks.INDUCTION_SEGMENT
    n, vocab = tasks.INDUCTION_LENGTH, tasks.INDUCTION_VOCAB
    values = dict(
        a1=pct(one.accuracy), a2=pct(two.accuracy), i1=f"{float(one.induction.max()):.2f}",
        i2=f"{float(two.induction[li, hi]):.2f}", li=li, hi=hi, target=f"{100 * V.TARGET_ACCURACY:.0f}",
        ti=V.TARGET_INDUCTION, gap=f"{100 * V.DEPTH_GAP:.0f}",
        chance=pct(1 / vocab), vocab=vocab, pos=n - hi_m, m=hi_m, back=hi_m - 1,
        s1=pct(one.by_lengths[0]), sk=pct(one.by_lengths[-1]), kmax=hi_m - lo_m + 1,
        heads=Words("training.x_zeroed_one" if len(r.previous_heads) == 1 else "training.x_zeroed_many",
                    (("list", ", ".join(str(h) for h in r.previous_heads)),)),
        th=X.PREVIOUS_HEAD, awo=pct(r.accuracy_without_previous_heads),
        iwo=f"{r.induction_without_previous_heads:.2f}", window=X.PHASE_WINDOW, k=X.PHASE_SPAN,
        flat=f"{100 * X.FLAT_SHARE:.0f}", steep=f"{100 * V.STEEP_SHARE:.0f}", ds=ph.drop_start, de=ph.drop_end,
        df=num(ph.drop_from), dt=num(ph.drop_to), ps=ph.plateau_start, pe=ph.plateau_end, pl=num(ph.plateau_loss),
        flattest=f"{100 * ph.flattest:.1f}" if math.isfinite(ph.flattest) else "—",
        share=f"{100 * (ph.drop_from - ph.drop_to) / ph.span:.0f}" if ph.span > 0 else "0",
    )  # fmt: skip
    return [("training.x_induction_numbers", values)] + [
        (f"training.x_induction_{v}", values) for v in V.induction_verdicts(r)
    ]


def positions_conclusions(r) -> list[tuple[str, dict]]:
    by = {(x.task, x.positions): x for x in r.runs}
    out = []
    for task, v in V.positions_verdicts(r):
        if not task:
            err = max(by[(t, False)].equivariance_error for t in ("reverse", "sort"))
            out.append((f"training.x_positions_{v}", {"err": f"{err:.1e}"}))
            continue
        on, off = by[(task, True)], by[(task, False)]
        values = dict(task=task, on=pct(on.accuracy), off=pct(off.accuracy), guess=pct(r.uniform_guess),
                      base=pct(off.baseline), margin=f"{100 * V.POSITIONS_GAP:.0f}",
                      task_name=Words(f"training.task_{task}"))  # fmt: skip
        out.append((f"training.x_positions_{v}", values))
    return out


CONCLUSIONS = {"sqrt_dk": sqrt_conclusions, "leaky_mask": leaky_conclusions, "heads_specialise": heads_conclusions,
               "induction_layers": induction_conclusions, "positions": positions_conclusions}  # fmt: skip


stopped = was_stopped


def conclusions(name: str, result) -> list[tuple[str, dict]]:
    if stopped(result):
        return [("training.x_stopped", {})]
    return CONCLUSIONS[name](result)


# --- figures and tables of each result -------------------------------------------------------------


def _sqrt_figures(t, r) -> None:
    lines = dict(axes=AxisText(t("training.axis_step"), t("training.axis_loss_short")))
    series = {}
    for s in r.seeds:
        series[t("training.x_run_scaled", seed=s.seed)] = s.run_scaled.losses
        series[t("training.x_run_unscaled", seed=s.seed)] = s.run_unscaled.losses
    dashed = [t("training.x_run_unscaled", seed=s.seed) for s in r.seeds]
    PAGE.chart(ftr.runs_lines(series, dashed=dashed, **lines), "x_sqrt", t("training.alt_x_lines"))
    seeds = [t("training.x_seed", seed=s.seed) for s in r.seeds]
    groups = {t("training.x_scaled"): [s.grad_scaled for s in r.seeds],
              t("training.x_unscaled"): [s.grad_unscaled for s in r.seeds]}  # fmt: skip
    PAGE.chart(
        ftr.bars(seeds, groups, y_title=t("training.x_grad_norm")), "x_sqrt_grad", t("training.alt_x_bars")
    )
    total = r.settings.steps
    never = lambda x: str(x) if x is not None else f"> {total}"  # noqa: E731
    rows = {
        t("training.x_col_grad_scaled"): [num(s.grad_scaled) for s in r.seeds],
        t("training.x_col_grad_unscaled"): [num(s.grad_unscaled) for s in r.seeds],
        t("training.x_col_steps_scaled", level=X.LOSS_LEVEL): [never(s.steps_scaled) for s in r.seeds],
        t("training.x_col_steps_unscaled", level=X.LOSS_LEVEL): [never(s.steps_unscaled) for s in r.seeds],
        t("training.x_col_early_scaled", step=X.EARLY_STEP): [num(s.early_scaled) for s in r.seeds],
        t("training.x_col_early_unscaled", step=X.EARLY_STEP): [num(s.early_unscaled) for s in r.seeds],
        t("training.x_col_final_scaled", steps=total): [num(s.loss_scaled) for s in r.seeds],
        t("training.x_col_final_unscaled", steps=total): [num(s.loss_unscaled) for s in r.seeds],
    }
    PAGE.table(kit.frame(rows, index=seeds), "x_sqrt", always=True)


def _leaky_figures(t, r) -> None:
    lines = dict(axes=AxisText(t("training.axis_step"), t("training.axis_loss_short")))
    model = {m.mask: t(f"training.x_model_{m.mask}") for m in (r.causal, r.leaky)}
    series = {model["causal"]: r.causal.run.losses, model["none"]: r.leaky.run.losses}
    PAGE.chart(ftr.runs_lines(series, **lines), "x_leaky", t("training.alt_x_lines"))
    n = len(r.leaky.visible)
    acc = {}
    for m in (r.leaky, r.causal):
        acc[t("training.x_acc_visible", model=model[m.mask])] = m.visible
        acc[t("training.x_acc_prefix", model=model[m.mask])] = m.prefix
    dashed = [t("training.x_acc_prefix", model=model[m.mask]) for m in (r.leaky, r.causal)]
    axes = AxisText(t("training.x_axis_position"), t("training.axis_accuracy_short"))
    PAGE.chart(ftr.by_position(acc, axes=axes, dashed=dashed, percent=True), "x_leaky_positions",
               t("training.alt_x_positions", n=n))  # fmt: skip
    later, nxt = t("training.x_future_weight"), t("training.x_next_weight")
    weights = {t("training.x_weight_on", model=model["none"], what=later): r.leaky.future_weight,
               t("training.x_weight_on", model=model["none"], what=nxt): [*r.leaky.next_weight, math.nan],
               t("training.x_weight_on", model=model["causal"], what=later): r.causal.future_weight}  # fmt: skip
    axes = AxisText(t("training.x_axis_position"), t("training.x_weight_axis"))
    PAGE.chart(ftr.by_position(weights, axes=axes, dashed=[list(weights)[1]]), "x_leaky_next",
               t("training.alt_x_weights", n=n))  # fmt: skip
    for m in (r.causal, r.leaky):
        for g in (m.short, m.full):
            st.markdown(t("training.x_generated", model=model[m.mask], k=len(g.prompt)))
            st.text(f"{g.prompt} → {g.generated}")
    st.markdown(t("training.x_expected_text"))
    for g in (r.causal.short, r.causal.full):
        st.text(f"{g.prompt} → {g.expected}")


def _heads_figures(t, r) -> None:
    labels = [r.run.task.labels_in[int(i)] for i in r.run.sample]
    fig = ftr.head_maps(r.maps[None], labels, panel_title=t("training.panel_title"), hover=PAGE.hover(t))
    PAGE.chart(fig, "x_heads_maps", t("training.alt_maps", step=r.run.steps_done, n=len(labels)))
    heads = [t("training.x_head_zeroed", head=h) for h in range(len(r.ablated))]
    lost = r.accuracy_lost
    groups = {t("training.x_lost_pair"): lost[:, 0], t("training.x_lost_previous"): lost[:, 1],
              t("training.x_lost_first"): lost[:, 2]}  # fmt: skip
    PAGE.chart(ftr.bars(heads, groups, y_title=t("training.x_lost"), percent=True), "x_heads_lost",
               t("training.alt_x_bars"))  # fmt: skip


def _induction_figures(t, r) -> None:
    lines = dict(axes=AxisText(t("training.axis_step"), t("training.axis_loss_short")))
    series = {
        t("training.x_layers", layers=1): r.one.run.losses,
        t("training.x_layers", layers=2): r.two.run.losses,
    }
    ph = r.two.phase
    bands = []
    if V.phase(ph) == "plateau_drop":
        bands = [(ph.plateau_start, ph.plateau_end, t("training.x_band_plateau")),
                 (ph.drop_start, ph.drop_end, t("training.x_band_drop"))]  # fmt: skip
    PAGE.chart(ftr.runs_lines(series, bands=bands, **lines), "x_induction", t("training.alt_x_lines"))
    for depth in (r.one, r.two):
        heads = [t("training.panel_title", layer=lay, head=h) for lay in range(depth.layers)
                 for h in range(depth.induction.shape[1])]  # fmt: skip
        groups = {t("training.pattern_induction"): depth.induction.ravel(),
                  t("training.pattern_previous"): depth.previous_token.ravel()}  # fmt: skip
        fig = ftr.bars(heads, groups, y_title=t("training.x_score"), y_range=(0, 1.05))
        PAGE.chart(fig, f"x_induction_scores_{depth.layers}", t("training.alt_x_bars"))


def _positions_figures(t, r) -> None:
    names = ("reverse", "sort")
    by = {(x.task, x.positions): x for x in r.runs}
    groups = {t("training.x_with_positions"): [by[(x, True)].accuracy for x in names],
              t("training.x_without_positions"): [by[(x, False)].accuracy for x in names],
              t("training.x_multiset_guess"): [by[(x, False)].baseline for x in names]}  # fmt: skip
    PAGE.chart(ftr.bars([t(f"training.task_{x}") for x in names], groups, y_title=t("training.axis_accuracy_short"),
                        percent=True), "x_positions", t("training.alt_x_bars"))  # fmt: skip


FIGURES = {"sqrt_dk": _sqrt_figures, "leaky_mask": _leaky_figures, "heads_specialise": _heads_figures,
           "induction_layers": _induction_figures, "positions": _positions_figures}  # fmt: skip


def show_figures(t, name: str, r) -> None:
    FIGURES[name](t, r)


# --- the section ------------------------------------------------------------------------------------


def start(name: str, key) -> None:
    cached.start(name, key, key[1])


def explain_values(name: str, s) -> dict:
    """The numbers an experiment's description states, from its settings and the core's task sizes."""
    if name == "sqrt_dk":
        return {"d_k": s.d_k, "seeds": len(s.seeds), "steps": s.steps, "level": X.LOSS_LEVEL, "w": X.LEVEL_WINDOW,
                "early": X.EARLY_STEP}  # fmt: skip
    if name == "leaky_mask":
        return {"steps": s.steps, "prompt": s.prompt, "n": tasks.TEXT_CONTEXT}
    if name == "heads_specialise":
        return {"n": tasks.PAIR_LENGTH, "last": tasks.LETTERS[tasks.PAIR_VOCAB - 1], "steps": s.steps}
    if name == "induction_layers":
        lo, hi = tasks.INDUCTION_SEGMENT
        return {"n": tasks.INDUCTION_LENGTH, "lo": lo, "hi": hi, "heads": s.heads, "d_model": s.d_model,
                "steps": s.steps if s.steps is not None else DEFAULT_STEPS["induction"]}  # fmt: skip
    return {}


def experiment(t, name: str, text: str) -> None:
    st.subheader(t(f"training.x_h_{name}"))
    settings = settings_for(name, text)
    st.markdown(t(f"training.x_explain_{name}", **explain_values(name, settings)))
    key = (name, settings)
    job = cached.active(name, key)
    result = cached.result(name, key)
    if job is not None:
        st.fragment(run_every=POLL_S)(live)(t, name, job.id)
        return
    if result is None:
        st.button(t("training.x_run"), key=TABLE.key("x", name), on_click=start, args=(name, key))
        last = cached.session_job(name)
        if last is not None and last.key == key and last.state == "failed":
            st.error(t("training.err_failed"))
        return
    if not stopped(result):
        show_figures(t, name, result)
    for k, values in conclusions(name, result):
        st.markdown(keep_units(t(k, **fill(t, values))))


def live(t, name: str, job_id: int) -> None:
    job = followed_job(job_id)
    if job is None:
        return
    with st.container(key=TABLE.key("x", "live", name)):
        progress_and_stop(t, job, job.rows(), lambda row: t("training.x_progress", run=job.runs_begun,
                          runs=RUNS[name], step=row[0], total=job.total), TABLE.key("x", "stop", name))  # fmt: skip


def section_experiments(t) -> None:
    st.header(t("training.h_experiments"))
    st.markdown(t("training.explain_experiments"))
    text = PAGE.value("text") or t("training.default_text")
    for name in NAMES:
        experiment(t, name, text)
