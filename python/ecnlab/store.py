"""Writing a run to a folder and reading it back.

A run folder holds one ``<table>.parquet`` per table and a ``manifest.json`` describing the
run (scenario, seed, versions, timings, row counts). The folder is written under a hidden
temporary name beside its destination and renamed into place once complete, so a folder
named like a run and holding a manifest is always a complete run: an interrupted write
leaves at most a hidden ``.<name>.tmp-*`` sibling, never a half-written run.

Nothing is ever deleted unless it is a run folder this module wrote: replacing (``force``)
checks the manifest and the folder's entries first.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import re
import shutil
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Union

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from . import _core
from ._result import Result

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: sweeps are not locked
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "MANIFEST",
    "CorruptRunError",
    "RunExistsError",
    "StoreError",
    "SweepDir",
    "SweepLockedError",
    "check_out_dir",
    "open_results",
    "read_run",
    "write_run",
]

MANIFEST = "manifest.json"
FORMAT = "ecnlab-run"
FORMAT_VERSION = 1

PathLike = Union[str, "os.PathLike[str]"]


class RunExistsError(FileExistsError):
    """The output folder already holds a run (or something that is not ours to replace).

    ``replaceable`` is True when the folder is a run that ``force`` would replace.
    """

    def __init__(self, message: str, *, replaceable: bool = False) -> None:
        super().__init__(message)
        self.replaceable = replaceable


class CorruptRunError(ValueError):
    """A folder is not a complete, readable run."""


def check_out_dir(out_dir: PathLike, *, force: bool = False) -> None:
    """Check that a run can be written to ``out_dir``, without writing anything.

    Use it before a long simulation, so it does not fail at the end.

    Raises:
        RunExistsError: ``out_dir`` holds a run and ``force`` is False, or it exists and is
            not a run folder written by ecnlab (never replaced, even with ``force``).
    """
    _existing(Path(out_dir), force=force)


def write_run(result: Result, out_dir: PathLike, *, force: bool = False) -> Path:
    """Write a run to ``out_dir`` atomically.

    The tables and manifest are written to a temporary sibling folder, which is then renamed
    to ``out_dir``. With ``force``, an existing run is renamed aside, the new one renamed in,
    and the old one deleted. Parent folders are created.

    Returns:
        The path of the run folder.

    Raises:
        RunExistsError: see :func:`check_out_dir`.
    """
    out = Path(out_dir)
    _existing(out, force=force)
    parent = out.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)

    # Not tempfile.mkdtemp: its 0700 mode would stick to the run folder; mkdir honours umask.
    tmp = parent / f".{out.name}.tmp-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    try:
        _write_contents(result, tmp)
        _fsync_dir(tmp)
        state = _existing(out, force=force)  # re-check: the folder may have appeared meanwhile
        if state == "run":
            _replace(tmp, out, parent)
        else:
            # Fails (rather than clobbers) if a non-empty folder appeared since the check.
            os.rename(tmp, out)
        _fsync_dir(parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def read_run(run_dir: PathLike) -> Result:
    """Read a run folder written by :func:`write_run`.

    Raises:
        FileNotFoundError: ``run_dir`` does not exist.
        CorruptRunError: the folder has no manifest (not a run, or an incomplete one), the
            manifest is unreadable, or a table file is missing, unreadable or has a row count
            other than the manifest's.
    """
    path = Path(run_dir)
    if not path.exists():
        raise FileNotFoundError(f"no such run folder: {path}")
    if not path.is_dir():
        raise CorruptRunError(f"{path} is not a folder")
    manifest = _read_manifest(path)
    tables: dict[str, pa.Table] = {}
    for name, entry in manifest["tables"].items():
        file = path / entry["file"]
        if not file.is_file():
            raise CorruptRunError(f"{path}: incomplete run, table file {entry['file']} is missing")
        try:
            table = pq.read_table(file)
        except (OSError, pa.ArrowException) as e:
            raise CorruptRunError(f"{path}: cannot read {entry['file']}: {e}") from None
        if table.num_rows != entry["rows"]:
            raise CorruptRunError(
                f"{path}: {entry['file']} has {table.num_rows} rows, "
                f"the manifest says {entry['rows']}"
            )
        tables[name] = table
    summary = {k: (math.nan if v is None else v) for k, v in manifest["summary"].items()}
    return Result(
        tables=tables, summary=summary, scenario=manifest["scenario"], seed=manifest["seed"]
    )


# --- writing ---------------------------------------------------------------------------


def _write_contents(result: Result, folder: Path) -> None:
    tables: dict[str, dict[str, Any]] = {}
    for name, table in result.tables.items():
        file = f"{name}.parquet"
        pq.write_table(table, folder / file)
        _fsync_file(folder / file)
        tables[name] = {"file": file, "rows": table.num_rows}
    summary = {k: _json_number(v) for k, v in result.summary.items()}
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "ecnlab_version": _core.__version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "run_id": result.run_id,
        "seed": result.seed,
        "sim_s": summary.get("sim_s"),
        "wall_s": summary.get("wall_s"),
        "events": summary.get("events"),
        "tables": tables,
        "summary": summary,
        "scenario": result.scenario,
    }
    # The manifest is written last: its presence marks the folder complete.
    with (folder / MANIFEST).open("w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, allow_nan=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())


def _json_number(value: Any) -> Any:
    # Strict JSON has no NaN/Infinity (e.g. a mean over zero exchanges): store null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _replace(new: Path, out: Path, parent: Path) -> None:
    aside = parent / f".{out.name}.old-{uuid.uuid4().hex[:12]}"
    os.rename(out, aside)
    try:
        os.rename(new, out)
    except BaseException:
        os.rename(aside, out)  # put the old run back
        raise
    try:
        shutil.rmtree(aside)
    except OSError as e:
        # The new run is in place; only the old copy lingers under a hidden name.
        warnings.warn(f"could not delete the replaced run {aside}: {e}", stacklevel=3)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    if os.name != "posix":  # pragma: no cover - directories cannot be fsynced on Windows
        return
    _fsync_file(path)


# --- checking ------------------------------------------------------------------------------


def _existing(out: Path, *, force: bool) -> str:
    """Classify ``out``: "absent", "empty" (an empty folder) or "run" (replaceable).

    Raises RunExistsError for anything we may not write over.
    """
    if not out.exists():
        if out.is_symlink():
            raise RunExistsError(f"{out} is a dangling symbolic link; not writing there")
        return "absent"
    if out.is_symlink() or not out.is_dir():
        raise RunExistsError(f"{out} exists and is not a folder")
    entries = sorted(p.name for p in out.iterdir())
    if not entries:
        return "empty"
    if MANIFEST not in entries:
        raise RunExistsError(
            f"{out} exists, is not empty and is not an ecnlab run; choose another output folder"
        )
    if not force:
        raise RunExistsError(
            f"{out} already holds a run; pass force=True to replace it", replaceable=True
        )
    try:
        manifest = _read_manifest(out)
    except CorruptRunError as e:
        raise RunExistsError(f"{e}; not replacing it") from None
    ours = {MANIFEST} | {t["file"] for t in manifest["tables"].values()}
    foreign = [e for e in entries if e not in ours]
    if foreign:
        raise RunExistsError(
            f"{out} holds files ecnlab did not write ({', '.join(foreign)}); not replacing it"
        )
    return "run"


def _read_manifest(path: Path) -> dict[str, Any]:
    file = path / MANIFEST
    if not file.is_file():
        raise CorruptRunError(
            f"{path} is not a complete ecnlab run (no {MANIFEST}); "
            "it may be an interrupted or foreign folder"
        )
    try:
        raw: Any = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorruptRunError(f"{file} is corrupt: {e}") from None
    problem = _manifest_problem(raw)
    if problem:
        raise CorruptRunError(f"{file} is not an ecnlab run manifest: {problem}")
    manifest: dict[str, Any] = raw
    return manifest


def _manifest_problem(m: Any) -> str | None:
    if not isinstance(m, dict):
        return "not a JSON object"
    if m.get("format") != FORMAT:
        return f"format is {m.get('format')!r}, expected {FORMAT!r}"
    version = m.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        return f"format_version {version!r} is not supported (this ecnlab reads {FORMAT_VERSION})"
    for key, kind in (("seed", int), ("tables", dict), ("summary", dict), ("scenario", dict)):
        if not isinstance(m.get(key), kind):
            return f"{key!r} missing or not a {kind.__name__}"
    for name, entry in m["tables"].items():
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("file"), str)
            and isinstance(entry.get("rows"), int)
        ):
            return f"table entry {name!r} needs a 'file' string and a 'rows' integer"
        if Path(entry["file"]).name != entry["file"] or entry["file"] in ("", ".", ".."):
            return f"table entry {name!r} names a file outside the folder: {entry['file']!r}"
    return None


# --- sweep folders ---------------------------------------------------------------------
#
# DIR/sweep.json          the sweep's axes and its runs' coordinates (run_id, seed, axes)
# DIR/runs/<run_id>/      one run folder each (write_run above)
# DIR/errors/<run_id>.json  the last error of a run that failed (removed once it succeeds)
# DIR/.lock               held while a sweep writes to DIR

SWEEP_FILE = "sweep.json"
SWEEP_FORMAT = "ecnlab-sweep"
_TMP_RUN = re.compile(r"^\.[0-9a-f]{16}\.(tmp|old)-[0-9a-f]{12}$")


class StoreError(ValueError):
    """A sweep folder cannot be used as asked (another sweep, a bad sweep.json...)."""


class SweepLockedError(StoreError):
    """Another process is running a sweep into the same folder."""


class SweepDir:
    """The on-disk layout of a sweep folder. Only :func:`ecnlab.sweep.run_sweep` writes it."""

    def __init__(self, root: PathLike) -> None:
        self.root = Path(root)
        self.runs = self.root / "runs"
        self.errors = self.root / "errors"

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the folder's lock; clean temporaries an interrupted sweep left behind."""
        self.runs.mkdir(parents=True, exist_ok=True)
        with (self.root / ".lock").open("a") as handle:
            if fcntl is not None:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise SweepLockedError(
                        f"another sweep is writing to {self.root}; wait for it to finish"
                    ) from None
            for entry in self.runs.iterdir():
                # Ours (by name) and nobody else's (we hold the lock): a killed sweep's
                # half-written run, never a complete one.
                if _TMP_RUN.match(entry.name) and entry.is_dir():
                    shutil.rmtree(entry, ignore_errors=True)
            yield

    def record_sweep(self, description: dict[str, Any], runs: list[dict[str, Any]]) -> None:
        """Write ``sweep.json``, merging the runs of an earlier sweep into the same folder.

        Raises:
            StoreError: the folder holds a sweep with other axes.
        """
        previous = self.read_sweep()
        merged = runs
        if previous is not None:
            old_axes = [a["name"] for a in previous["axes"]]
            new_axes = [a["name"] for a in description["axes"]]
            if old_axes != new_axes:
                raise StoreError(
                    f"{self.root} holds a sweep with axes ({', '.join(old_axes) or 'none'}), "
                    f"not ({', '.join(new_axes) or 'none'}); choose another output folder"
                )
            keys = {_entry_key(r) for r in runs}
            merged = [r for r in previous["runs"] if _entry_key(r) not in keys] + runs
        document = {
            "format": SWEEP_FORMAT,
            "format_version": FORMAT_VERSION,
            "ecnlab_version": _core.__version__,
            **description,
            "runs": merged,
        }
        _write_json_atomic(self.root / SWEEP_FILE, document)

    def read_sweep(self) -> dict[str, Any] | None:
        """The folder's ``sweep.json``, or None if it has none.

        Raises:
            CorruptRunError: the file is unreadable or not a sweep description.
        """
        file = self.root / SWEEP_FILE
        if not file.is_file():
            return None
        try:
            document: Any = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise CorruptRunError(f"{file} is corrupt: {e}") from None
        if not (
            isinstance(document, dict)
            and document.get("format") == SWEEP_FORMAT
            and isinstance(document.get("axes"), list)
            and isinstance(document.get("runs"), list)
        ):
            raise CorruptRunError(f"{file} is not an ecnlab sweep description")
        return document

    def is_stored(self, run_id: str) -> bool:
        return (self.runs / run_id / MANIFEST).is_file()

    def write_run(self, result: Result) -> Path:
        """Store a run under its id; clear an error recorded by an earlier attempt."""
        written = write_run(result, self.runs / result.run_id)
        (self.errors / f"{result.run_id}.json").unlink(missing_ok=True)
        return written

    def write_error(self, record: dict[str, Any], error: dict[str, Any]) -> Path:
        """Record why a run failed, in ``errors/<run_id>.json``."""
        self.errors.mkdir(parents=True, exist_ok=True)
        file = self.errors / f"{record['run_id']}.json"
        created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        _write_json_atomic(file, {**record, **error, "time": created})
        return file

    def read_errors(self) -> dict[str, dict[str, Any]]:
        """Run id to recorded error, for the runs that failed and are not stored since."""
        found: dict[str, dict[str, Any]] = {}
        if self.errors.is_dir():
            for file in sorted(self.errors.glob("*.json")):
                if self.is_stored(file.stem):
                    continue
                try:
                    found[file.stem] = json.loads(file.read_text(encoding="utf-8"))
                except (OSError, ValueError) as e:
                    found[file.stem] = {"message": f"unreadable error record {file}: {e}"}
        return found

    def stored_runs(self) -> list[Path]:
        """The complete run folders (those with a manifest), sorted by id."""
        if not self.runs.is_dir():
            return []
        # Hidden names are write_run's temporaries, which hold a manifest just before the
        # rename that completes them.
        return sorted(
            p
            for p in self.runs.iterdir()
            if not p.name.startswith(".") and (p / MANIFEST).is_file()
        )


def _entry_key(record: dict[str, Any]) -> str:
    return json.dumps(
        [record["run_id"], record.get("reference", False), record.get("axes")], sort_keys=True
    )


def _write_json_atomic(file: Path, document: Any) -> None:
    tmp = file.with_name(f".{file.name}.tmp-{uuid.uuid4().hex[:12]}")
    try:
        with tmp.open("w", encoding="utf-8") as f:
            json.dump(document, f, indent=2, allow_nan=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, file)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# --- DuckDB views over stored runs ----------------------------------------------------


def open_results(path: PathLike, *, check: bool = True) -> duckdb.DuckDBPyConnection:
    """Open a sweep folder (or one run folder) as an in-memory DuckDB database.

    Views:
        ``runs``: one row per run of the sweep: ``run_id``, ``seed``, ``reference``,
        ``status`` (``done``, ``failed``, ``pending``), ``error``, one column per axis
        holding its value (tables as JSON text) and ``<axis>_label``,
        ``bottleneck_rate_bps`` and ``duration_s`` from the scenario, then every summary
        value of the run (``utilization_down``, ``wall_s``...).

        ``axes``: the sweep's axes: ``axis``, ``axis_index``, ``path``, ``position`` (of the
        value), ``label``, ``value`` (JSON text).

        ``sweep``: one row: ``name``, ``reference_label``, ``definition`` (the sweep file as
        JSON text).

        One view per table (``exchanges``, ``flows``, ``links``...): the rows of every stored
        run, read with ``union_by_name`` (a column missing from older runs reads as NULL),
        plus ``run_id``, ``seed``, ``reference`` and the axis columns. Where an axis has the
        name of a column of the table, the table's column wins; join ``runs`` to get the axis.

    Args:
        path: a sweep folder (``DIR`` of ``ecnlab sweep``) or one run folder.
        check: read every Parquet footer first and compare row counts with the manifest,
            so a damaged file is reported by name now rather than by a query later.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        CorruptRunError: a manifest or Parquet file is damaged; the message names it.
    """
    root = Path(path)
    if not root.is_dir():
        raise FileNotFoundError(f"no such results folder: {root}")
    single = (root / MANIFEST).is_file()
    sweep_dir = SweepDir(root)
    stored = [root] if single else sweep_dir.stored_runs()
    description = None if single else sweep_dir.read_sweep()
    axes = [a["name"] for a in description["axes"]] if description else []

    manifests = {}
    files: dict[str, list[tuple[str, str]]] = {}  # table -> [(file, run_id)]
    for run_dir in stored:
        manifest = _read_manifest(run_dir)
        rid = manifest.get("run_id") or run_id_of(manifest)
        manifests[rid] = manifest
        for table, entry in manifest["tables"].items():
            file = run_dir / entry["file"]
            if check:
                _check_parquet(file, entry["rows"])
            files.setdefault(table, []).append((str(file.absolute()), rid))

    con = duckdb.connect()
    runs = _runs_table(description, manifests, sweep_dir.read_errors(), axes)
    con.register("_ecnlab_runs", runs)
    con.execute("CREATE VIEW runs AS SELECT * FROM _ecnlab_runs")
    con.register("_ecnlab_axes", _axes_table(description))
    con.execute("CREATE VIEW axes AS SELECT * FROM _ecnlab_axes")
    sweep_row = {
        "name": [description.get("name") if description else root.name],
        "reference_label": [description.get("reference_label") if description else None],
        "definition": [json.dumps(description.get("definition")) if description else None],
    }
    con.register("_ecnlab_sweep", pa.table(sweep_row))
    con.execute("CREATE VIEW sweep AS SELECT * FROM _ecnlab_sweep")
    files_table = pa.table(
        {
            "_file": [f for entries in files.values() for f, _ in entries],
            "_run_id": [r for entries in files.values() for _, r in entries],
        }
    )
    con.register("_ecnlab_files", files_table)
    keys = ["run_id", "seed", "reference"] + [c for a in axes for c in (a, f"{a}_label")]
    for table, entries in files.items():
        listing = "[" + ", ".join(_sql_string(f) for f, _ in entries) + "]"
        source = f"read_parquet({listing}, union_by_name = true, filename = '_file')"
        try:
            columns = [row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
        except duckdb.Error as e:
            raise CorruptRunError(f"cannot read the {table} tables of {root}: {e}") from None
        extra = [k for k in keys if k not in columns]
        selected = ", ".join(["t.* EXCLUDE (_file)"] + [f'r."{k}"' for k in extra])
        con.execute(
            f'CREATE VIEW "{table}" AS SELECT {selected} FROM {source} t '
            "JOIN _ecnlab_files f ON f._file = t._file "
            "JOIN _ecnlab_runs r ON r.run_id = f._run_id"
        )
    return con


def run_id_of(manifest: dict[str, Any]) -> str:
    """The run id of a manifest (recomputed for manifests that lack it)."""
    from ._result import run_id

    return run_id(manifest["scenario"], manifest["seed"])


def _check_parquet(file: Path, rows: int) -> None:
    if not file.is_file():
        raise CorruptRunError(f"{file}: table file is missing (the run folder is incomplete)")
    try:
        found = pq.read_metadata(file).num_rows
    except (OSError, pa.ArrowException) as e:
        raise CorruptRunError(
            f"{file}: not a readable Parquet file ({e}); delete its run folder "
            "and rerun the sweep to recompute it"
        ) from None
    if found != rows:
        raise CorruptRunError(f"{file}: has {found} rows, its manifest says {rows}")


def _runs_table(
    description: dict[str, Any] | None,
    manifests: dict[str, dict[str, Any]],
    errors: dict[str, dict[str, Any]],
    axes: list[str],
) -> pa.Table:
    entries = list(description["runs"]) if description else []
    listed = {e["run_id"] for e in entries}
    # Runs stored here but not (or no longer) in sweep.json still show, without axes.
    entries += [
        {"run_id": rid, "seed": m["seed"], "reference": False, "axes": {}, "labels": {}}
        for rid, m in manifests.items()
        if rid not in listed
    ]
    summary_keys: list[str] = []
    for m in manifests.values():
        summary_keys += [k for k in m["summary"] if k not in summary_keys]
    reserved = {"run_id", "seed", "reference", "status", "error"}
    reserved |= {"bottleneck_rate_bps", "duration_s"} | {c for a in axes for c in (a, f"{a}_label")}
    summary_keys = [k for k in summary_keys if k not in reserved]

    columns: dict[str, list[Any]] = {
        "run_id": [e["run_id"] for e in entries],
        "seed": [e["seed"] for e in entries],
        "reference": [bool(e.get("reference", False)) for e in entries],
        "status": [
            "done" if e["run_id"] in manifests else "failed" if e["run_id"] in errors else "pending"
            for e in entries
        ],
        "error": [errors.get(e["run_id"], {}).get("message") for e in entries],
    }
    for axis in axes:
        columns[axis] = _axis_column([e["axes"].get(axis) for e in entries])
        columns[f"{axis}_label"] = [e["labels"].get(axis) for e in entries]
    columns["bottleneck_rate_bps"] = [
        _scenario_value(manifests.get(e["run_id"]), ("topology", "bottleneck", "rate_bps"))
        for e in entries
    ]
    columns["duration_s"] = [
        _scenario_value(manifests.get(e["run_id"]), ("duration_s",)) for e in entries
    ]
    for key in summary_keys:
        values = [manifests.get(e["run_id"], {}).get("summary", {}).get(key) for e in entries]
        columns[key] = _axis_column(values)
    arrays = {}
    for name, values in columns.items():
        try:
            arrays[name] = pa.array(values)
        except (pa.ArrowException, TypeError, ValueError):
            arrays[name] = pa.array([None if v is None else str(v) for v in values])
    if not entries:
        schema = pa.schema([("run_id", pa.string()), ("seed", pa.uint64())])
        return pa.table({"run_id": [], "seed": []}, schema=schema)
    return pa.table(arrays)


def _scenario_value(manifest: dict[str, Any] | None, keys: tuple[str, ...]) -> Any:
    value: Any = manifest["scenario"] if manifest else None
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _axes_table(description: dict[str, Any] | None) -> pa.Table:
    rows = [
        {
            "axis": a["name"],
            "axis_index": k,
            "path": a.get("path"),
            "position": i,
            "label": label,
            "value": json.dumps(value, sort_keys=True),
        }
        for k, a in enumerate(description["axes"] if description else [])
        for i, (value, label) in enumerate(zip(a["values"], a["labels"]))
    ]
    schema = pa.schema(
        [
            ("axis", pa.string()),
            ("axis_index", pa.int64()),
            ("path", pa.string()),
            ("position", pa.int64()),
            ("label", pa.string()),
            ("value", pa.string()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)


def _axis_column(values: list[Any]) -> list[Any]:
    """Scalars as they are; tables and arrays as JSON text; mixed kinds as text."""
    if all(v is None or isinstance(v, (int, float)) for v in values):
        return values
    if all(v is None or isinstance(v, str) for v in values):
        return values
    return [
        None if v is None else v if isinstance(v, str) else json.dumps(v, sort_keys=True)
        for v in values
    ]


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
