"""The core's Parquet writer (``_core.write_parquet``, used by ``write_run`` for a run's own
tables) against pyarrow's: the files read back with the same schema and values, the store's
checks and queries work on them, and the ``ecnlab run`` command imports no pyarrow."""

from __future__ import annotations

import copy
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import ecnlab
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import SMALL, invoke, table_values
from ecnlab import _core
from ecnlab._result import tables_from_native
from ecnlab.cli import median_response_time
from ecnlab.store import read_run, verify, write_parquet_table, write_run


def _scenarios() -> dict[str, dict[str, Any]]:
    web = copy.deepcopy(SMALL)
    web["name"] = "web-only"
    # Exchanges alone, a heavy load on a short queue: many exchanges are unfinished at the
    # end (NaN end times), bulk and AQM tables are empty.
    web["workloads"] = [dict(SMALL["workloads"][1], arrival_rate_per_s=120)]
    red = copy.deepcopy(SMALL)
    red["name"] = "red-samples"
    red["topology"]["bottleneck"]["queue"]["aqm"] = {
        "kind": "red",
        "ecn": True,
        "min_th_pkts": 5,
        "max_th_pkts": 15,
        "max_p": 0.1,
    }
    red["tcp"] = {"ecn": True}
    red["metrics"]["flow_sample_ms"] = 100  # a long flow_samples table
    return {"small": copy.deepcopy(SMALL), "web": web, "red": red}


SCENARIOS = _scenarios()


@pytest.fixture(scope="module", params=sorted(SCENARIOS))
def native_run(request: pytest.FixtureRequest) -> ecnlab.Result:
    return ecnlab.run(copy.deepcopy(SCENARIOS[request.param]), seed=3, progress=False)


def test_files_read_back_as_pyarrows(native_run: ecnlab.Result, tmp_path: Path) -> None:
    native = native_run.native_tables()
    assert native is not None
    kinds: set[str] = set()
    for name, columns in native.items():
        ours, theirs = tmp_path / f"{name}.native.parquet", tmp_path / f"{name}.arrow.parquet"
        rows, size = _core.write_parquet(str(ours), dict(columns))
        pq.write_table(tables_from_native({name: columns})[name], theirs)
        assert size == ours.stat().st_size
        a, b = pq.read_table(ours), pq.read_table(theirs)
        assert a.num_rows == b.num_rows == rows, name
        assert a.schema.equals(b.schema, check_metadata=True), (name, a.schema, b.schema)
        assert [f.nullable for f in a.schema] == [f.nullable for f in b.schema]
        assert table_values(a) == table_values(b), name
        # Floats bit for bit (NaN included), beyond table_values' marker.
        for col in a.column_names:
            if pa.types.is_floating(a.schema.field(col).type):
                assert [_bits(x) for x in a.column(col).to_pylist()] == [
                    _bits(x) for x in b.column(col).to_pylist()
                ], (name, col)
        kinds |= {str(f.type) for f in a.schema}
        if rows == 0:
            kinds.add("empty")
    # The three scenarios together exercise every column type and an empty table.
    if native_run.scenario["name"] == "test-small":
        assert {"double", "int64", "uint64", "bool", "string", "empty"} <= kinds


def _layout(path: Path) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """Per column: its Arrow type, the codec of its pages and its encodings."""
    meta = pq.ParquetFile(path).metadata
    schema = pq.read_schema(path)
    if meta.num_row_groups == 0:
        return {}
    group = meta.row_group(0)
    out = {}
    for i in range(group.num_columns):
        col = group.column(i)
        out[col.path_in_schema] = (
            str(schema.field(col.path_in_schema).type),
            col.compression,
            tuple(sorted(col.encodings)),
        )
    return out


def test_tables_have_zstd_pages_and_split_doubles_from_either_writer(
    native_run: ecnlab.Result, tmp_path: Path
) -> None:
    """The core's files and ``store.write_parquet_table``'s (tables made in Python) are laid
    out alike: Zstandard pages, doubles BYTE_STREAM_SPLIT, dictionaries only for strings."""
    native = native_run.native_tables()
    assert native is not None
    for name, columns in native.items():
        ours, theirs = tmp_path / f"{name}.native.parquet", tmp_path / f"{name}.arrow.parquet"
        _core.write_parquet(str(ours), dict(columns))
        write_parquet_table(tables_from_native({name: columns})[name], theirs)
        layout = _layout(ours)
        assert layout == _layout(theirs), name
        has_values = pq.ParquetFile(ours).metadata.num_rows > 0
        for col, (arrow_type, codec, encodings) in layout.items():
            assert codec == "ZSTD", (name, col)
            if has_values:  # an empty column lists no data encoding
                assert ("BYTE_STREAM_SPLIT" in encodings) == (arrow_type == "double"), (name, col)
                dictionary = "RLE_DICTIONARY" in encodings or "PLAIN_DICTIONARY" in encodings
                assert dictionary == (arrow_type == "string"), (name, col, encodings)


def _bits(x: float) -> bytes:
    import struct

    return struct.pack("<d", x)


def test_web_exchanges_keep_their_nan_end_times(tmp_path: Path) -> None:
    result = ecnlab.run(copy.deepcopy(SCENARIOS["web"]), seed=3, progress=False)
    out = write_run(result, tmp_path / "run")
    ex = pq.read_table(out / "exchanges.parquet")
    completed = ex.column("completed").to_pylist()
    times = ex.column("response_time_s").to_pylist()
    assert False in completed and True in completed, "the scenario leaves exchanges open"
    assert all(math.isnan(t) for t, c in zip(times, completed) if not c)
    assert pq.read_table(out / "flow_samples.parquet").num_rows == 0


def test_a_run_is_stored_without_pyarrow(tmp_path: Path) -> None:
    """ecnlab.run + write_run load no pyarrow; the tables made afterwards equal the files."""
    out = tmp_path / "run"
    code = f"""
import sys, ecnlab
from ecnlab.store import write_run
r = ecnlab.run(ecnlab.load_scenario({str(ecnlab_example("red-dumbbell.toml"))!r},
               ["duration_s=2", "warmup_s=0.5"]), progress=False)
write_run(r, {str(out)!r})
print(repr(r))
loaded = sorted(m for m in ("pyarrow", "pandas", "duckdb", "numpy") if m in sys.modules)
print("loaded:", ",".join(loaded))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].strip() == "loaded:", proc.stdout
    assert "aqm_samples=" in proc.stdout
    assert verify(out).ok
    again = ecnlab.run(
        ecnlab.load_scenario(ecnlab_example("red-dumbbell.toml"), ["duration_s=2", "warmup_s=0.5"]),
        progress=False,
    )
    stored = read_run(out)
    assert stored.run_id == again.run_id
    for name, table in again.tables.items():
        assert table.schema == stored.tables[name].schema, name
        assert table_values(table) == table_values(stored.tables[name]), name


def ecnlab_example(name: str) -> Path:
    return Path(__file__).resolve().parents[1] / "examples" / name


def test_changed_tables_are_written_by_pyarrow(tmp_path: Path) -> None:
    result = ecnlab.run(copy.deepcopy(SMALL), seed=2, progress=False)
    assert result.native_tables() is not None
    assert result.tables["flows"].num_rows > 1
    assert result.native_tables() is not None, "made, not changed: still the run's own"
    result.tables["flows"] = result.tables["flows"].slice(0, 1)
    assert result.native_tables() is None
    out = write_run(result, tmp_path / "run")
    assert pq.read_table(out / "flows.parquet").num_rows == 1
    assert verify(out).ok


def test_the_result_api_is_unchanged(small_result: ecnlab.Result) -> None:
    r = ecnlab.run(copy.deepcopy(SMALL), seed=1, progress=False)
    assert r.table_names == list(ecnlab.TABLES)
    assert repr(r) == repr(small_result)
    assert r.num_rows("flows") == small_result.flows.num_rows
    assert isinstance(r.exchanges, pa.Table) and r.exchanges is r.tables["exchanges"]
    assert "sojourn" in dir(r)
    with pytest.raises(AttributeError):
        r.seed = 2  # type: ignore[misc]
    with pytest.raises(AttributeError, match="no attribute or table"):
        r.nonsense  # noqa: B018
    import pickle

    back = pickle.loads(pickle.dumps(r))
    assert back.native_tables() is not None and back.run_id == r.run_id
    assert table_values(back.exchanges) == table_values(r.exchanges)
    # A result built from pyarrow tables has no native columns.
    plain = ecnlab.Result(r.tables, r.summary, r.scenario, r.seed)
    assert plain.native_tables() is None and plain.table_names == r.table_names


@pytest.mark.parametrize("name", ["web", "small"])
def test_median_response_time_without_pyarrow_equals_pyarrows(name: str) -> None:
    r = ecnlab.run(copy.deepcopy(SCENARIOS[name]), seed=3, progress=False)
    native = median_response_time(r)
    plain = ecnlab.Result(r.tables, r.summary, r.scenario, r.seed)
    arrow = median_response_time(plain)
    assert math.isfinite(native)
    assert native == pytest.approx(arrow, rel=1e-12)


def test_malformed_columns_are_refused(tmp_path: Path) -> None:
    f = str(tmp_path / "t.parquet")
    with pytest.raises(ValueError, match="whole number"):
        _core.write_parquet(f, {"x": ("f64", b"\0" * 7)})
    with pytest.raises(ValueError, match="unknown dtype"):
        _core.write_parquet(f, {"x": ("f32", b"\0" * 8)})
    with pytest.raises(ValueError, match="rows"):
        _core.write_parquet(f, {"x": ("f64", b"\0" * 8), "y": ("bool", b"\1\0")})
    with pytest.raises(ValueError, match="outside the dictionary"):
        _core.write_parquet(f, {"s": ("dict", ["a"], b"\1\0\0\0")})
    with pytest.raises(ValueError, match="no columns"):
        _core.write_parquet(f, {})
    with pytest.raises(OSError):
        _core.write_parquet(str(tmp_path / "missing" / "t.parquet"), {"x": ("f64", b"")})


def test_cli_run_imports_no_pyarrow_and_its_output_is_queryable(tmp_path: Path) -> None:
    """The whole `ecnlab run` command (summary table included) loads none of pyarrow,
    pandas, duckdb, numpy, nor the ns-2 translator or the testbed; `ecnlab verify` and
    `ecnlab query` read what it wrote."""
    out = tmp_path / "run"
    cmd = [
        sys.executable,
        "-X",
        "importtime",
        "-m",
        "ecnlab",
        "run",
        str(ecnlab_example("web-dumbbell.toml")),
        "-o",
        str(out),
        "--set",
        "duration_s=3",
        "--set",
        "warmup_s=1",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "median" in proc.stdout and "written to" in proc.stdout
    modules = {
        line.split("|")[-1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    }
    imported = {m.split(".")[0] for m in modules}
    assert "typer" in imported, "-X importtime listed the imports"
    assert not imported & {"pyarrow", "pandas", "duckdb", "numpy", "matplotlib"}, imported
    # Nor the other commands' machinery: the ns-2 translator and comparison, the testbed.
    other = {"ecnlab.crosscheck", "ecnlab.testbed", "ecnlab.testbed_run", "ecnlab._testbed_bpf"}
    assert not modules & other, sorted(modules & other)
    assert "ecnlab.crosscheck_cli" in modules and "ecnlab.testbed_cli" in modules
    assert invoke("verify", str(out)).exit_code == 0
    q = invoke("query", str(out), "SELECT count(*) AS n, count(DISTINCT link) AS links FROM links")
    assert q.exit_code == 0, q.output
    stored = read_run(out)
    assert str(stored.links.num_rows) in q.output
