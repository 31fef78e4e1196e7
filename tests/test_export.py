"""Downloads: CSV with token labels, .npz and JSON of the whole trace, read back and compared."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

from attention_core import AttentionConfig, trace_text
from attention_core.export import json_bytes, npz_bytes
from attention_ui import tables
from attention_ui.playground.export import csv_bytes, csv_file_name

TEXT = "=cmd <b> 猫 the"


def make_trace():
    return trace_text(TEXT, AttentionConfig(d_model=8, heads=2, mask="causal"))


def test_csv_round_trips_with_labels_and_minus_infinity():
    tr = make_trace()
    frame = tables.attention_table(tr.scores_masked[1], tr.tokens)
    data = csv_bytes(frame)
    assert data.startswith("\ufeff".encode())  # BOM: spreadsheets read the Japanese token
    back = pd.read_csv(io.BytesIO(data), index_col=0, encoding="utf-8-sig")
    assert list(back.index) == ["0 =", "1 cmd", "2 <", "3 b", "4 >", "5 猫", "6 the"]
    assert list(back.columns) == list(back.index)
    np.testing.assert_array_equal(back.to_numpy(), np.asarray(tr.scores_masked[1]))  # exact, −∞ included
    lines = data.decode("utf-8-sig").splitlines()
    assert all(line[:1] not in "=+-@" for line in lines[1:])  # no formula can start a row


def test_file_names_are_safe():
    assert csv_file_name("weights", 1) == "attention_weights_head1.csv"
    assert csv_file_name("x", 1) == "attention_x.csv"
    name = csv_file_name("../../etc/passwd")
    assert "/" not in name and ".." not in name and name.endswith("etc_passwd.csv")


def test_npz_holds_every_array_and_loads_without_pickle():
    tr = make_trace()
    with np.load(io.BytesIO(npz_bytes(tr)), allow_pickle=False) as z:
        np.testing.assert_array_equal(z["weights"], tr.weights)
        np.testing.assert_array_equal(z["scores_masked"], tr.scores_masked)
        np.testing.assert_array_equal(z["mask"], tr.mask)
        np.testing.assert_array_equal(z["output"], tr.output)
        assert list(z["tokens"]) == list(tr.tokens)
        assert float(z["divisor"]) == tr.divisor


def test_json_is_strict_json_with_the_cli_layout():
    tr = make_trace()
    data = json.loads(json_bytes(tr).decode("utf-8"))  # strict: no NaN/Infinity tokens
    assert data["tokens"] == list(tr.tokens)
    np.testing.assert_allclose(np.array(data["weights"]), tr.weights, atol=0)
    masked = np.array(
        [[[np.nan if v is None else v for v in row] for row in h] for h in data["scores_masked"]]
    )
    assert np.array_equal(np.isnan(masked[0]), ~tr.mask)


def test_matrix_csv_matches_the_trace_for_one_or_all_heads():
    import csv
    import io
    import math

    import numpy as np

    from attention_core import AttentionConfig, export, trace_text

    tr = trace_text('a b, "c" =d a', AttentionConfig(d_model=8, heads=2, mask="causal", seed=3))
    n = tr.n

    def rows(name, heads=None):
        data = export.matrix_csv(tr, name, heads)
        assert data.startswith("\ufeff".encode())  # BOM for spreadsheets
        return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))

    one = rows("weights", [1])
    assert one[0] == ["head", "query"] + [f"{i} {tok}" for i, tok in enumerate(tr.tokens)]
    assert len(one) == 1 + n and all(r[0] == "1" for r in one[1:])
    for i in range(n):  # independently: a causal softmax of the scaled raw scores, head 1
        s = [
            sum(tr.Q[1, i, c] * tr.K[1, j, c] for c in range(tr.Q.shape[2])) / math.sqrt(4)
            for j in range(i + 1)
        ]
        e = [math.exp(x - max(s)) for x in s]
        expect = [x / sum(e) for x in e] + [0.0] * (n - i - 1)
        np.testing.assert_allclose([float(x) for x in one[1 + i][2:]], expect, atol=1e-12)
    every = rows("scores_masked")
    assert [r[0] for r in every[1:]] == ["0"] * n + ["1"] * n
    assert every[1][3] == "-inf"  # query 0 may not see key 1
    shared = rows("X", [0])
    assert shared[0][:3] == ["token", "d0", "d1"] and len(shared) == 1 + n
    assert all(r[0][0].isdigit() for r in shared[1:])  # labels start with the position, never "=", "-"
    with pytest.raises(ValueError):
        export.matrix_csv(tr, "W_Q")
    with pytest.raises(ValueError):
        export.matrix_csv(tr, "weights", [2])
