"""The playground's settings: its table of session keys (defaults, ranges, URL names, what presenter
mode and the live class carry), and their values -> an AttentionConfig.

No Streamlit calls, so the checks are testable without a browser. :data:`TABLE` declares every key
of the playground and its views (attention_ui/settings_table.py); the URL state (url_state.py) reads
and writes its ``url`` entries with exactly these ranges. :func:`read_config` returns the config or
every :class:`Problem` found; a problem names a message-catalog key and its placeholder values, and
the page translates and shows it. :data:`PAGE` binds the playground to the page kit (prefix ``pg``,
catalog ``playground``); the pretrained view's widgets use the same table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from attention_core import MASK_KINDS, AttentionConfig, AttentionConfigError
from attention_core.config import MAX_D_MODEL, MAX_DIVISOR, MAX_HEAD_DIM, MAX_HEADS, MAX_PAD, MIN_DIVISOR
from attention_core.tokenizer import DEFAULT_MAX_TOKENS
from attention_ui import kit
from attention_ui.kit import SEED_RANGE
from attention_ui.settings_table import Setting, Table

SCALE_CHOICES = ("sqrt", "none", "custom")
PRESETS = ("sentence", "example")  # the user's sentence, or the reference notes' worked example
WEIGHTS = ("random", "pretrained")  # seeded random matrices, or all-MiniLM-L6-v2's
PRETRAINED_LAYERS = 6  # all-MiniLM-L6-v2's encoder layers

# The widget ranges: generous enough to experiment, small enough to draw.
D_MODEL_RANGE = (1, min(MAX_D_MODEL, 256))
HEADS_RANGE = (1, min(MAX_HEADS, 16))
HEAD_DIM_RANGE = (1, min(MAX_HEAD_DIM, 128))
PAD_RANGE = (0, min(MAX_PAD, 16))
DIVISOR_RANGE = (MIN_DIVISOR, MAX_DIVISOR)
STEP_COUNT = 11  # steps shown by the playground (attention_ui.playground.steps_view.STEPS)
MAX_TOKENS_RANGE = (4, 256)  # 256-token maps stay interactive (bench/page_latency.py)

# Every session key of the playground, its views (steps, explainer, gradients, pretrained weights,
# presenter mode, share and export) and the code tabs under its steps, declared once (issue 46). ``url``:
# the parameter url_state.py reads and writes (the URL holds the whole view); ``live``: what a student
# following the teacher receives (attention_ui/classroom/follow.py); ``presenter``: what presenter
# mode's slide controls draw and keep (the head picker in the controls row; the language switch there
# is the app's ``lang``).
TABLE = Table(
    "pg",
    Setting("preset", "sentence", choices=PRESETS, translated=True, url="preset", live=True),
    # the learner's context: what the labs set carries back here, if it fits (kit.share_context)
    Setting("text", text="playground.default_text", shared=kit.LEARNER_TEXT, url="text", live=True),
    Setting("max_tokens", DEFAULT_MAX_TOKENS, bounds=MAX_TOKENS_RANGE, url="max_tokens", live=True),
    Setting("d_model", 16, bounds=D_MODEL_RANGE, url="d_model", live=True,
            shared=kit.LEARNER_D_MODEL, accepts=kit.whole_in(*D_MODEL_RANGE)),
    Setting("heads", 2, bounds=HEADS_RANGE, url="heads", live=True,
            shared=kit.LEARNER_HEADS, accepts=kit.whole_in(*HEADS_RANGE)),
    Setting("auto_dims", True, url="auto", live=True),
    Setting("d_k", 8, bounds=HEAD_DIM_RANGE, url="d_k", live=True),
    Setting("d_v", 8, bounds=HEAD_DIM_RANGE, url="d_v", live=True),
    Setting("mask", "none", choices=MASK_KINDS, translated=True, url="mask", live=True,
            shared=kit.LEARNER_MASK),
    Setting("pad", 0, bounds=PAD_RANGE, url="pad", live=True),
    Setting("scale", "sqrt", choices=SCALE_CHOICES, translated=True, url="scale", live=True),
    Setting("divisor", 2.0, bounds=DIVISOR_RANGE, url="div", live=True),
    Setting("seed", 0, bounds=SEED_RANGE, shared=kit.LEARNER_SEED, url="seed", live=True),
    Setting("positional", True, url="pos", live=True),
    # the kit's tables switch and presenter flag, given the playground's default and URL names
    Setting("tables", False, url="tables"),
    # the head picker: presenter mode draws it in the slide's controls row (playground/presenter.py)
    Setting("head", 0, bounds=(0, HEADS_RANGE[1] - 1), translated=True, url="head", live=True,
            presenter=True),
    Setting("all_heads", False, url="all_heads"),  # draw a large all-heads figure (steps_view)
    Setting("shared_scale", True, url="shared"),  # raw and scaled scores on one colour scale (steps 3, 4)
    Setting("present", url="present", why="presenter mode is on (playground/presenter.py)"),
    Setting("step", bounds=(1, STEP_COUNT), url="step", live=True,
            why="presenter mode's step, 1-based (the slide number)"),
    Setting("grads", False),  # the gradients step (grads_view): off, so a rerun computes no backward pass
    Setting("target_seed", 0, bounds=SEED_RANGE),  # the seed of the invented target Y of that step
    # the pretrained view (pretrained_view.py, the ``pretrained`` catalog): all-MiniLM-L6-v2's weights
    Setting("weights", "random", choices=WEIGHTS, translated=True, url="weights"),
    Setting("pt_layer", 0, bounds=(0, PRETRAINED_LAYERS - 1), translated=True, url="layer"),
    Setting("pt_hide_special", False, url="hide"),
    # the live class's join-code slide over a step (classroom/presenter_hook.py)
    Setting("present_close", why="the join-code slide's close button, in the presenter's controls"),
    # the sentence's row and the examples beside it (sentence_box.py, examples.py)
    Setting("sentence_box", why="the sentence row's container (browser tests measure where it is)"),
    Setting("example_pick", why="the example picker: an action, reset to None once its sentence is set"),
    # the first screen (first_screen.py)
    Setting("first_view_done", why="the session has had its first view of the steps"),
    Setting("rest_pending", why="the 'rest of the steps' note's container (tests wait for it to go)"),
    Setting("rest_now", why="the button that draws the rest of the steps at once"),
    # the URL (url_sync.py; ``url_written`` is the kit's)
    Setting("url_ignored", why="the URL parameters ignored at the last read"),
    Setting("url_notice_for", why="the view the ignored-parameters notice belongs to"),
    # the cell and row explainers (explain_view.py)
    Setting("cell_q", why="the explained cell's query row (a selectbox, set by a click on a map)"),
    Setting("cell_k", why="the explained cell's key column"),
    Setting("row_q", why="the explained output row"),
    Setting("explain_cell", why="the cell explainer's toggle"),
    Setting("explain_row", why="the row explainer's toggle"),
    Setting("cell_clicks", why="map clicks that opened a panel (a one-shot 'scroll there' signal)"),
    Setting("cell_scroll_to", why="the panel to bring into view after a click: cell, row or None"),
    Setting("cell_panel", why="the cell explainer's container"),
    Setting("row_panel", why="the row explainer's container"),
    Setting("cell_explanation", why="the cell explainer's numbers' container"),
    # presenter mode's slide boxes (steps_view.py, sized by presenter mode's CSS)
    Setting("slide_chart", why="the slide's chart box"),
    Setting("slide_wide_*", why="a wide step's chart box on a slide, per chart"),
    # share and export (share.py), the code tabs (program/code_view.py)
    Setting("export_matrix", why="the export menu's matrix choice"),
    Setting("export_all", why="the export menu's 'every head' switch"),
    Setting("dl_*", why="download buttons: csv, json, npz, lesson, code_py, code_nb"),
    Setting("code_*", why="the code tabs' expanders: one per step, all, example (program/code_view.py)"),
)  # fmt: skip
# :data:`PAGE` binds the playground to the page kit; the pretrained view's widgets are the same keys
# (pretrained_view.VIEW binds its catalog to this table too). Its URL holds the whole view (url_state).
PAGE = kit.Page.of(TABLE, "playground", url_context=False)
DEFAULTS = TABLE.defaults  # key -> first value (the live class's view reads a missing key's default)
CHOICE_KEYS = TABLE.choice_keys  # widgets whose labels are translated
# The settings read_config reads, each from the widget ``pg_<name>``.
CONFIG_KEYS = ("d_model", "heads", "auto_dims", "d_k", "d_v", "mask", "pad", "scale", "divisor", "seed",
               "positional")  # fmt: skip


@dataclass(frozen=True)
class Problem:
    """Something wrong with the settings: a catalog key plus its placeholder values."""

    key: str
    values: dict = field(default_factory=dict)


def _whole(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def read_config(v: Mapping[str, object]) -> tuple[AttentionConfig | None, list[Problem]]:
    """Build an :class:`AttentionConfig` from plain widget values, or say what is wrong.

    ``v`` has the keys d_model, heads, auto_dims, d_k, d_v, mask, pad, scale, divisor, seed,
    positional. Every problem found is returned (not just the first), each as a catalog key.
    """
    problems: list[Problem] = []
    d_model, heads = _whole(v.get("d_model")), _whole(v.get("heads"))
    auto = bool(v.get("auto_dims", True))
    if d_model is None or not D_MODEL_RANGE[0] <= d_model <= D_MODEL_RANGE[1]:
        problems.append(
            Problem(
                "playground.err_range", {"name": "d_model", "lo": D_MODEL_RANGE[0], "hi": D_MODEL_RANGE[1]}
            )
        )
    if heads is None or not HEADS_RANGE[0] <= heads <= HEADS_RANGE[1]:
        problems.append(
            Problem("playground.err_range", {"name": "heads", "lo": HEADS_RANGE[0], "hi": HEADS_RANGE[1]})
        )
    d_k = d_v = None
    if not auto:
        d_k, d_v = _whole(v.get("d_k")), _whole(v.get("d_v"))
        for name, dim in (("d_k", d_k), ("d_v", d_v)):
            if dim is None or not HEAD_DIM_RANGE[0] <= dim <= HEAD_DIM_RANGE[1]:
                problems.append(
                    Problem(
                        "playground.err_range",
                        {"name": name, "lo": HEAD_DIM_RANGE[0], "hi": HEAD_DIM_RANGE[1]},
                    )
                )
    elif d_model is not None and heads is not None and heads >= 1 and d_model % heads:
        lower = heads * max(1, d_model // heads)
        problems.append(
            Problem("playground.err_divisible", {"d_model": d_model, "heads": heads, "suggest": lower})
        )
    pad = _whole(v.get("pad"))
    if pad is None or not PAD_RANGE[0] <= pad <= PAD_RANGE[1]:
        problems.append(
            Problem("playground.err_pad", {"lo": PAD_RANGE[0], "hi": PAD_RANGE[1], "value": v.get("pad")})
        )
    mode = v.get("scale", "sqrt")
    scale: str | float = "sqrt"
    if mode == "custom":
        divisor = v.get("divisor")
        ok = isinstance(divisor, (int, float)) and not isinstance(divisor, bool) and math.isfinite(divisor)
        if not ok or not DIVISOR_RANGE[0] <= float(divisor) <= DIVISOR_RANGE[1]:
            problems.append(
                Problem(
                    "playground.err_divisor", {"lo": f"{DIVISOR_RANGE[0]:g}", "hi": f"{DIVISOR_RANGE[1]:g}"}
                )
            )
        else:
            scale = float(divisor)
    elif mode in ("sqrt", "none"):
        scale = str(mode)
    else:
        problems.append(Problem("playground.err_config", {"detail": f"scale {mode!r}"}))
    seed = _whole(v.get("seed"))
    if seed is None or not SEED_RANGE[0] <= seed <= SEED_RANGE[1]:
        problems.append(
            Problem("playground.err_range", {"name": "seed", "lo": SEED_RANGE[0], "hi": SEED_RANGE[1]})
        )
    if problems:
        return None, problems
    try:
        config = AttentionConfig(
            d_model=d_model,
            heads=heads,
            d_k=d_k,
            d_v=d_v,
            mask=str(v.get("mask", "none")),
            pad=pad,
            scale=scale,
            seed=seed,
            positional=bool(v.get("positional", True)),
        )
    except AttentionConfigError as err:  # anything the core refuses that we did not foresee
        return None, [Problem("playground.err_config", {"detail": str(err)})]
    return config, []
