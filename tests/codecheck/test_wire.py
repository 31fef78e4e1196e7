"""The JSON the server and the worker exchange (attention_core/codecheck/wire.py): arrays round trip
exactly, and a reply of the wrong shape, size or encoding is refused."""

from __future__ import annotations

import numpy as np
import pytest

from attention_core.codecheck.wire import MAX_ELEMENTS, WireError, decode_array, encode_array, maybe_array


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


def test_the_limits_are_the_protocols_and_each_refusal_says_what_is_wrong():
    empty = decode_array(encode_array(np.zeros((0, 3))))
    assert empty.shape == (0, 3)  # a zero length is a shape, not an error
    most = decode_array(encode_array(np.ones(MAX_ELEMENTS)))  # exactly the limit passes
    assert most.shape == (MAX_ELEMENTS,) and most.sum() == MAX_ELEMENTS
    three = decode_array(encode_array(np.ones((2, 1, 2))))
    assert three.shape == (2, 1, 2)
    for bad, said in (
        ({"shape": [1, 1, 1, 1], "f8": ""}, "bad shape"),  # MAX_DIMS + 1 dimensions
        ({"shape": [True], "f8": ""}, "bad shape"),
        ({"shape": [2, -1], "f8": ""}, "bad shape"),
        ({"shape": [MAX_ELEMENTS + 1], "f8": ""}, "bad shape"),
        ({"shape": [2, MAX_ELEMENTS // 2 + 1], "f8": ""}, "array too large"),
        ({"shape": [1], "f8": "AAAA AAAAAAA="}, "bad base64"),  # only the alphabet: no spaces skipped
        ({"shape": [1], "f8": "AAAAAAAAAAA=\n"}, "bad base64"),
        ({"shape": [1]}, "no data"),
        ({"shape": [1], "f8": ""}, "data length"),
    ):
        with pytest.raises(WireError, match=said):
            decode_array(bad)


def test_integers_travel_as_floats_booleans_keep_their_shape_and_what_arrives_is_read_only():
    ints = decode_array(encode_array(np.array([[1, -2], [3, 2**40]])))
    assert ints.dtype == np.float64 and ints.tolist() == [[1.0, -2.0], [3.0, 2.0**40]]
    mask = decode_array(encode_array(np.array([[True, False], [False, True]])))
    assert mask.dtype == bool and mask.tolist() == [[True, False], [False, True]]
    for a in (ints, mask):
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a[0, 0] = 0


def test_maybe_array_passes_none_through():
    assert maybe_array(None) is None
    assert maybe_array(encode_array(np.array([0.5, 2.0]))).tolist() == [0.5, 2.0]
