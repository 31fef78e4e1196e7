"""The live class's shared state: sessions, the teacher's current view, polls and answers.

One small interface (:class:`classroom.store.ClassStore`) with two backends: SQLite (the standard
library's sqlite3, one file in a data folder, the default) and PostgreSQL (psycopg 3, pooled) when
``ATTENTION_LAB_DATABASE_URL`` is set. :func:`open_store` picks one from the environment.
Nothing here imports Streamlit; the pages live in ``app_pages/class_*.py`` and
``attention_ui/classroom/``.
"""

from .model import (
    CLASS_HOURS_DEFAULT,
    NICKNAME_MAX,
    RETENTION_DAYS_DEFAULT,
    ClassError,
    Forbidden,
    Joined,
    Poll,
    PollTally,
    SessionInfo,
    Started,
    StudentPoll,
)
from .settings import StoreSettings, open_store

__all__ = [
    "CLASS_HOURS_DEFAULT",
    "NICKNAME_MAX",
    "RETENTION_DAYS_DEFAULT",
    "ClassError",
    "Forbidden",
    "Joined",
    "Poll",
    "PollTally",
    "SessionInfo",
    "Started",
    "StoreSettings",
    "StudentPoll",
    "open_store",
]
