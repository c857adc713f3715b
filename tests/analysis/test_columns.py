"""analysis.columns.Table, the pandas-free tables of compare: the kinds pandas would infer, the same
DataFrame, and every table format writing exactly what pandas' to_csv / to_dict wrote before."""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ulnorm_eval.analysis.columns import Table, infer_kind
from ulnorm_eval.render.frames import render

FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=64),
                   st.floats(min_value=-1e-3, max_value=1e-3), st.integers(-10**6, 10**6).map(float))
TEXT = st.text(alphabet="ab c,\t\"'=+-é", min_size=0, max_size=6)


def _pandas_records(values, mask):
    """What the JSON output held when pandas wrote it: ``to_dict`` records of ``values`` with the
    gaps of ``mask`` as null, non-finite numbers as null and numpy scalars as Python ones."""
    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return v.item() if hasattr(v, "item") else v

    recs = values.astype(object).where(mask.notna(), None).to_dict(orient="records")
    return json.loads(json.dumps([{k: clean(v) for k, v in r.items()} for r in recs]))


@pytest.mark.parametrize("values, kind", [
    ([True, np.bool_(False)], "bool"),
    ([1, np.int64(2)], "int"),
    ([1, 2.5], "float"),
    ([np.float64("nan"), 3], "float"),
    ([1, math.inf], "float"),
    (["a", "b"], "str"),
    ([True, 1], "object"),  # pandas keeps a bool-and-int column as objects
    (["a", None], "str"),
    (["a", 1], "object"),
    ([2 ** 64, 1.5], "object"),
])
def test_kinds_are_those_pandas_infers(values, kind):
    assert infer_kind(values) == kind
    dtype = pd.DataFrame({"c": values})["c"].dtype
    expect = {"bool": "bool", "int": "int64", "float": "float64"}.get(kind)
    if expect:
        assert str(dtype) == expect
    else:
        assert not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_object_dtype(dtype)


def test_to_frame_and_back():
    t = Table({"run": ["a", "b"], "mean": [0.5, float("nan")], "rank": [1, 2], "sig": [True, False],
               "conflicts": [3, None]}, {"conflicts": "Int64"})
    df = t.to_frame()
    assert [str(d) for d in df.dtypes] == [str(pd.DataFrame({"x": ["a"]})["x"].dtype), "float64", "int64", "bool",
                                          "Int64"]
    back = Table.from_frame(df)
    assert back.kinds == t.kinds and back["conflicts"] == [3, None] and back["run"] == ["a", "b"]
    assert math.isnan(back["mean"][1]) and back["rank"] == [1, 2]


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(0, 6).flatmap(lambda n: st.tuples(
    st.lists(FLOATS, min_size=n, max_size=n), st.lists(st.integers(-5, 10**12), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n, max_size=n), st.lists(TEXT, min_size=n, max_size=n),
    st.lists(st.one_of(st.none(), st.integers(0, 9)), min_size=n, max_size=n))),
    st.sampled_from([None, 0, 2, 4]))
def test_delimited_and_json_equal_pandas(cols, precision):
    """tsv, csv and json of a Table against pandas' to_csv and to_dict on the same DataFrame (the
    implementation before the tables left pandas); with a precision, floats as ``%.Nf`` (to_csv's
    float_format) and, in JSON, Python's round."""
    from ulnorm_eval.render.values import csv_cell, safe_text

    f, i, b, s, n = cols
    t = Table({"f": f, "i": i, "b": b, "s": s, "n": n}, {"f": "float", "i": "int", "b": "bool", "s": "str",
                                                         "n": "Int64"})
    df = t.to_frame()
    rounded = df if precision is None else df.assign(f=[round(value, precision) for value in df["f"]])
    float_format = None if precision is None else f"%.{precision}f"
    for sep, fmt, cell in (("\t", "tsv", safe_text), (",", "csv", csv_cell)):
        d = df.assign(s=df["s"].map(cell))
        assert render({"x": t}, fmt, precision) == d.to_csv(sep=sep, index=False, na_rep="nan", lineterminator="\n",
                                                            float_format=float_format)
        assert render({"x": t}, fmt, precision) == render({"x": df}, fmt, precision)

    assert json.loads(render({"x": t}, "json", precision))["x"] == _pandas_records(rounded, df)
    assert render({"x": t}, "table", precision) == render({"x": df}, "table", precision)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.lists(st.one_of(st.none(), TEXT, st.integers(-3, 3), st.floats(allow_nan=True, width=64),
                       st.integers(2 ** 63, 2 ** 70)), min_size=n, max_size=n),
    st.lists(st.one_of(st.none(), TEXT), min_size=n, max_size=n))))
def test_object_and_missing_text_columns_equal_pandas(cols):
    """DataFrames with object columns (text mixed with numbers, integers beyond int64) and text with
    gaps print as pandas printed them: to_csv's cells, JSON numbers kept as numbers and gaps as
    null; Tables built from the same values infer the same kinds."""
    from ulnorm_eval.render.values import safe_text

    mixed, text = cols
    df = pd.DataFrame({"m": pd.Series(mixed, dtype=object), "t": pd.Series(text, dtype=object)})
    d = df.assign(**{c: pd.Series([safe_text(v) if isinstance(v, str) else v for v in df[c]], dtype=object)
                     for c in ("m", "t")})  # values kept as they are (Series.map would re-infer: 0 -> 0.0)
    assert render({"x": df}, "tsv") == d.to_csv(sep="\t", index=False, na_rep="nan", lineterminator="\n")

    assert json.loads(render({"x": df}, "json"))["x"] == _pandas_records(df, df)
    table = render({"x": df}, "table")
    assert ("–" in table) == any(v is None or (isinstance(v, float) and math.isnan(v)) for v in mixed + text)
    t = Table({"m": mixed, "t": text})
    assert json.loads(render({"x": t}, "json")) == json.loads(render({"x": df}, "json"))


def test_huge_integers_mixed_with_inf_stay_integers():
    t = Table({"n": [2 ** 70, math.inf, 3]})
    assert t.kinds["n"] == "object"
    assert render({"x": t}, "tsv") == f"n\n{2 ** 70}\ninf\n3\n"
    assert json.loads(render({"x": t}, "json"))["x"] == [{"n": 2 ** 70}, {"n": None}, {"n": 3}]
    assert Table({"n": [7, math.inf]}).kinds["n"] == "float"  # as pandas: 7.0


def test_a_run_named_metric_keeps_the_metric_column_when_transposed():
    from ulnorm_eval.render.frames import format_frames_table

    metrics = ["AP", "nDCG@10", "P@10", "RR", "Rprec", "UL2(AP)", "UL2(RR)"]
    t = Table({"run": ["metric", "b"] * len(metrics), "metric": [m for m in metrics for _ in (0, 1)],
               "mean": [0.1, 0.2] * len(metrics), "rank": [2, 1] * len(metrics)})
    narrow = format_frames_table({"systems": t}, 4, {}, width=60)  # too wide as run x metric: transposed
    assert "metric′" in narrow and all(m in narrow for m in metrics)


def test_csv_cells_with_spaces_before_a_formula_are_neutralised():
    from ulnorm_eval.render.values import csv_cell

    assert csv_cell(" =1+1") == "' =1+1" and csv_cell("  @x") == "'  @x"
    assert csv_cell(" -0.5") == " -0.5" and csv_cell("a =b") == "a =b"


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.integers(0, 5).flatmap(lambda n: st.tuples(
    st.lists(FLOATS, min_size=n, max_size=n), st.lists(st.integers(-5, 10**12), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n, max_size=n), st.lists(st.one_of(st.none(), TEXT), min_size=n, max_size=n),
    st.lists(st.one_of(st.none(), st.integers(0, 9)), min_size=n, max_size=n),
    st.lists(st.one_of(st.none(), TEXT, st.integers(-3, 3), st.floats(allow_nan=True, width=64),
                       st.integers(2 ** 63, 2 ** 70)), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=6, max_size=6))), min_size=1, max_size=3), st.sampled_from([None, 2]))
def test_stacked_tables_write_each_row_cell_by_cell(specs, precision):
    """tsv/csv of several tables (compare's pairs, systems and summary): each table with its own header and
    columns, separated by a blank line, every cell as pandas' to_csv writes it; the text a row-by-row
    writer gives (written column by column)."""
    import csv
    import io

    # private: the stacked writer's cell, against a row-by-row csv writer
    from ulnorm_eval.render.frames import _csv_text
    from ulnorm_eval.render.values import csv_cell, safe_text

    names = ("f", "i", "b", "s", "n", "m")
    kinds = dict(zip(names, ("float", "int", "bool", "str", "Int64", None)))
    tables = {}
    for k, (*cols, keep) in enumerate(specs):
        picked = [name for name, kept in zip(names, keep) if kept]
        # a name csv neutralises (a formula)
        tables[f"=t{k}"] = Table({name: col for name, col in zip(names, cols) if name in picked},
                                {name: kinds[name] for name in picked if kinds[name]})
    for sep, fmt, cell in (("\t", "tsv", safe_text), (",", "csv", csv_cell)):
        blocks = []
        for t in tables.values():
            buf = io.StringIO()
            writer = csv.writer(buf, delimiter=sep, lineterminator="\n")
            writer.writerow([cell(c) for c in t.columns])
            for row in t.rows():
                writer.writerow([_csv_text(v, t.kinds[c] in ("str", "object"), cell, precision)
                                 for c, v in zip(t.columns, row)])
            blocks.append(buf.getvalue())
        assert render(tables, fmt, precision) == "\n".join(blocks)


def test_text_columns_keep_text_and_turn_gaps_into_none():
    """A 'str' column: text kept as it is (an all-text column, compare's run names, taken whole), a gap
    (None, NaN) as None, anything else as its str."""
    values = np.array(["a", "b", "a"], dtype=object)
    t = Table({"s": values}, {"s": "str"})
    assert t["s"] == ["a", "b", "a"] and all(type(v) is str for v in t["s"])
    values[0] = "z"  # the table holds its own list
    assert t["s"][0] == "a"
    mixed = Table({"s": ["a", None, float("nan"), 3, np.str_("b")]}, {"s": "str"})["s"]
    assert mixed == ["a", None, None, "3", "b"] and type(mixed[3]) is str
