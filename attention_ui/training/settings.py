"""The training lab's settings, declared once (attention_ui/settings_table.py): key prefix ``training``;
their ranges, and their values -> ``TrainSettings`` (the core checks them and says why it refuses,
:func:`read_settings`). No Streamlit calls here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from attention_core.config import MAX_DIVISOR, MIN_DIVISOR
from attention_core.training import tasks as core_tasks
from attention_core.training import train as core
from attention_core.training.tasks import MAX_TEXT_CHARS as MAX_TASK_TEXT
from attention_core.training.tasks import NEXT_TOKEN_TASKS
from attention_core.training.tasks import TASKS as TASK_NAMES
from attention_ui import kit
from attention_ui.settings_table import Setting, Table

TASKS = TASK_NAMES  # previous, reverse, sort, induction, text
SCALES = ("sqrt", "none", "custom")
MASKS = core.MASKS  # causal, none: offered for the next-token tasks (the others use their own)
LAYERS_RANGE = (1, core.MAX_LAYERS)
HEADS_RANGE = (1, core.MAX_HEADS)
D_MODEL_RANGE = core.D_MODEL_RANGE
D_K_RANGE = (1, core.MAX_D_K)
DIVISOR_RANGE = (MIN_DIVISOR, MAX_DIVISOR)
LR_RANGE = core.LR_RANGE
STEPS_RANGE = (1, core.MAX_STEPS)
MAX_TEXT_CHARS = MAX_TASK_TEXT

TABLE = Table(
    "training",
    # the settings of a run: all in the page's URL (attention_ui/training/url.py, the page's link)
    Setting("task", "previous", choices=TASKS, translated=True, url="task"),
    Setting("text", text="training.default_text", shared=kit.LEARNER_TEXT, url="text"),  # the text task's
    Setting("layers", 1, bounds=LAYERS_RANGE, url="layers"),
    Setting("heads", 2, bounds=HEADS_RANGE, url="heads"),
    Setting("d_model", 32, bounds=D_MODEL_RANGE, url="d_model"),
    Setting("d_k", 16, bounds=D_K_RANGE, url="d_k"),
    Setting("scale", "sqrt", choices=SCALES, translated=True, url="scale"),
    Setting("divisor", 4.0, bounds=DIVISOR_RANGE, url="divisor"),  # the custom scale's
    Setting("mask", "causal", choices=MASKS, translated=True, url="mask"),  # the next-token tasks'
    Setting("positions", True, url="positions"),
    Setting("ffn", False, url="ffn"),
    Setting("lr", 0.003, bounds=LR_RANGE, url="lr"),
    Setting("steps", core.DEFAULT_STEPS["previous"], bounds=STEPS_RANGE, url="steps"),
    Setting("seed", 0, bounds=kit.SEED_RANGE, url="seed"),
    # the run's views
    Setting("snapshot", -1),  # the maps' step; not a step: the maps open on the last snapshot
    Setting("guess", None, translated=True),  # the learner's guess of the heads' pattern, before the run
    Setting("q_*", why="one radio per computed question, keyed by the question's id (kit.computed_quiz)"),
    Setting("train", why="the Train button"),
    Setting("live", why="the live box of a run going on (its CSS keeps it unfaded: views.LIVE_CSS)"),
    Setting("stop", why="the live box's Stop button"),
    Setting(
        "x_*", why="an experiment's Run button x_<name>, its live box x_live_<name>, its Stop x_stop_<name>"
    ),
    Setting(
        "job_*", why="the id of the session's latest job by name: job_train, job_<experiment> (cached.py)"
    ),
    Setting("asked", why="the training settings this session pressed Train for (cached.py)"),
)
# the settings live in its URL (attention_ui.training.url, its own decoder): link
PAGE = kit.Page.of(TABLE, url_context=False, link=True)
DEFAULTS = TABLE.defaults  # key -> first value (the table's; tests read them)
CHOICE_KEYS = TABLE.choice_keys


def _letters(vocab: int) -> str:
    return core_tasks.LETTERS[vocab - 1]


# The numbers the task descriptions state, read from the core (never written into the catalogs).
N = core_tasks.SYNTHETIC_LENGTH
TASK_VALUES = {
    "previous": {"n": N["previous"], "last": _letters(core_tasks.SYNTHETIC_VOCAB)},
    "reverse": {"n": N["reverse"], "last": _letters(core_tasks.SYNTHETIC_VOCAB), "n1": N["reverse"] - 1},
    "sort": {"n": N["sort"], "last": _letters(core_tasks.SYNTHETIC_VOCAB)},
    "induction": {
        "n": core_tasks.INDUCTION_LENGTH,
        "last": _letters(core_tasks.INDUCTION_VOCAB),
        "lo": core_tasks.INDUCTION_SEGMENT[0],
        "hi": core_tasks.INDUCTION_SEGMENT[1],
    },  # fmt: skip
    "text": {"n": core_tasks.TEXT_CONTEXT},
}
TRAIN_VALUES = {"batch": core.TrainSettings().batch, "held": core.HELD_OUT, "limit": MAX_TASK_TEXT}

# the core's reasons (TrainSettingsError.key) that are a whole number out of its range
RANGE_REASONS = ("layers", "heads", "d_model", "d_k", "steps", "seed", "batch")


@dataclass(frozen=True)
class Problem:
    key: str  # a catalog key of the ``training`` namespace
    values: Mapping[str, object] = field(default_factory=dict)


def uses_mask_choice(task: str) -> bool:
    """Whether the learner chooses the mask: on a next-token task, where the mask decides whether
    the answer is visible; the other tasks keep their own (causal for previous, none for reverse/sort)."""
    return task in NEXT_TOKEN_TASKS


def problem(err: core.TrainSettingsError) -> Problem:
    """The core's refusal as a catalog message."""
    if err.key in RANGE_REASONS:
        return Problem(
            "training.err_range", {"name": err.key, "lo": err.values.get("lo"), "hi": err.values.get("hi")}
        )
    return Problem(f"training.err_{err.key}", dict(err.values))


def read_settings(values: Mapping[str, object]) -> tuple[core.TrainSettings | None, Problem | None]:
    """``values``: the widgets' values by the table's names (no prefix). ``-> (settings, None)`` or
    ``(None, the problem)``: the core checks every value and names the first it refuses."""
    scale = values.get("scale")
    if scale == "custom":
        scale = values.get("divisor")
    task = values.get("task")
    try:
        settings = core.TrainSettings(
            task=task, text=str(values.get("text") or "") if task == "text" else "", layers=values.get("layers"),
            heads=values.get("heads"), d_model=values.get("d_model"), d_k=values.get("d_k"), scale=scale,
            mask=values.get("mask") if uses_mask_choice(str(task)) else None, positions=values.get("positions"),
            ffn=values.get("ffn"), lr=values.get("lr"), steps=values.get("steps"), seed=values.get("seed"),
        )  # fmt: skip
    except core.TrainSettingsError as err:
        return None, problem(err)
    return settings, None
