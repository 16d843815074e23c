"""write_run / read_run: atomic folders, refusal to clobber, corruption reports."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ecnlab
import pyarrow.parquet as pq
import pytest
from conftest import assert_tables_identical
from ecnlab import store
from ecnlab.store import CorruptRunError, RunExistsError, read_run, write_run


def _siblings(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name)


def test_write_and_read_back(small_result: ecnlab.Result, tmp_path: Path) -> None:
    out = tmp_path / "nested" / "run"
    assert write_run(small_result, out) == out
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["manifest.json"] + [f"{t}.parquet" for t in ecnlab.TABLES]
    )
    assert _siblings(out) == [], "no temporary folder left behind"

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == "ecnlab-run"
    assert manifest["seed"] == 1
    assert manifest["run_id"] == small_result.run_id
    assert manifest["ecnlab_version"] == ecnlab.__version__
    assert manifest["scenario"] == small_result.scenario
    assert manifest["events"] == small_result.summary["events"]
    assert manifest["wall_s"] == small_result.summary["wall_s"]
    assert manifest["sim_s"] == small_result.summary["sim_s"]
    assert manifest["created"].endswith("+00:00")
    for name, table in small_result.tables.items():
        data = (out / f"{name}.parquet").read_bytes()
        assert manifest["tables"][name] == {
            "file": f"{name}.parquet",
            "rows": table.num_rows,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }

    back = read_run(out)
    assert back.seed == 1
    assert back.scenario == small_result.scenario
    assert back.summary.keys() == small_result.summary.keys()
    assert_tables_identical(small_result.tables, back.tables)


def test_read_some_tables_of_a_run(small_result: ecnlab.Result, tmp_path: Path) -> None:
    out = write_run(small_result, tmp_path / "run")
    some = read_run(out, tables=("links", "flows"))
    assert sorted(some.tables) == ["flows", "links"]
    assert_tables_identical({"links": small_result.tables["links"]}, {"links": some.links})
    with pytest.raises(CorruptRunError, match="no nonsense table"):
        read_run(out, tables=("links", "nonsense"))
    cols = store.read_table(out, "links", ["link", "drops"])
    assert cols.column_names == ["link", "drops"]
    assert cols.to_pydict() == small_result.tables["links"].select(["link", "drops"]).to_pydict()
    assert store.read_table(out, "flows").num_rows == small_result.tables["flows"].num_rows
    with pytest.raises(CorruptRunError, match="no nonsense table"):
        store.read_table(out, "nonsense")
    with pytest.raises(CorruptRunError, match="cannot read links.parquet"):
        store.read_table(out, "links", ["no_such_column"])


def test_refuses_existing_run_and_keeps_it(small_result: ecnlab.Result, tmp_path: Path) -> None:
    out = tmp_path / "run"
    write_run(small_result, out)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()}
    with pytest.raises(RunExistsError, match="already holds a run"):
        write_run(small_result, out)
    with pytest.raises(RunExistsError):
        store.check_out_dir(out)
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in out.iterdir()}
    assert after == before
    assert _siblings(out) == []


def test_force_replaces_a_run(small_result: ecnlab.Result, tmp_path: Path) -> None:
    out = tmp_path / "run"
    write_run(small_result, out)
    (out / "flows.parquet").write_bytes(b"old")  # a marker that must disappear
    other = ecnlab.Result(
        tables=small_result.tables,
        summary=small_result.summary,
        scenario=small_result.scenario,
        seed=7,
    )
    write_run(other, out, force=True)
    assert read_run(out).seed == 7
    assert (out / "flows.parquet").read_bytes() != b"old"
    assert _siblings(out) == [], "the old run was deleted, no temporary left"


def test_empty_folder_is_fine(small_result: ecnlab.Result, tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    write_run(small_result, out)
    assert read_run(out).seed == 1


def test_never_replaces_a_foreign_folder(small_result: ecnlab.Result, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    for force in (False, True):
        with pytest.raises(RunExistsError, match="not an ecnlab run"):
            write_run(small_result, out, force=force)
    assert (out / "thesis.tex").read_text() == "precious"

    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(RunExistsError, match="not a folder"):
        write_run(small_result, afile, force=True)
    assert afile.read_text() == "x"


def test_force_keeps_a_run_with_foreign_files(small_result: ecnlab.Result, tmp_path: Path) -> None:
    out = tmp_path / "run"
    write_run(small_result, out)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(RunExistsError, match="notes.txt"):
        write_run(small_result, out, force=True)
    assert (out / "notes.txt").read_text() == "mine"


def test_force_keeps_a_foreign_manifest(small_result: ecnlab.Result, tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "manifest.json").write_text('{"name": "somebody else"}')
    with pytest.raises(RunExistsError, match="not replacing"):
        write_run(small_result, out, force=True)
    assert (out / "manifest.json").read_text() == '{"name": "somebody else"}'


@pytest.mark.parametrize("writer", ["native", "pyarrow"])
def test_interrupted_write_leaves_nothing(
    small_result: ecnlab.Result, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: str
) -> None:
    # Fault injection: Ctrl-C while the third table is being written, by the core's writer
    # (a run's own tables) or pyarrow's (tables made in Python).
    if writer == "pyarrow":
        small_result = ecnlab.Result(
            small_result.tables, small_result.summary, small_result.scenario, small_result.seed
        )
        assert small_result.native_tables() is None
    real_write = store._write_table
    calls: list[Path] = []

    def write_table(result: ecnlab.Result, native: Any, name: str, where: Path) -> int:
        calls.append(where)
        assert (native is None) == (writer == "pyarrow")
        rows = real_write(result, native, name, where)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the file is there, the run is not
        return rows

    monkeypatch.setattr(store, "_write_table", write_table)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        write_run(small_result, out)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []

    # The same while replacing: the old run stays intact.
    monkeypatch.setattr(store, "_write_table", real_write)
    write_run(small_result, out)
    manifest = (out / "manifest.json").read_bytes()
    calls.clear()
    monkeypatch.setattr(store, "_write_table", write_table)
    with pytest.raises(KeyboardInterrupt):
        write_run(small_result, out, force=True)
    assert (out / "manifest.json").read_bytes() == manifest
    assert [p.name for p in tmp_path.iterdir()] == ["run"]
    read_run(out)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: (d / "manifest.json").unlink(), "no manifest.json"),
        (lambda d: (d / "manifest.json").write_text("{ trunc"), "manifest.json is corrupt"),
        (lambda d: (d / "manifest.json").write_text("[]"), "not a JSON object"),
        (lambda d: (d / "links.parquet").unlink(), "links.parquet: missing"),
        (
            lambda d: (d / "flows.parquet").write_bytes(b"PAR1garbage"),
            "flows.parquet: 11 bytes, the manifest says",
        ),
    ],
)
def test_read_reports_damage(
    small_result: ecnlab.Result, tmp_path: Path, damage: Callable[[Path], object], message: str
) -> None:
    out = tmp_path / "run"
    write_run(small_result, out)
    damage(out)
    with pytest.raises(CorruptRunError, match=message):
        read_run(out)


def test_read_reports_row_count_mismatch(small_result: ecnlab.Result, tmp_path: Path) -> None:
    out = tmp_path / "run"
    write_run(small_result, out)
    pq.write_table(small_result.flows.slice(0, 1), out / "flows.parquet")
    with pytest.raises(CorruptRunError, match="flows.parquet: .* bytes, the manifest says"):
        read_run(out)
    # A run written before format 2 (no hashes) is read in full and its rows counted.
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["format_version"] = 1
    for entry in manifest["tables"].values():
        del entry["bytes"], entry["sha256"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CorruptRunError, match="flows.parquet: 1 rows, the manifest says"):
        read_run(out)


def test_read_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such run folder"):
        read_run(tmp_path / "nothing")


def test_manifest_is_strict_json(small_result: ecnlab.Result, tmp_path: Path) -> None:
    # NaN is not JSON: a summary NaN is stored as null and read back as NaN.
    summary = dict(small_result.summary, mean_response_time_s=float("nan"))
    result = ecnlab.Result(
        tables=small_result.tables, summary=summary, scenario=small_result.scenario, seed=1
    )
    out = tmp_path / "run"
    write_run(result, out)
    text = (out / "manifest.json").read_text()
    assert "NaN" not in text
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert math.isnan(read_run(out).summary["mean_response_time_s"])


def test_not_writable_parent(small_result: ecnlab.Result, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores permissions")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(PermissionError):
            write_run(small_result, ro / "run")
    finally:
        ro.chmod(0o700)
