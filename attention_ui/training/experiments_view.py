"""The training lab's five experiments, one click each (``attention_core.training.experiments``).

Each runs in a worker like a training run (:mod:`.cached`; finished results are kept per settings,
so a second click, or another student, gets them at once) and ends in a conclusion built from its
own numbers: :func:`conclusions` picks the catalog keys and fills them, and says when a result is
weak on this toy instead of claiming what the reference text claims (tests/test_training_experiments.py
feeds it made-up results for every branch).
"""

from __future__ import annotations

import streamlit as st

from attention_core.training import experiments as X
from attention_core.training import tasks
from attention_core.training.train import DEFAULT_STEPS
from attention_ui import kit
from attention_ui.figures.base import AxisText
from attention_ui.training import cached
from attention_ui.training import figures as ftr
from attention_ui.training.jobs import was_stopped
from attention_ui.training.views import followed_job, progress_and_stop

PAGE = kit.Page("tr", "training")
POLL_S = 0.4
NAMES = ("sqrt_dk", "leaky_mask", "heads_specialise", "induction_layers", "positions")
RUNS = {"sqrt_dk": 6, "leaky_mask": 2, "heads_specialise": 1, "induction_layers": 2, "positions": 4}
TARGET_ACCURACY, TARGET_INDUCTION = 0.9, 0.5  # the targets for the two-layer induction model
CLEAR_DROP = 0.25  # a phase change: the moving mean falls by at least this share of the plateau
CLOSE = 0.02  # accuracies within 2 points are "about the same"
CIRCUIT_DROP = 0.1  # zeroing the previous-token head costs at least 10 points: the induction head needs it
EQUIVARIANT_TOL = 1e-6  # without positions, a permuted batch's outputs match to rounding


def settings_for(name: str, text: str):
    """The experiment's settings: its defaults, the leaky-mask one on the learner's text."""
    if name == "leaky_mask":
        return X.LeakySettings(text=text)
    return {"sqrt_dk": X.SqrtDkSettings, "heads_specialise": X.HeadsSettings,
            "induction_layers": X.InductionSettings, "positions": X.PositionsSettings}[name]()  # fmt: skip


def pct(x: float) -> str:
    return f"{100 * float(x):.1f}"


def num(x: float) -> str:
    return f"{float(x):.3g}"


# --- conclusions: (catalog key, values) from a result ----------------------------------------------


def sqrt_conclusions(r) -> list[tuple[str, dict]]:
    ratios = [float(x) for x in r.grad_ratio]
    n = len(r.seeds)
    larger = sum(x > 1 for x in ratios)
    lower = sum(s.loss_scaled < s.loss_unscaled for s in r.seeds)
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    values = dict(n=n, d_k=r.settings.d_k, lo=num(min(ratios)), hi=num(max(ratios)), larger=larger,
                  ws=f"{mean([s.max_weight_scaled for s in r.seeds]):.3f}",
                  wu=f"{mean([s.max_weight_unscaled for s in r.seeds]):.3f}", steps=r.settings.steps, lower=lower,
                  ls=num(mean([s.loss_scaled for s in r.seeds])), lu=num(mean([s.loss_unscaled for s in r.seeds])))  # fmt: skip
    out = [("training.x_sqrt_grad_all" if larger == n else "training.x_sqrt_grad_some", values)]
    out.append(("training.x_sqrt_loss_all" if lower == n else "training.x_sqrt_loss_weak", values))
    return out


def leaky_conclusions(r) -> list[tuple[str, dict]]:
    c, k = r.causal, r.leaky
    values = dict(lc=num(c.final_loss), ll=num(k.final_loss), ac=pct(c.text_accuracy), al=pct(k.text_accuracy),
                  gc=pct(c.generation.accuracy), gl=pct(k.generation.accuracy), fc=pct(c.generation.follows),
                  fl=pct(k.generation.follows), steps=c.run.steps_done, k=X.FOLLOW_CONTEXT)  # fmt: skip
    # the telling number of a generation is whether it reads like the text (the same place is a strict test
    # that a correct continuation fails after one branch of a repeated word)
    expected = k.final_loss < c.final_loss and k.generation.follows < c.generation.follows
    return [("training.x_leaky_numbers", values),
            ("training.x_leaky_expected" if expected else "training.x_leaky_unexpected", values)]  # fmt: skip


def heads_conclusions(r) -> list[tuple[str, dict]]:
    prev, first = [float(x) for x in r.previous_score], [float(x) for x in r.first_score]
    hp, hf = int(prev.index(max(prev))), int(first.index(max(first)))
    lost = r.accuracy_lost
    values = dict(acc=pct(r.accuracy), pa=pct(r.previous_accuracy), fa=pct(r.first_accuracy), hp=hp, hf=hf,
                  sp=f"{prev[hp]:.2f}", sf=f"{first[hf]:.2f}", lp_p=pct(lost[hp, 1]), lp_f=pct(lost[hp, 2]),
                  lf_p=pct(lost[hf, 1]), lf_f=pct(lost[hf, 2]))  # fmt: skip
    out = [("training.x_heads_split" if hp != hf else "training.x_heads_same", values)]
    if r.accuracy < TARGET_ACCURACY:
        out.append(("training.x_heads_weak", values))
    return out


def induction_conclusions(r) -> list[tuple[str, dict]]:
    one, two = r.one, r.two
    li, hi = r.induction_head
    lp, hp = r.previous_head
    ph = two.phase
    values = dict(a1=pct(one.accuracy), a2=pct(two.accuracy), i1=f"{float(one.induction.max()):.2f}",
                  i2=f"{float(two.induction[li, hi]):.2f}", li=li, hi=hi, lp=lp, hp=hp,
                  ps=f"{float(two.previous_token[lp, hp]):.2f}", awo=pct(r.accuracy_without_previous_head),
                  iwo=f"{r.induction_without_previous_head:.2f}", step=ph.drop_step, before=num(ph.loss_before),
                  after=num(ph.loss_after), target=pct(TARGET_ACCURACY), ti=TARGET_INDUCTION,
                  window=X.PHASE_WINDOW)  # fmt: skip
    out = [("training.x_induction_numbers", values)]
    reached = two.accuracy >= TARGET_ACCURACY and float(two.induction[li, hi]) >= TARGET_INDUCTION
    out.append(("training.x_induction_reached" if reached else "training.x_induction_not_reached", values))
    if one.accuracy + CLOSE >= two.accuracy:
        out.append(("training.x_induction_no_gap", values))
    drop = two.accuracy - r.accuracy_without_previous_head
    out.append(
        (
            "training.x_induction_circuit" if drop >= CIRCUIT_DROP else "training.x_induction_circuit_weak",
            values,
        )
    )
    clear = ph.loss_before > 0 and (ph.loss_before - ph.loss_after) >= CLEAR_DROP * ph.loss_before
    out.append(("training.x_induction_phase" if clear else "training.x_induction_no_phase", values))
    return out


def positions_conclusions(r) -> list[tuple[str, dict]]:
    by = {(x.task, x.positions): x for x in r.runs}
    out = []
    for task in ("reverse", "sort"):
        on, off = by[(task, True)], by[(task, False)]
        values = dict(task=task, on=pct(on.accuracy), off=pct(off.accuracy), guess=pct(r.uniform_guess),
                      err=f"{off.equivariance_error:.1e}")  # fmt: skip
        key = (
            "training.x_positions_gap"
            if on.accuracy > off.accuracy + CLOSE
            else "training.x_positions_no_gap"
        )
        out.append((key, values | {"task_name": f"training.task_{task}"}))
    err = max(by[(t, False)].equivariance_error for t in ("reverse", "sort"))
    key = (
        "training.x_positions_equivariant"
        if err <= EQUIVARIANT_TOL
        else "training.x_positions_not_equivariant"
    )
    out.append((key, {"err": f"{err:.1e}"}))
    return out


CONCLUSIONS = {"sqrt_dk": sqrt_conclusions, "leaky_mask": leaky_conclusions, "heads_specialise": heads_conclusions,
               "induction_layers": induction_conclusions, "positions": positions_conclusions}  # fmt: skip


stopped = was_stopped


def conclusions(name: str, result) -> list[tuple[str, dict]]:
    if stopped(result):
        return [("training.x_stopped", {})]
    return CONCLUSIONS[name](result)


# --- figures of each result -------------------------------------------------------------------------


def show_figures(t, name: str, r) -> None:
    lines = dict(axes=AxisText(t("training.axis_step"), t("training.axis_loss_short")))
    if name == "sqrt_dk":
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
            ftr.bars(seeds, groups, y_title=t("training.x_grad_norm")),
            "x_sqrt_grad",
            t("training.alt_x_bars"),
        )
    elif name == "leaky_mask":
        series = {t("training.mask_causal"): r.causal.run.losses, t("training.mask_none"): r.leaky.run.losses}
        PAGE.chart(ftr.runs_lines(series, **lines), "x_leaky", t("training.alt_x_lines"))
        for run in (r.causal, r.leaky):
            g = run.generation
            st.markdown(t("training.x_generated", mask=t(f"training.mask_{run.mask}")))
            st.text(f"{g.prompt} → {g.generated}")
        st.markdown(t("training.x_expected_text"))
        st.text(f"{r.causal.generation.prompt} → {r.causal.generation.expected}")
    elif name == "heads_specialise":
        labels = [r.run.task.labels_in[int(i)] for i in r.run.sample]
        fig = ftr.head_maps(r.maps[None], labels, panel_title=t("training.panel_title"), hover=PAGE.hover(t))
        PAGE.chart(fig, "x_heads_maps", t("training.alt_maps", step=r.run.steps_done, n=len(labels)))
        heads = [t("training.x_head_zeroed", head=h) for h in range(len(r.ablated))]
        lost = r.accuracy_lost
        groups = {t("training.x_lost_pair"): lost[:, 0], t("training.x_lost_previous"): lost[:, 1],
                  t("training.x_lost_first"): lost[:, 2]}  # fmt: skip
        PAGE.chart(ftr.bars(heads, groups, y_title=t("training.x_lost"), percent=True), "x_heads_lost",
                   t("training.alt_x_bars"))  # fmt: skip
    elif name == "induction_layers":
        series = {
            t("training.x_layers", layers=1): r.one.run.losses,
            t("training.x_layers", layers=2): r.two.run.losses,
        }
        PAGE.chart(ftr.runs_lines(series, **lines), "x_induction", t("training.alt_x_lines"))
        for depth in (r.one, r.two):
            heads = [t("training.panel_title", layer=lay, head=h) for lay in range(depth.layers)
                     for h in range(depth.induction.shape[1])]  # fmt: skip
            groups = {t("training.pattern_induction"): depth.induction.ravel(),
                      t("training.pattern_previous"): depth.previous_token.ravel()}  # fmt: skip
            fig = ftr.bars(heads, groups, y_title=t("training.x_score"), y_range=(0, 1.05))
            PAGE.chart(fig, f"x_induction_scores_{depth.layers}", t("training.alt_x_bars"))
    elif name == "positions":
        tasks = [t(f"training.task_{x}") for x in ("reverse", "sort")]
        by = {(x.task, x.positions): x.accuracy for x in r.runs}
        groups = {t("training.x_with_positions"): [by[(x, True)] for x in ("reverse", "sort")],
                  t("training.x_without_positions"): [by[(x, False)] for x in ("reverse", "sort")]}  # fmt: skip
        PAGE.chart(ftr.bars(tasks, groups, y_title=t("training.axis_accuracy_short"), percent=True), "x_positions",
                   t("training.alt_x_bars"))  # fmt: skip


# --- the section ------------------------------------------------------------------------------------


def start(name: str, key) -> None:
    cached.start(name, key, key[1])


def explain_values(name: str, s) -> dict:
    """The numbers an experiment's description states, from its settings and the core's task sizes."""
    if name == "sqrt_dk":
        return {"d_k": s.d_k, "seeds": len(s.seeds), "steps": s.steps}
    if name == "leaky_mask":
        return {"steps": s.steps, "prompt": s.prompt}
    if name == "heads_specialise":
        return {"n": tasks.PAIR_LENGTH, "last": tasks.LETTERS[tasks.PAIR_VOCAB - 1], "steps": s.steps}
    if name == "induction_layers":
        steps = s.steps if s.steps is not None else DEFAULT_STEPS["induction"]
        lo, hi = tasks.INDUCTION_SEGMENT
        return {
            "n": tasks.INDUCTION_LENGTH,
            "lo": lo,
            "hi": hi,
            "heads": s.heads,
            "d_model": s.d_model,
            "steps": steps,
        }
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
        st.button(t("training.x_run"), key=f"tr_x_{name}", on_click=start, args=(name, key))
        last = cached.session_job(name)
        if last is not None and last.key == key and last.state == "failed":
            st.error(t("training.err_failed"))
        return
    if not stopped(result):
        show_figures(t, name, result)
    for k, values in conclusions(name, result):
        if "task_name" in values:
            values = values | {"task_name": t(values["task_name"])}
        st.markdown(t(k, **values))


def live(t, name: str, job_id: int) -> None:
    job = followed_job(job_id)
    if job is None:
        return
    with st.container(key=f"tr_x_live_{name}"):
        progress_and_stop(t, job, job.rows(), lambda row: t("training.x_progress", run=job.runs_begun,
                          runs=RUNS[name], step=row[0], total=job.total), f"tr_x_stop_{name}")  # fmt: skip


def section_experiments(t) -> None:
    st.header(t("training.h_experiments"))
    st.markdown(t("training.explain_experiments"))
    text = st.session_state.get("tr_text") or t("training.default_text")
    for name in NAMES:
        experiment(t, name, text)
