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

import datetime
import json
import math
import os
import shutil
import uuid
import warnings
from pathlib import Path
from typing import Any, Union

import pyarrow as pa
import pyarrow.parquet as pq

from . import _core
from ._result import Result

__all__ = [
    "MANIFEST",
    "CorruptRunError",
    "RunExistsError",
    "check_out_dir",
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
