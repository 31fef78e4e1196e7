"""Whether a pretrained model can run here (attention_core/models/availability.py), on libraries and
model files made up here: every reader library must be installed and the files found, and nothing is
imported or loaded to find out."""

from __future__ import annotations

import sys

import pytest

from attention_core.models.availability import can_run


class Missing(Exception):
    pass


def found():
    return "/models/x"


def not_found():
    raise Missing("no files")


def test_the_libraries_and_the_files_must_all_be_there():
    assert can_run(("json", "numpy"), found, Missing) is True
    assert can_run((), found, Missing) is True
    assert can_run(("json", "no_such_library_here"), found, Missing) is False
    assert can_run(("json",), not_found, Missing) is False


def test_a_missing_library_is_decided_before_the_files_are_looked_for():
    looked = []
    assert can_run(("no_such_library_here",), lambda: looked.append(1), Missing) is False
    assert looked == []


def test_a_library_is_found_without_being_imported():
    sys.modules.pop("this", None)  # `import this` prints; find_spec must not run it
    assert can_run(("this",), found, Missing) is True
    assert "this" not in sys.modules


def test_only_the_models_own_unavailable_error_means_no():
    def broken():
        raise OSError("disk error")

    with pytest.raises(OSError):
        can_run(("json",), broken, Missing)
