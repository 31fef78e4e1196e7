"""Where the class store lives and how long a class lasts, read from the environment."""

from __future__ import annotations

import pytest

from classroom import StoreSettings, open_store
from classroom.codes import CODE_ALPHABET, normalise_code
from classroom.model import ClassError, clean_nickname


def test_defaults_are_sqlite_in_a_data_folder_four_hours_seven_days(tmp_path):
    s = StoreSettings.from_env({"ATTENTION_LAB_DATA_DIR": str(tmp_path / "d")})
    assert (s.backend, s.class_hours, s.retention_days, s.join_url) == ("sqlite", 4.0, 7.0, None)
    store = open_store(s)  # created on first use, migrated
    try:
        assert (tmp_path / "d" / "classroom.sqlite3").exists() and store.schema_version() >= 1
    finally:
        store.close()


@pytest.mark.parametrize(
    "env, message",
    [
        ({"ATTENTION_LAB_DATABASE_URL": "mysql://x"}, "must start with postgresql://"),
        ({"ATTENTION_LAB_CLASS_HOURS": "four"}, "not a number"),
        ({"ATTENTION_LAB_CLASS_HOURS": "0"}, "must be above"),
        ({"ATTENTION_LAB_CLASS_RETENTION_DAYS": "-1"}, "must be above"),
    ],
)
def test_bad_settings_stop_the_start_with_a_message(env, message):
    with pytest.raises(SystemExit, match=message):
        StoreSettings.from_env(env)


def test_postgres_url_selects_postgres():
    assert (
        StoreSettings.from_env({"ATTENTION_LAB_DATABASE_URL": "postgresql://u@h/db"}).backend == "postgresql"
    )


def test_codes_have_no_lookalike_characters():
    assert not set("0O1IL2Z5S8BUV") & set(CODE_ALPHABET)
    assert normalise_code(" acd-efg ") == "ACDEFG"
    for bad in ("ACDEF0", "ACDEFGH", "", None, "Ａ" * 6, "x" * 10_000):
        assert normalise_code(bad) is None


@pytest.mark.parametrize(
    "raw, kept", [("  Ann ", "Ann"), ("", None), ("   ", None), (None, None), ("ｱﾝ", "ｱﾝ")]
)
def test_nicknames_kept(raw, kept):
    assert clean_nickname(raw) == kept


@pytest.mark.parametrize("raw", ["x" * 25, "a\x1bb", "\u2066x", 42])
def test_nicknames_refused(raw):
    with pytest.raises(ClassError):
        clean_nickname(raw)
