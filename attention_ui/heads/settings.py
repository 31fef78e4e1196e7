"""The heads page's settings, declared once (attention_ui/settings_table.py): key prefix ``heads``.

The model, sentence, layer, head, ablation and token live in the page's URL (attention_ui/heads/url.py,
its own decoder: the page's ``link``); the sentence is the learner's shared one.
"""

from __future__ import annotations

from attention_core.labs import heads as H
from attention_ui import kit
from attention_ui.settings_table import Setting, Table

QK_SOURCES = ("decoder", "random")  # queries and keys of the decoder's head, or of the random-weights layer

TABLE = Table(
    "heads",
    # only while the learner has no sentence: the learner's own otherwise
    Setting("text", text="heads.default_text", shared=kit.LEARNER_TEXT, url="text"),
    # no first value: by language, as on the decoder page (the page sets it; a URL's wins)
    Setting("model", choices=H.MODELS, translated=True, url="model"),
    Setting("layer", 0, translated=True, url="layer"),
    Setting("head", 0, translated=True, url="head"),
    Setting("kind", "zero", choices=H.ABLATIONS, translated=True, url="kind"),
    Setting("token", -1, translated=True, url="token"),  # -1: the model's top next token
    Setting("sweep", False),  # ablate every head in turn (about 30 s)
    Setting("length", H.DEFAULT_INDUCTION_LENGTH, bounds=H.INDUCTION_LENGTH),  # the induction test's copies
    Setting("seed", 0, bounds=kit.SEED_RANGE),  # the induction test's random tokens
    Setting("window", H.DEFAULT_WINDOW, bounds=H.WINDOW_RANGE),  # the StreamingLLM experiment's window
    Setting("masks", False),  # run the mask experiment
    Setting("qk_source", "decoder", choices=QK_SOURCES, translated=True),
    Setting("q_*", why="one radio per computed question, keyed by the question's id (kit.computed_quiz)"),
)
# model, sentence, head and token live in its URL (attention_ui.heads.url, its own decoder): link
PAGE = kit.Page.of(TABLE, url_context=False, link=True)
