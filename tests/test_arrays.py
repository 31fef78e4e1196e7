"""attention_core.arrays.read_only: frozen, copied only when asked, C order on request."""

import numpy as np
import pytest

from attention_core.arrays import read_only


def test_frozen_in_place_or_copied():
    mine = np.arange(6.0).reshape(2, 3)
    shared = read_only(mine)
    assert np.shares_memory(shared, mine) and not shared.flags.writeable
    with pytest.raises(ValueError):
        shared[0, 0] = 1.0
    own = read_only(np.arange(3.0), copy=True)
    assert not own.flags.writeable
    source = np.arange(3.0)
    assert not np.shares_memory(read_only(source, copy=True), source) and source.flags.writeable


def test_contiguous_and_dtype():
    view = np.arange(12.0, dtype=np.float32).reshape(3, 4).T  # [4, 3], not C-ordered
    c = read_only(view, contiguous=True)
    assert c.flags.c_contiguous and np.array_equal(c, view) and c.dtype == np.float32
    d = read_only(view, copy=True, contiguous=True, dtype=np.float64)
    assert d.flags.c_contiguous and d.dtype == np.float64 and np.array_equal(d, view)
