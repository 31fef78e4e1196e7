"""A page's settings, declared once: one :class:`Setting` per session key, gathered in a :class:`Table`.

Every session key a page uses is an entry of its page's table (``attention_ui/<page>/settings.py``):
its default (or the catalog key of a default in the learner's language), its range or choices, the URL
parameter that carries it, whether it is part of the learner's shared context, and whether presenter
mode and the live class carry it. The kit's widgets, the URL code, the defaults, presenter mode and
the class's view read the table; code elsewhere asks the table for a key by its short name::

    TABLE = Table(
        "masks",
        Setting("text", text="masks.default_text", shared=LEARNER_TEXT, url="text"),
        Setting("pad", 2, bounds=(0, 4)),
        Setting("kind", "causal", choices=LAB_MASK_KINDS, translated=True),
        Setting("q_*", why="one radio per computed question, keyed by the question's id"),
    )
    TABLE.key("pad")            # "masks_pad"
    TABLE.key("q", "ffn")       # "masks_q_ffn" (a declared family)
    TABLE.key("pads")           # KeyError: masks has no setting 'pads'

A name that is not declared raises at once (a misspelled key fails in the first unit test that runs
the code, not silently in the browser), and :func:`owner` tells which table a session key belongs to,
so a test can run a page and check that every key it left in the session is declared.

Every table also declares the keys the kit itself keeps for each page (:data:`KIT_SETTINGS`: presenter
mode, the tables switch, the language and URL markers), and ``<name>_synced`` for each shared setting
(:func:`attention_ui.kit.share_context`). No Streamlit here: the tables are plain data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

NO_DEFAULT = object()  # a key with no first value: set by the page's code or by a widget's own default
_NAME = re.compile(r"^[a-z0-9][a-z0-9_]*(_\*)?$")
_PREFIX = re.compile(r"^[a-z][a-z_]{1,15}$")


@dataclass(frozen=True)
class Setting:
    """One session key of a page, by its short name (the key is ``<prefix>_<name>``).

    A name ending in ``_*`` declares a family of keys built at run time (``q_*``: ``<prefix>_q_<part>``).
    Whatever is not a learner's setting (a button, a cached result, a marker) says ``why`` it is kept.
    """

    name: str
    default: object = NO_DEFAULT
    text: str | None = None  # the catalog key of a default in the learner's language
    bounds: tuple[float, float] | None = None  # a number's range (the widget's and the URL's)
    choices: tuple | None = None  # a choice widget's options
    translated: bool = False  # a choice whose labels are translated: re-sent after a language switch
    url: str | None = None  # the URL parameter that carries it
    shared: str | None = None  # the learner's context key it exchanges with the other pages (kit.LEARNER_*)
    accepts: Callable[[object], bool] | None = None  # which shared values the page can take
    presenter: bool = False  # presenter mode carries it: the slide controls show and keep it
    live: bool = False  # the live class carries it: a student following the teacher receives it
    why: str = ""  # what a key that is not a learner's setting holds

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(f"a setting's name is lower-case words joined by '_', not {self.name!r}")
        if self.default is not NO_DEFAULT and self.text is not None:
            raise ValueError(f"setting {self.name!r} has a default and a translated default")
        if self.accepts is not None and self.shared is None:
            raise ValueError(f"setting {self.name!r} accepts shared values but shares nothing")

    @property
    def family(self) -> bool:
        return self.name.endswith("_*")

    @property
    def stem(self) -> str:
        return self.name[:-2] if self.family else self.name


# The keys the kit keeps for every page: declared here once, added to every table.
KIT_SETTINGS = (
    Setting("tables", False, why="the switch that shows the tables behind the charts (Page.tables_toggle)"),
    Setting("present", False, why="presenter mode is on (attention_ui/presenter.py)"),
    Setting("slide", why="presenter mode's current slide"),
    Setting("present_*", why="presenter mode's buttons: prev, next, lang, exit, go_<n>, start"),
    Setting(
        "lang_shown",
        why="the language the choice widgets were last drawn in (kit.refresh_translated_choices)",
    ),
    Setting("url_written", why="the URL the page wrote itself, not read again as a shared link"),
    Setting(
        "url_ours", why="the URLs the page wrote before (kit.url_of_ours): a browser behind sends them back"
    ),
    Setting("chart_*", why="a chart's element key (Page.chart)"),
    Setting("table_*", why="a table's element key (Page.table)"),
    Setting("tk_*", why="the take-home buttons: count, pass, scorm, format, quiz (attention_ui/takehome)"),
)
_KIT_NAMES = frozenset(s.name for s in KIT_SETTINGS)


def _adds_to_kit(s: Setting) -> bool:
    """Whether a page's ``s``, named like a kit key, says more than the kit's entry does."""
    return s.default is not NO_DEFAULT or bool(s.url or s.presenter or s.live)


class Table:
    """A page's settings: the only place its session keys are spelled."""

    def __init__(self, prefix: str, *settings: Setting, kit: bool = True) -> None:
        if not _PREFIX.match(prefix):
            raise ValueError(f"a page prefix is 2-16 lower-case letters or underscores, not {prefix!r}")
        own = list(settings)
        shared = [Setting(synced(s.name), why="the shared value last exchanged") for s in own if s.shared]
        # a page may declare one of the kit's keys again to give it more (a default, a URL name, the
        # presenter or live flag: the playground's URL carries its tables switch and presenter mode);
        # declared again with nothing more, it is a mistake like any key declared twice
        more = {s.name for s in own if s.name in _KIT_NAMES and _adds_to_kit(s)}
        entries = own + shared + ([s for s in KIT_SETTINGS if s.name not in more] if kit else [])
        names: dict[str, Setting] = {}
        for s in entries:
            if s.name in names:
                raise ValueError(f"{prefix}: setting {s.name!r} is declared twice")
            names[s.name] = s
        self.prefix = prefix
        self.settings: tuple[Setting, ...] = tuple(own)
        self._by_name = names
        _REGISTRY[prefix] = self

    def __repr__(self) -> str:
        return f"Table({self.prefix!r}, {len(self.settings)} settings)"

    def __iter__(self) -> Iterator[Setting]:
        return iter(self.settings)

    def setting(self, name: str) -> Setting:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"{self.prefix} has no setting {name!r}: declare it in the page's table") from None

    def key(self, name: str, *parts: object) -> str:
        """The session key of setting ``name``; with ``parts``, a key of the family ``<name>_*``."""
        if parts:
            self.setting(f"{name}_*")
            return "_".join([self.prefix, name, *map(str, parts)])
        if name.endswith("_*"):
            raise KeyError(f"{self.prefix}: {name!r} is a family; ask for key({name[:-2]!r}, part)")
        self.setting(name)
        return f"{self.prefix}_{name}"

    __getitem__ = key

    def family(self, name: str) -> str:
        """The stem ``<prefix>_<name>`` of the declared family ``<name>_*``, for a component that
        builds its own keys below it (``code_view.lab_code(..., TABLE.family("code"))``)."""
        self.setting(f"{name}_*")
        return f"{self.prefix}_{name}"

    def owns(self, key: str) -> bool:
        """Whether the session key ``key`` is one of this table's (a family's member included)."""
        if not key.startswith(self.prefix + "_"):
            return False
        rest = key[len(self.prefix) + 1 :]
        if rest in self._by_name and not self._by_name[rest].family:
            return True
        return any(s.family and rest.startswith(s.stem + "_") for s in self._by_name.values())

    def _key_of(self, s: Setting) -> str:
        return f"{self.prefix}_{s.name}"

    # --- what the kit reads -------------------------------------------------------------------------

    @property
    def defaults(self) -> dict[str, object]:
        """key -> first value, for the settings that have one (set once, :func:`kit.init_state`)."""
        return {self._key_of(s): s.default for s in self.settings if s.default is not NO_DEFAULT}

    @property
    def translated_defaults(self) -> dict[str, str]:
        """key -> catalog key of its default in the learner's language."""
        return {self._key_of(s): s.text for s in self.settings if s.text is not None}

    @property
    def choice_keys(self) -> tuple[str, ...]:
        return tuple(self._key_of(s) for s in self.settings if s.translated)

    @property
    def shared(self) -> dict[str, str]:
        """key -> the learner's context key, in the table's order (a head count after its d_model)."""
        return {self._key_of(s): s.shared for s in self.settings if s.shared}

    @property
    def shared_accepts(self) -> dict[str, Callable[[object], bool]]:
        return {self._key_of(s): s.accepts for s in self.settings if s.accepts is not None}

    @property
    def url_names(self) -> dict[str, str]:
        """key -> its URL parameter."""
        return {self._key_of(s): s.url for s in self.settings if s.url}

    @property
    def presenter_keys(self) -> tuple[str, ...]:
        return tuple(self._key_of(s) for s in self.settings if s.presenter)

    @property
    def live_keys(self) -> tuple[str, ...]:
        return tuple(self._key_of(s) for s in self.settings if s.live)

    def values(self, state: Mapping[str, object]) -> dict[str, object]:
        """The table's plain settings in ``state`` by short name (families and kit keys left out)."""
        return {s.name: state.get(self._key_of(s)) for s in self.settings if not s.family}


def synced(key: str) -> str:
    """The key remembering the value a shared setting ``key`` last exchanged with the learner's context
    (:func:`attention_ui.kit.share_context`); every table declares it for each shared setting."""
    return f"{key}_synced"


_REGISTRY: dict[str, Table] = {}
# Session keys owned by no page: each listed with its reason (the learner's shared context, and the
# few app-wide keys). A table for these would be a table of one page that does not exist.
APP_KEYS: dict[str, str] = {
    "lang": "the learner's language (attention_ui/language.py LANG_KEY), read by every page",
    "app_language_shown": "app.py: the language switch has been drawn this session",
    "learner_text": "the learner's shared sentence (kit.LEARNER_TEXT): the pages exchange it",
    "learner_d_model": "the learner's shared d_model (kit.LEARNER_D_MODEL)",
    "learner_seed": "the learner's shared seed (kit.LEARNER_SEED)",
    "learner_heads": "the learner's shared head count (kit.LEARNER_HEADS)",
    "learner_mask": "the learner's shared mask (kit.LEARNER_MASK)",
}


def tables() -> dict[str, Table]:
    """Every table built so far, by prefix (import the pages' settings modules first)."""
    return dict(_REGISTRY)


def owner(key: str) -> Table | None:
    """The table that declares session key ``key``, or None. The longest matching prefix wins
    (``pg_`` and ``pgx_`` could both exist)."""
    found = [t for t in _REGISTRY.values() if t.owns(key)]
    return max(found, key=lambda t: len(t.prefix)) if found else None
