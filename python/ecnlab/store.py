"""Writing a run to a folder and reading it back.

A run folder holds one ``<table>.parquet`` per table and a ``manifest.json`` describing the
run (scenario, seed, versions, timings, and each table's row count, size and SHA-256). The
folder is written under a hidden temporary name beside its destination and renamed into place
once complete, so a folder named like a run and holding a manifest is always a complete run:
an interrupted write leaves at most a hidden ``.<name>.tmp-*`` sibling, never a half-written
run, and the next write beside it removes that sibling once no process holds it (the writer
holds a lock on it while it writes). A complete run can still be damaged later (a disk error,
a truncated copy): :func:`run_problems` checks every table against the manifest, and resuming
a sweep, opening results and :func:`verify` all use it.

Nothing is ever deleted unless it is a run folder this module wrote: replacing (``force``)
checks the manifest and the folder's entries first.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import math
import os
import re
import shutil
import uuid
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from . import _core
from ._result import Result, run_id

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

# pyarrow is imported where a function needs it, not here: storing a run of ecnlab.run
# writes its tables natively (_core.write_parquet), so `ecnlab run` never loads pyarrow.

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
    "Verification",
    "check_out_dir",
    "open_results",
    "read_run",
    "read_table",
    "run_problems",
    "verify",
    "write_parquet_table",
    "write_run",
]

MANIFEST = "manifest.json"
FORMAT = "ecnlab-run"
# 2: each table's entry also records its size ("bytes") and content hash ("sha256").
FORMAT_VERSION = 2

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


def write_run(
    result: Result,
    out_dir: PathLike,
    *,
    force: bool = False,
    mode: str | None = None,
    mode_options: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Path:
    """Write a run to ``out_dir`` atomically.

    The tables and manifest are written to a temporary sibling folder, which is then renamed
    to ``out_dir``. With ``force``, an existing run is renamed aside, the new one renamed in,
    and the old one deleted. Parent folders are created. ``mode`` marks a run that is not a
    simulation (``"testbed"``): the manifest's ``mode`` field, part of its run id, as are
    ``mode_options`` (the manifest's ``mode_options``: a testbed run's choices other than the
    default, ``{"database": "mariadb"}``, that make it another run of the scenario). ``extra``
    adds fields to the manifest (a testbed run's settings); it cannot replace one.

    Returns:
        The path of the run folder.

    Raises:
        RunExistsError: see :func:`check_out_dir`.
    """
    out = Path(out_dir)
    _existing(out, force=force)
    parent = out.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(parent, out.name)

    # Not tempfile.mkdtemp: its 0700 mode would stick to the run folder; mkdir honours umask.
    tmp = parent / f".{out.name}.tmp-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    try:
        with _held(tmp):
            # A simulation's call keeps its two arguments (tests wrap this function).
            options = {} if mode is None and not extra else {"mode": mode, "extra": extra or {}}
            if mode_options:
                options["mode_options"] = mode_options
            _write_contents(result, tmp, **options)
            _fsync_dir(tmp)
            state = _existing(out, force=force)  # re-check: the folder may have appeared
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


def read_run(run_dir: PathLike, tables: Collection[str] | None = None) -> Result:
    """Read a run folder written by :func:`write_run`, every table or only ``tables`` (the
    run is verified whole either way).

    Raises:
        FileNotFoundError: ``run_dir`` does not exist.
        CorruptRunError: the folder has no manifest (not a run, or an incomplete one), the
            manifest is unreadable, or a table file is missing, unreadable or has a row count
            other than the manifest's; or a table of ``tables`` is not in the run.
    """
    path = Path(run_dir)
    if not path.exists():
        raise FileNotFoundError(f"no such run folder: {path}")
    if not path.is_dir():
        raise CorruptRunError(f"{path} is not a folder")
    problems = run_problems(path)
    if problems:
        raise CorruptRunError(f"{path}: damaged run: {'; '.join(problems)}")
    manifest = _read_manifest(path)
    stored = manifest["tables"]
    missing = sorted(set(tables or ()) - set(stored))
    if missing:
        raise CorruptRunError(f"{path}: the run has no {', '.join(missing)} table")
    read = {
        name: _read_table_file(path, entry)
        for name, entry in stored.items()
        if tables is None or name in tables
    }
    summary = {k: (math.nan if v is None else v) for k, v in manifest["summary"].items()}
    return Result(
        tables=read, summary=summary, scenario=manifest["scenario"], seed=manifest["seed"]
    )


def read_table(
    run_dir: PathLike, table: str, columns: Sequence[str] | None = None
) -> pa.Table:
    """One table of a run folder (only ``columns``, default all), without verifying the run
    first (:func:`read_run` and :func:`open_results` verify; call this on runs they checked).

    Raises:
        CorruptRunError: the manifest is unreadable, has no table ``table``, or its file cannot
            be read (a missing column among them).
    """
    path = Path(run_dir)
    entry = _read_manifest(path)["tables"].get(table)
    if entry is None:
        raise CorruptRunError(f"{path}: the run has no {table} table")
    return _read_table_file(path, entry, columns)


def _read_table_file(
    run_dir: Path, entry: dict[str, Any], columns: Sequence[str] | None = None
) -> pa.Table:
    """The Parquet file of a manifest's table ``entry`` (CorruptRunError if unreadable)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    selected = None if columns is None else list(columns)
    try:
        return pq.read_table(run_dir / entry["file"], columns=selected)
    except (OSError, pa.ArrowException) as e:
        raise CorruptRunError(f"{run_dir}: cannot read {entry['file']}: {e}") from None


# --- writing ---------------------------------------------------------------------------


def _write_contents(
    result: Result,
    folder: Path,
    *,
    mode: str | None = None,
    mode_options: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> None:
    tables: dict[str, dict[str, Any]] = {}
    # A run's own tables are written by the core from its columns (no pyarrow); tables made
    # or changed in Python by pyarrow. Both read back alike (tests/test_native_parquet.py).
    native = result.native_tables()
    for name in result.table_names:
        file = f"{name}.parquet"
        rows = _write_table(result, None if native is None else native[name], name, folder / file)
        _fsync_file(folder / file)
        size, digest = _digest(folder / file)
        tables[name] = {"file": file, "rows": rows, "bytes": size, "sha256": digest}
    summary = {k: _json_number(v) for k, v in result.summary.items()}
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "ecnlab_version": _core.__version__,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "run_id": run_id(result.scenario, result.seed, mode, mode_options),
        "seed": result.seed,
        "sim_s": summary.get("sim_s"),
        "wall_s": summary.get("wall_s"),
        "events": summary.get("events"),
        "tables": tables,
        "summary": summary,
        "scenario": result.scenario,
    }
    if mode is not None:
        manifest["mode"] = mode
    if mode_options:
        manifest["mode_options"] = dict(mode_options)
    clash = set(extra or {}) & set(manifest)
    if clash:
        raise ValueError(f"extra manifest fields {sorted(clash)} would replace the run's own")
    manifest.update(extra or {})
    # The manifest is written last: its presence marks the folder complete.
    with (folder / MANIFEST).open("w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, allow_nan=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())


def _write_table(
    result: Result, native: Mapping[str, Any] | None, name: str, path: Path
) -> int:
    """Write table ``name`` to ``path``: from the core's columns (``native``) by the core,
    else the pyarrow table by pyarrow. Returns the row count."""
    if native is not None:
        rows, _ = _core.write_parquet(str(path), dict(native))
        return int(rows)
    table = result.tables[name]
    write_parquet_table(table, path)
    return int(table.num_rows)


def write_parquet_table(table: pa.Table, path: PathLike) -> None:
    """Write a pyarrow table as the core writes a run's tables (``metrics/parquet.rs``):
    Zstandard level 1 pages, DOUBLE columns BYTE_STREAM_SPLIT-encoded, dictionaries for string
    columns only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fields = list(table.schema)
    pq.write_table(
        table,
        path,
        compression="zstd",
        compression_level=1,
        use_dictionary=[f.name for f in fields if pa.types.is_string(f.type)],
        use_byte_stream_split=[f.name for f in fields if pa.types.is_float64(f.type)],
    )


def _json_number(value: Any) -> Any:
    # Strict JSON has no NaN/Infinity (e.g. a mean over zero exchanges): store null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _replace(new: Path, out: Path, parent: Path) -> None:
    aside = parent / f".{out.name}.old-{uuid.uuid4().hex[:12]}"
    os.rename(out, aside)
    with _held(aside):
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


def _digest(path: Path) -> tuple[int, str]:
    """Size and SHA-256 (hex) of a file."""
    h = hashlib.sha256()
    size = 0
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    return size, h.hexdigest()


@contextlib.contextmanager
def _held(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` (its directory inode; released when the process
    dies, even by SIGKILL), so :func:`_remove_abandoned` leaves it alone while we write."""
    if fcntl is None:  # pragma: no cover - Windows: no locks, nothing is removed either
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _abandoned(folder: Path) -> bool:
    """True if no process holds ``folder``'s lock (its writer died)."""
    if fcntl is None:  # pragma: no cover
        return False
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def _remove_abandoned(parent: Path, name: str) -> list[Path]:
    """Remove the temporaries a killed write of run ``name`` left in ``parent``: its
    ``.name.tmp-*`` folders, and ``.name.old-*`` copies of a replaced run once the new run is
    in place; only those no live process holds. Returns what was removed."""
    removed = []
    complete = (parent / name / MANIFEST).is_file()
    for entry in _temporaries(parent, name):
        if (".old-" in entry.name and not complete) or not _abandoned(entry):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def _temporaries(parent: Path, name: str | None = None) -> list[Path]:
    """The hidden ``.NAME.tmp-*`` / ``.NAME.old-*`` folders of :func:`write_run` in
    ``parent`` (of run ``name``, or of any run)."""
    pattern = re.compile(rf"^\.{re.escape(name) if name else '.+'}\.(tmp|old)-[0-9a-f]{{12}}$")
    try:
        return sorted(p for p in parent.iterdir() if pattern.match(p.name) and p.is_dir())
    except OSError:
        return []


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
        if version >= 2 and not (
            isinstance(entry.get("bytes"), int)
            and isinstance(entry.get("sha256"), str)
            and re.fullmatch("[0-9a-f]{64}", entry["sha256"])
        ):
            return f"table entry {name!r} needs a 'bytes' integer and a 'sha256' hash"
    return None


# --- verifying -----------------------------------------------------------------------------


def run_problems(run_dir: PathLike, *, run_id: str | None = None) -> list[str]:
    """Everything wrong with a stored run, as messages (empty: the run is intact).

    Checks that the manifest is readable and consistent (its run id is the hash of its
    scenario and seed, and ``run_id`` when given, e.g. the folder name in a sweep), and that
    every table file is there with the size and SHA-256 the manifest records. Runs written
    before format 2 have no hashes: their Parquet files are read in full and their row counts
    compared instead.
    """
    path = Path(run_dir)
    try:
        manifest = _read_manifest(path)
    except CorruptRunError as e:
        return [str(e)]
    problems = []
    recorded = manifest.get("run_id")
    try:
        actual = run_id_of(manifest)
    except (TypeError, ValueError) as e:
        return [f"{MANIFEST}: scenario or seed unreadable ({e})"]
    if recorded is not None and recorded != actual:
        problems.append(f"{MANIFEST}: its scenario and seed do not match its run id {recorded}")
    if run_id is not None and actual != run_id:
        problems.append(f"{MANIFEST}: holds run {actual}, not {run_id}")
    for entry in manifest["tables"].values():
        file = path / entry["file"]
        if not file.is_file():
            problems.append(f"{entry['file']}: missing")
            continue
        if "sha256" not in entry:
            problems += _legacy_table_problems(file, entry["rows"])
            continue
        try:
            size, digest = _digest(file)
        except OSError as e:
            problems.append(f"{entry['file']}: unreadable ({e.strerror or e})")
            continue
        if size != entry["bytes"]:
            problems.append(f"{entry['file']}: {size} bytes, the manifest says {entry['bytes']}")
        elif digest != entry["sha256"]:
            problems.append(f"{entry['file']}: content differs from the manifest's SHA-256")
    return problems


def _legacy_table_problems(file: Path, rows: int) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        found = pq.read_table(file).num_rows
    except (OSError, pa.ArrowException) as e:
        return [f"{file.name}: not a readable Parquet file ({' '.join(str(e).split())})"]
    if found != rows:
        return [f"{file.name}: {found} rows, the manifest says {rows}"]
    return []


@dataclass
class Verification:
    """What :func:`verify` found in a results folder."""

    root: Path
    checked: int = 0
    damaged: dict[Path, list[str]] = field(default_factory=dict)
    legacy: list[Path] = field(default_factory=list)
    """Runs written before format 2 (no hashes; checked by reading them in full)."""
    leftovers: list[Path] = field(default_factory=list)
    """Temporary folders of interrupted writes."""

    @property
    def ok(self) -> bool:
        return not self.damaged

    def summary(self) -> str:
        """One line: how many runs were checked and which are damaged."""
        if self.ok:
            return f"{self.root}: {self.checked} runs verified, none damaged"
        first = next(iter(self.damaged.items()))
        return (
            f"{self.root}: {len(self.damaged)} of {self.checked} runs damaged "
            f"(first: {first[0].name}: {first[1][0]}); `ecnlab verify {self.root}` lists them, "
            "and running the sweep again recomputes them"
        )


def verify(path: PathLike) -> Verification:
    """Check every run of a sweep folder (or one run folder) against its manifest.

    Raises:
        FileNotFoundError: ``path`` is not a results folder (see :func:`results_kind`).
    """
    root = Path(path)
    kind = results_kind(root)
    report = Verification(root=root)
    if kind == "run":
        runs, parents = [(root, None)], [root.absolute().parent]
    else:
        sweep_dir = SweepDir(root)
        runs = [(p, p.name) for p in sweep_dir.stored_runs()]
        parents = [sweep_dir.runs]
    for run_dir, rid in runs:
        report.checked += 1
        problems = run_problems(run_dir, run_id=rid)
        if problems:
            report.damaged[run_dir] = problems
        elif _format_version(run_dir) < 2:
            report.legacy.append(run_dir)
    for parent in parents:
        report.leftovers += _temporaries(parent, root.name if kind == "run" else None)
    return report


def _format_version(run_dir: Path) -> int:
    try:
        return int(_read_manifest(run_dir)["format_version"])
    except (CorruptRunError, ValueError, TypeError):
        return 0


def results_kind(root: Path) -> str:
    """``"run"`` (a run folder), ``"sweep"`` (a sweep folder: ``sweep.json`` or ``runs/``).

    Raises:
        FileNotFoundError: ``root`` does not exist or is neither.
    """
    if not root.is_dir():
        raise FileNotFoundError(f"no such results folder: {root}")
    if (root / MANIFEST).is_file():
        return "run"
    if (root / SWEEP_FILE).is_file() or (root / "runs").is_dir():
        return "sweep"
    raise FileNotFoundError(
        f"{root} is not a results folder: it has no {MANIFEST} (a run, from ecnlab run) "
        f"and no {SWEEP_FILE} or runs/ (a sweep, from ecnlab sweep)"
    )


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
                # Ours (by name) and no live writer's (a worker of a killed sweep may still
                # be writing): a half-written run, never a complete one.
                if _TMP_RUN.match(entry.name) and entry.is_dir() and _abandoned(entry):
                    shutil.rmtree(entry, ignore_errors=True)
            yield

    def record_sweep(
        self,
        description: dict[str, Any],
        runs: list[dict[str, Any]],
        *,
        new_definition: bool = False,
        keep: Collection[str] = (),
    ) -> list[str]:
        """Write ``sweep.json``, merging the runs of an earlier sweep into the same folder.

        The runs of both must agree: a run with the same axis values and seed must have the
        same id (the same scenario), or the folder would hold two different runs for one
        point of the sweep and a GROUP BY over the axes would average them. Seeds may be
        added. With ``new_definition`` the folder's sweep is replaced instead: the earlier
        runs this sweep does not have are moved to ``superseded/`` and their ids returned,
        except those whose ids are in ``keep`` (runs of the new definition that this sweep
        does not list, such as a reproduction's later seeds), which stay listed.

        Raises:
            StoreError: the folder holds a sweep with other axes, or whose runs differ from
                this one's at the same axis values and seed (its ``[set]``, base scenario,
                derived settings or ecnlab's defaults changed).
        """
        previous = self.read_sweep()
        merged = runs
        dropped: list[str] = []
        if previous is not None and new_definition:
            wanted = {r["run_id"] for r in runs}
            kept = set(keep) - wanted
            dropped = sorted({r["run_id"] for r in previous["runs"]} - wanted - kept)
            merged = [r for r in previous["runs"] if r["run_id"] in kept] + runs
        elif previous is not None:
            old_axes = [a["name"] for a in previous["axes"]]
            new_axes = [a["name"] for a in description["axes"]]
            if old_axes != new_axes:
                raise StoreError(
                    f"{self.root} holds a sweep with axes ({', '.join(old_axes) or 'none'}), "
                    f"not ({', '.join(new_axes) or 'none'}); choose another output folder, "
                    "or pass --new-definition (new_definition=True) to replace its sweep"
                )
            before = {_point_key(r): r for r in previous["runs"]}
            changed = [
                (before[_point_key(r)], r)
                for r in runs
                if _point_key(r) in before and before[_point_key(r)]["run_id"] != r["run_id"]
            ]
            if changed:
                old, new = changed[0]
                where = ", ".join(f"{k}={v}" for k, v in (new.get("labels") or {}).items())
                raise StoreError(
                    f"{self.root} holds this sweep with another definition: the run at "
                    f"{where or 'the only point'}{' (reference)' if new.get('reference') else ''}"
                    f", seed {new['seed']} was {old['run_id']} and would now be "
                    f"{new['run_id']} ({len(changed)} runs differ): its [set], base scenario, "
                    "derived settings or ecnlab's defaults changed, and the two would be "
                    "pooled; choose another output folder, or pass --new-definition "
                    "(new_definition=True) to replace its sweep"
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
        if dropped:
            stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S")
            aside = self.root / "superseded" / stamp
            for rid in dropped:
                if (self.runs / rid).is_dir():
                    aside.mkdir(parents=True, exist_ok=True)
                    os.rename(self.runs / rid, aside / rid)
            for rid in dropped:
                (self.errors / f"{rid}.json").unlink(missing_ok=True)
        _write_json_atomic(self.root / SWEEP_FILE, document)
        return dropped

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

    def set_aside(self, run_id: str) -> Path:
        """Move a damaged run out of ``runs/`` into ``damaged/<run_id>-<time>/`` (kept for
        inspection; never read again), so it can be computed anew."""
        damaged = self.root / "damaged"
        damaged.mkdir(exist_ok=True)
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S")
        target = damaged / f"{run_id}-{stamp}-{uuid.uuid4().hex[:6]}"
        os.rename(self.runs / run_id, target)
        return target

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


def _point_key(record: dict[str, Any]) -> str:
    """A run's place in its sweep: reference or not, axis values, seed."""
    return json.dumps(
        [record.get("reference", False), record.get("axes"), record["seed"]], sort_keys=True
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


def open_results(
    path: PathLike, *, check: bool = True, confined: bool = False
) -> duckdb.DuckDBPyConnection:
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
        check: verify every run first (:func:`run_problems`: each table's size and SHA-256
            against its manifest), so damage is reported now, for every damaged run at once,
            rather than by a query later or never.
        confined: a connection for untrusted SQL (``ecnlab query``): DuckDB's external
            access off, file access only inside ``path``, extensions neither installed nor
            loaded, and its configuration locked. Run only read statements on it
            (:func:`check_read_only`).

    Raises:
        FileNotFoundError: ``path`` does not exist or is not a results folder.
        CorruptRunError: a run is damaged; the message names every damaged run.
    """
    import duckdb  # loaded when used: it takes 0.1 s to import
    import pyarrow as pa

    root = Path(path)
    single = results_kind(root) == "run"
    sweep_dir = SweepDir(root)
    stored = [root] if single else sweep_dir.stored_runs()
    description = None if single else sweep_dir.read_sweep()
    axes = [a["name"] for a in description["axes"]] if description else []
    if check:
        found = verify(root)
        if not found.ok:
            raise CorruptRunError(found.summary())

    manifests = {}
    files: dict[str, list[tuple[str, str]]] = {}  # table -> [(file, run_id)]
    for run_dir in stored:
        manifest = _read_manifest(run_dir)
        rid = manifest.get("run_id") or run_id_of(manifest)
        manifests[rid] = manifest
        for table, entry in manifest["tables"].items():
            file = run_dir / entry["file"]
            files.setdefault(table, []).append((str(file.absolute()), rid))

    con = duckdb.connect(
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False}
        if confined
        else {}
    )
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
    if confined:
        allowed = {str(p) + os.sep for p in (root.absolute(), root.resolve())}
        listing = ", ".join(_sql_string(a) for a in sorted(allowed))
        con.execute(f"SET allowed_directories = [{listing}]")
        con.execute("SET enable_external_access = false")
        con.execute("SET allow_community_extensions = false")
        con.execute("SET lock_configuration = true")
    return con


READ_STATEMENTS = ("SELECT", "EXPLAIN")
"""Statement types :func:`check_read_only` lets through (SELECT covers WITH, FROM-first
queries, DESCRIBE, SHOW and SUMMARIZE)."""


def check_read_only(sql: str) -> None:
    """Refuse SQL that is not only read statements (COPY, ATTACH, INSTALL, CREATE, SET...).

    Raises:
        ValueError: naming the first statement of another kind.
        duckdb.Error: the SQL does not parse.
    """
    import duckdb  # loaded when used: it takes 0.1 s to import
    for statement in duckdb.extract_statements(sql):
        kind = statement.type.name
        if kind not in READ_STATEMENTS:
            text = " ".join(statement.query.split())
            raise ValueError(
                f"{kind} statements are not allowed ({text[:60]}): a query only reads; "
                "--full-access runs any SQL"
            )


def run_id_of(manifest: dict[str, Any]) -> str:
    """The run id of a manifest (recomputed for manifests that lack it)."""
    return run_id(manifest["scenario"], manifest["seed"], manifest.get("mode"),
                  manifest.get("mode_options"))


def _runs_table(
    description: dict[str, Any] | None,
    manifests: dict[str, dict[str, Any]],
    errors: dict[str, dict[str, Any]],
    axes: list[str],
) -> pa.Table:
    import pyarrow as pa

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
    import pyarrow as pa

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
