"""The JSON the server and the worker exchange (attention_core/codecheck/wire.py): arrays round trip
exactly, and a reply of the wrong shape, size or encoding is refused."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.codecheck.wire import WireError, decode_array, encode_array


def test_arrays_round_trip_and_bad_ones_are_refused():
    a = np.array([[1.5, -np.inf], [np.nan, 2.0]])
    back = decode_array(encode_array(a))
    assert back.shape == (2, 2) and back[0, 0] == 1.5 and np.isneginf(back[0, 1]) and np.isnan(back[1, 0])
    assert decode_array(encode_array(np.array([True, False]))).tolist() == [True, False]
    for bad in (
        [],
        {"shape": [2, -1], "f8": ""},
        {"shape": [10**6], "f8": ""},
        {"shape": [1, 1, 1, 1], "f8": ""},
        {"shape": [2]},
        {"shape": [1], "f8": "!!"},
        {"shape": [2], "f8": "AAAAAAAAAAA="},
        {"shape": [True], "f8": ""},
    ):
        with pytest.raises(WireError):
            decode_array(bad)
