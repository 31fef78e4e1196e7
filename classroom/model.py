"""What the store hands out (frozen records), its errors, and the checks on what students type.

Nicknames are checked with ICU (PyICU), the Unicode Consortium's own library: which characters are
Default_Ignorable (invisible), and the UTS #39 confusables skeleton, so that "Alice", Cyrillic
"Аlice" and full-width "Ａｌｉｃｅ" are one nickname in a class (classroom/store.py refuses the second).

PyICU is optional for the app (requirements-class.txt: it is compiled against the system's ICU, which
a learner's laptop may lack), never for a nickname: a process without it starts no class and takes no
nickname (:func:`icu_ready`, :func:`clean_nickname`), so no name ever joins unchecked. A join without a
nickname has nothing to compare and is taken.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

NICKNAME_MAX = 24  # characters (code points) of a nickname, after surrounding spaces are dropped
CLASS_HOURS_DEFAULT = 4.0  # a session ends by itself this long after it started
RETENTION_DAYS_DEFAULT = 7.0  # a session's data are removed this long after it ended or expired
VIEW_MAX_BYTES = 16_000  # the teacher's view as JSON: a sentence of 2000 characters and settings fit
QUESTION_MAX_BYTES = 24_000  # a code poll holds the sentence's tokens (see VIEW_MAX_BYTES) and its program
MAX_CHOICES = 8
# Characters a nickname may not hold, beyond the Cc control characters: the bidirectional
# overrides and isolates (they can turn the text around it on the projector or in a spreadsheet).
_BIDI_CONTROLS = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


class ClassError(Exception):
    """A refusal the learner or teacher should read: ``key`` is a ``class.*`` catalog key."""

    def __init__(self, key: str, **values: object) -> None:
        super().__init__(key)
        self.key = key
        self.values = values


class Forbidden(ClassError):
    """A teacher action without the session's teacher token (or with a wrong one)."""

    def __init__(self) -> None:
        super().__init__("class.err_forbidden")


# Characters that draw nothing though they are letters or symbols: the Hangul fillers and the
# blank Braille pattern (a name of only these, or of format characters, looks empty).
BLANK_LETTERS = set("\u115f\u1160\u3164\uffa0\u2800")


def _is_tag(ch: str) -> bool:
    """The tag characters U+E0000-U+E007F: invisible, and able to hide a text inside a name."""
    return 0xE0000 <= ord(ch) <= 0xE007F


def _draws_nothing(ch: str) -> bool:
    return ch in BLANK_LETTERS or unicodedata.category(ch) in ("Cf", "Zs", "Mn", "Me", "Zl", "Zp")


def _icu():
    """PyICU's module, or None where it is not installed. Looked up at each use (a dictionary lookup
    once imported), not bound at import: the tests take it away the way a machine without it is."""
    try:
        import icu
    except ImportError:
        return None
    return icu


def icu_ready() -> bool:
    """Can this process check nicknames (PyICU installed)? Without it, no class starts here and no
    nickname is taken (classroom/store.py), with messages that say how to install it."""
    return _icu() is not None


def _has(ch: str, prop: str) -> bool:
    icu = _icu()
    return bool(icu.Char.hasBinaryProperty(ch, getattr(icu.UProperty, prop)))


def _emoji_glue(name: str, i: int) -> bool:
    """Whether the invisible character at ``i`` belongs to an emoji: a zero-width joiner between two
    pictographs ("👩\u200d💻" draws one picture) or a variation selector after an emoji ("❤\ufe0f")."""
    ch, before, after = name[i], name[i - 1 : i], name[i + 1 : i + 2]
    if ch == "\u200d":
        # after the pictograph, possibly its presentation selector or skin tone
        j = i - 1
        while j > 0 and (name[j] in "\ufe0f\ufe0e" or _has(name[j], "EMOJI_MODIFIER")):
            j -= 1
        return j >= 0 and bool(after) and all(_has(c, "EXTENDED_PICTOGRAPHIC") for c in (name[j], after))
    return ch in "\ufe0e\ufe0f" and bool(before) and _has(before, "EMOJI")


def invisible_at(name: str) -> int | None:
    """The position of the first character that draws nothing inside a visible name (Unicode's
    Default_Ignorable_Code_Point: zero-width spaces and joiners, word joiners, soft hyphens, Hangul
    fillers, variation and tag characters; and the blank Braille pattern), or None. The joiners and
    selectors of an emoji sequence are part of its picture, not hidden: they are allowed."""
    for i, ch in enumerate(name):
        hidden = ch in BLANK_LETTERS or _has(ch, "DEFAULT_IGNORABLE_CODE_POINT")
        if hidden and not _emoji_glue(name, i):
            return i
    return None


@functools.lru_cache(maxsize=1)
def _spoof_checker():
    return _icu().SpoofChecker()  # only its skeleton is used: a const operation, safe from any thread


def nickname_skeleton(name: str) -> str:
    """The UTS #39 confusables skeleton of ``name`` (ICU): two names look alike, by Unicode's data,
    exactly when their skeletons are equal ("Alice", "Аlice" with a Cyrillic А, "Ａｌｉｃｅ", "AIice"
    with a capital I). Case is kept: "alice" and "Alice" are told apart, as on the screen."""
    return str(_spoof_checker().getSkeleton(0, name))


def clean_nickname(raw: object) -> str | None:
    """The nickname to store (None when none was given), or ClassError saying what is wrong.

    Normalised (NFC) before its length is checked, so the stored name is never longer than the
    limit (one U+FB2C becomes three code points)."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise ClassError("class.err_nickname_type")
    if len(raw) > 4 * NICKNAME_MAX:  # before any other work on a 100 KB paste
        raise ClassError("class.err_nickname_long", limit=NICKNAME_MAX)
    for ch in raw:  # (NFC needs well-formed text: check the code points first)
        if ch in _BIDI_CONTROLS or _is_tag(ch) or unicodedata.category(ch) in ("Cc", "Cs", "Co", "Cn"):
            raise ClassError("class.err_nickname_chars")
    name = unicodedata.normalize("NFC", raw).strip()
    if not name:
        return None
    if len(name) > NICKNAME_MAX:
        raise ClassError("class.err_nickname_long", limit=NICKNAME_MAX)
    if all(_draws_nothing(ch) for ch in name):
        raise ClassError("class.err_nickname_blank")
    if not icu_ready():  # neither invisible characters nor look-alikes can be found: take no name
        raise ClassError("class.err_nickname_unchecked")
    at = invisible_at(name)
    if at is not None:  # "Ali\u200bce" would pass for "Alice" on every screen
        raise ClassError("class.err_nickname_invisible", position=at + 1, code=f"U+{ord(name[at]):04X}")
    return name


def nickname_marks(name: str) -> str:
    """The nickname with every character outside printable ASCII written as <U+XXXX>, so that
    look-alikes ("Alice", "Alice" + U+200B, Cyrillic "Аlice") differ in the results file;
    "" for a plain ASCII name (nothing to tell apart)."""
    if name.isascii() and name.isprintable():
        return ""
    return "".join(ch if ch.isascii() and ch.isprintable() else f"<U+{ord(ch):04X}>" for ch in name)


@dataclass(frozen=True)
class Started:
    """A new session: ``teacher_token`` is the only copy of the teacher's key (the store keeps its hash)."""

    session_id: str
    code: str
    teacher_token: str
    expires_at: float


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    code: str
    created_at: float
    expires_at: float
    ended_at: float | None
    join_url: str | None
    view: dict
    view_rev: int
    students: int
    shared_address: int = 0  # identities made from an address that made more than one
    most_per_address: int = 0  # the most identities one address made (0: none shared)
    one_per_device: bool = False  # the teacher's "one vote per device"

    def live(self, now: float) -> bool:
        return self.ended_at is None and now < self.expires_at


@dataclass(frozen=True)
class Joined:
    """A student in a session: ``student_token`` names the student's answers (kept in their browser)."""

    session_id: str
    code: str
    student_token: str
    nickname: str | None


@dataclass(frozen=True)
class Pulse:
    """What a student's page checks every second: has the view or the poll changed, is the class on?"""

    view_rev: int
    poll_seq: int | None
    poll_state: str | None
    live: bool


@dataclass(frozen=True)
class Poll:
    poll_id: str
    seq: int  # 1, 2, ... within the session
    step: int  # the presenter step the poll was opened at
    question: dict  # kind and parameters (no answer): the page turns it into text
    n_choices: int
    correct: int
    state: str  # "open", "closed" or "revealed"


@dataclass(frozen=True)
class PollTally:
    """The teacher's view of a poll: counts per choice (no names)."""

    poll: Poll
    counts: tuple[int, ...]

    @property
    def total(self) -> int:
        return sum(self.counts)

    @property
    def share_right(self) -> float | None:
        return self.counts[self.poll.correct] / self.total if self.total else None


@dataclass(frozen=True)
class StudentPoll:
    """A student's view of the latest poll: never others' answers; the right answer only once revealed."""

    poll_id: str
    seq: int
    question: dict
    n_choices: int
    state: str
    my_choice: int | None
    correct: int | None
    share_right: float | None
    step: int = 0  # the presenter step the poll was opened at


@dataclass(frozen=True)
class StudentPage:
    """What a student's full run reads (ClassStore.student_page): the class's pulse and, while the
    class is live, the view at ``view_rev`` and the latest poll as this student sees it."""

    pulse: Pulse
    view_rev: int | None
    view: dict | None
    poll: StudentPoll | None
