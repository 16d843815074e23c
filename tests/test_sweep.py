"""Sweeps: definition, validation up-front, store, resume, crashes, Dask, query, report."""

from __future__ import annotations

import concurrent.futures as cf
import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import ecnlab
import pyarrow.parquet as pq
import pytest
from conftest import (
    EXAMPLES,
    ROOT,
    apt_install,
    assert_one_line_error,
    assert_tables_identical,
    invoke,
)
from ecnlab import store
from ecnlab import sweep as sweep_mod
from ecnlab.store import CorruptRunError, SweepDir

BULK = (EXAMPLES / "dumbbell-bulk.toml").as_posix()

# 2 flow counts x 2 buffers x 2 seeds = 8 runs of 2 simulated seconds (about 0.3 s each).
TINY = f"""
name = "tiny"
base = "{BULK}"
seeds = [1, 2]

[set]
duration_s = 2
warmup_s = 0.5
"metrics.interval_s" = 0.5

[[axes]]
name = "n"
values = [2, 4]
labels = ["two", "four"]

[[axes]]
name = "buffer"
path = "topology.bottleneck.queue.limit_pkts"
values = [20, 60]

[derived]
"workloads.0.flows" = "n"
"topology.clients" = "max(n, 2)"
"""


def write_sweep(tmp_path: Path, text: str = TINY, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folder`` with its bytes and modification time."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def run_tables(out: Path) -> dict[str, dict[str, Any]]:
    """Run id -> (tables, summary without wall times) of every stored run."""
    found = {}
    for run_dir in SweepDir(out).stored_runs():
        result = ecnlab.read_run(run_dir)
        summary = {k: v for k, v in result.summary.items() if not k.startswith("wall_s")}
        found[run_dir.name] = {"tables": result.tables, "summary": summary}
    return found


@pytest.fixture(scope="module")
def tiny_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny sweep, run once on the local backend through the CLI."""
    tmp = tmp_path_factory.mktemp("tiny")
    out = tmp / "out"
    result = invoke("sweep", str(write_sweep(tmp)), "--out", str(out), "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert "8 runs: 8 done, 0 already stored, 0 failed" in result.stderr
    return out


# --- definition ---------------------------------------------------------------------------


def test_expansion_axes_seeds_derived_and_reference(tmp_path: Path) -> None:
    text = TINY + '\n[reference]\nvary = ["n"]\nset = { "topology.bottleneck.rate_bps" = 1e9 }\n'
    sweep = ecnlab.load_sweep(write_sweep(tmp_path, text))
    specs = sweep.runs()
    normal = [s for s in specs if not s.reference]
    reference = [s for s in specs if s.reference]
    assert len(normal) == 8
    assert len(reference) == 4  # n (2 values) x 2 seeds; buffer held at its first value
    assert len({s.run_id for s in specs}) == 12
    for s in normal:
        assert s.scenario["workloads"][0]["flows"] == s.axes["n"]
        assert s.scenario["topology"]["clients"] == max(s.axes["n"], 2)
        assert s.scenario["topology"]["bottleneck"]["queue"]["limit_pkts"] == s.axes["buffer"]
        assert s.scenario["duration_s"] == 2
        assert s.labels["n"] == {2: "two", 4: "four"}[s.axes["n"]]
        assert s.labels["buffer"] == str(s.axes["buffer"])
    for s in reference:
        assert s.scenario["topology"]["bottleneck"]["rate_bps"] == 1e9
        assert s.axes["buffer"] is None
        assert s.scenario["topology"]["bottleneck"]["queue"]["limit_pkts"] == 20
    # Ids are a function of scenario and seed only: a second expansion gives the same.
    assert [s.run_id for s in sweep.runs()] == [s.run_id for s in specs]


def test_seed_count_and_expressions(tmp_path: Path) -> None:
    text = TINY.replace("seeds = [1, 2]", "seeds = 3").replace(
        '"workloads.0.flows" = "n"',
        '"workloads.0.flows" = "n * 2 if buffer > 30 else n // 2"\n'
        '"topology.bottleneck.rate_bps" = "topology.bottleneck.rate_bps * 2 + duration_s"',
    )
    specs = ecnlab.load_sweep(write_sweep(tmp_path, text)).runs()
    assert sorted({s.seed for s in specs}) == [1, 2, 3]
    for s in specs:
        expected = s.axes["n"] * 2 if s.axes["buffer"] > 30 else s.axes["n"] // 2
        assert s.scenario["workloads"][0]["flows"] == expected
        assert s.scenario["topology"]["bottleneck"]["rate_bps"] == 20e6 + 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("base = [", "invalid TOML"),
        ("bogus = 1\n" + TINY, "unknown key 'bogus'"),
        (TINY.replace('labels = ["two", "four"]', 'labels = ["two"]'), "1 labels for 2 values"),
        (TINY.replace('name = "buffer"', 'name = "n"'), "two axes are named 'n'"),
        (TINY.replace('name = "buffer"', 'name = "seed"'), "reserved"),
        (TINY.replace("seeds = [1, 2]", "seeds = [1, 1]"), "duplicates"),
        (TINY.replace('"n"\n"topology', '"__import__(\'os\')"\n"topology'), "not allowed"),
        (TINY.replace('"max(n, 2)"', '"max(n, nosuch)"'), "unknown name 'nosuch'"),
        (TINY.replace('"max(n, 2)"', '"n +"'), "is not valid"),
        (TINY + '\n[reference]\nvary = ["load"]\nset = { duration_s = 1 }\n', "not an axis"),
    ],
)
def test_malformed_sweep_files(tmp_path: Path, text: str, message: str) -> None:
    path = write_sweep(tmp_path, text)
    with pytest.raises(sweep_mod.SweepError, match=re.escape(message)):
        ecnlab.load_sweep(path).runs()
    out = tmp_path / "out"
    assert_one_line_error(invoke("sweep", str(path), "--out", str(out)), message)
    assert not out.exists(), "nothing written for an invalid sweep"


def test_missing_files_are_clear(tmp_path: Path) -> None:
    assert_one_line_error(invoke("sweep", str(tmp_path / "no.toml"), "--out", "x"), "no.toml")
    path = write_sweep(tmp_path, TINY.replace(BULK, "nosuch.toml"))
    assert_one_line_error(invoke("sweep", str(path), "--out", "x"), "base scenario not found")


def test_bad_axis_path_is_caught_before_any_run(tiny_out: Path, tmp_path: Path) -> None:
    text = TINY.replace("topology.bottleneck.queue.limit_pkts", "topology.bottleneck.nosuch")
    path = write_sweep(tmp_path, text)
    with pytest.raises(sweep_mod.SweepError, match="nosuch") as info:
        ecnlab.load_sweep(path).runs()
    assert "n=two, buffer=20" in str(info.value)
    # Into a folder holding results: refused up-front, the results untouched.
    before = snapshot(tiny_out)
    assert_one_line_error(invoke("sweep", str(path), "--out", str(tiny_out)), "nosuch")
    assert snapshot(tiny_out) == before
    # An axis value the core refuses is named with the axis values too.
    bad_value = TINY.replace("values = [20, 60]", "values = [20, -1]")
    result = invoke("sweep", str(write_sweep(tmp_path, bad_value)), "--out", str(tiny_out))
    assert_one_line_error(result, "buffer=-1", "limit_pkts")
    assert snapshot(tiny_out) == before


def test_dry_run_lists_runs(tmp_path: Path) -> None:
    result = invoke("sweep", str(write_sweep(tmp_path)), "--out", str(tmp_path / "o"), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "8 runs" in result.stdout
    assert not (tmp_path / "o").exists()


# --- store and query ------------------------------------------------------------------------


def test_store_layout_and_rerun_skips(tiny_out: Path, tmp_path: Path) -> None:
    runs = sorted(p.name for p in (tiny_out / "runs").iterdir())
    assert len(runs) == 8
    for rid in runs:
        manifest = json.loads((tiny_out / "runs" / rid / "manifest.json").read_text())
        assert manifest["run_id"] == rid
    assert not (tiny_out / "errors").exists()
    description = json.loads((tiny_out / "sweep.json").read_text())
    assert [a["name"] for a in description["axes"]] == ["n", "buffer"]
    assert sorted(r["run_id"] for r in description["runs"]) == runs

    before = snapshot(tiny_out)
    copy = tmp_path / "sweep.toml"
    copy.write_text(TINY)
    result = invoke("sweep", str(copy), "--out", str(tiny_out))
    assert result.exit_code == 0, result.output
    assert "8 runs: 0 done, 8 already stored" in result.stderr
    after = snapshot(tiny_out)
    assert {k: v for k, v in after.items() if k != "sweep.json"} == {
        k: v for k, v in before.items() if k != "sweep.json"
    }


def test_open_gives_views_with_axes(tiny_out: Path) -> None:
    con = ecnlab.open_results(tiny_out)
    runs = con.execute(
        "SELECT n, n_label, buffer, seed, status, workloads FROM ("
        "  SELECT r.*, (SELECT count(*) FROM flows f WHERE f.run_id = r.run_id) AS workloads"
        "  FROM runs r) ORDER BY n, buffer, seed"
    ).fetchall()
    assert [r[:5] for r in runs] == [
        (n, label, b, s, "done")
        for n, label in ((2, "two"), (4, "four"))
        for b in (20, 60)
        for s in (1, 2)
    ]
    assert [r[5] for r in runs] == [r[0] for r in runs], "n flows per run"
    flows = con.execute(
        "SELECT n, buffer, count(*), count(DISTINCT run_id) FROM flows GROUP BY ALL ORDER BY ALL"
    ).fetchall()
    assert flows == [(2, 20, 4, 2), (2, 60, 4, 2), (4, 20, 8, 2), (4, 60, 8, 2)]
    # Summary columns in runs agree with the tables.
    rows = con.execute(
        "SELECT r.run_id, r.flows_started, count(f.flow) FROM runs r JOIN flows f USING (run_id) "
        "GROUP BY ALL"
    ).fetchall()
    assert all(started == counted for _, started, counted in rows)


def test_union_by_name_reads_newer_columns(tiny_out: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    shutil.copytree(tiny_out, out)
    run_dir = min((out / "runs").iterdir())
    flows = pq.read_table(run_dir / "flows.parquet")
    pq.write_table(
        flows.append_column("newer", [list(range(flows.num_rows))]), run_dir / "flows.parquet"
    )
    # As a newer ecnlab would have written it: the manifest records the file's hash.
    manifest = json.loads((run_dir / "manifest.json").read_text())
    size, digest = store._digest(run_dir / "flows.parquet")
    manifest["tables"]["flows"].update(bytes=size, sha256=digest)
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    con = ecnlab.open_results(out)
    total, with_newer = con.execute("SELECT count(*), count(newer) FROM flows").fetchone()
    assert with_newer == flows.num_rows < total


def test_corrupt_parquet_is_named_and_nothing_is_destroyed(tiny_out: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    shutil.copytree(tiny_out, out)
    run_dir = sorted((out / "runs").iterdir())[3]
    victim = run_dir / "links.parquet"
    victim.write_bytes(b"PAR1 not really parquet")
    before = snapshot(out)
    named = f"{run_dir.name}: links.parquet"
    with pytest.raises(CorruptRunError, match=re.escape(named)):
        ecnlab.open_results(out)
    for args in (("query", str(out), "SELECT 1"), ("report", str(out))):
        result = invoke(*args)
        assert result.exit_code == 1, result.output
        assert named in result.stderr and "\n" not in result.stderr.strip()
    assert snapshot(out) == before
    # The sweep does not trust the damaged run: it sets it aside (kept, under damaged/) and
    # computes it again; every other file is left as it was.
    result = invoke("sweep", str(write_sweep(tmp_path)), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "1 damaged stored runs moved to" in result.stderr
    after = snapshot(out)
    kept = {k: v for k, v in before.items() if k != "sweep.json" and run_dir.name not in k}
    assert {k: v for k, v in after.items() if k in kept} == kept
    (aside,) = (out / "damaged").iterdir()
    assert (aside / "links.parquet").read_bytes() == b"PAR1 not really parquet"
    assert not store.run_problems(run_dir, run_id=run_dir.name)


def test_runs_this_process_stored_are_not_hashed_again_unless_changed(
    tiny_out: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second look of the same process trusts the runs it stored while their files keep
    their size, modification time and inode; a changed file is hashed and caught."""
    out = tmp_path / "copy"
    shutil.copytree(tiny_out, out)
    sweep = sweep_mod.load_sweep(write_sweep(tmp_path))
    hashed: list[str] = []
    real = store.run_problems

    def counting(run_dir: Path, *, run_id: str | None = None) -> list[str]:
        hashed.append(Path(run_dir).name)
        return real(run_dir, run_id=run_id)

    monkeypatch.setattr(store, "run_problems", counting)
    shutil.rmtree(min((out / "runs").iterdir()))
    # The copies are new to this process: each is hashed once, then trusted, as is the run
    # computed and stored now.
    first = sweep_mod.run_sweep(sweep, out, jobs=1, progress=False)
    assert (first.skipped, first.done, len(hashed)) == (7, 1, 7)
    hashed.clear()
    again = sweep_mod.run_sweep(sweep, out, jobs=1, progress=False)
    assert (again.skipped, again.damaged, hashed) == (8, 0, [])
    # Same size, other bytes, a later modification time: hashed again, set aside, computed.
    run_dir = sorted((out / "runs").iterdir())[2]
    victim = run_dir / "links.parquet"
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    later = victim.stat().st_mtime_ns + 1_000_000_000
    os.utime(victim, ns=(later, later))
    third = sweep_mod.run_sweep(sweep, out, jobs=1, progress=False)
    assert (third.damaged, third.done, hashed) == (1, 1, [run_dir.name])
    assert not real(run_dir, run_id=run_dir.name)


def test_other_sweep_into_same_folder_is_refused(tiny_out: Path, tmp_path: Path) -> None:
    text = TINY.replace('name = "n"', 'name = "flows_n"').replace('= "n"', '= "flows_n"')
    text = text.replace("max(n, 2)", "max(flows_n, 2)")
    before = snapshot(tiny_out)
    result = invoke("sweep", str(write_sweep(tmp_path, text)), "--out", str(tiny_out))
    assert_one_line_error(result, "holds a sweep with axes (n, buffer)")
    assert snapshot(tiny_out) == before


def test_query_cli(tiny_out: Path) -> None:
    result = invoke(
        "query",
        str(tiny_out),
        "SELECT n_label, count(*) AS c FROM runs GROUP BY 1 ORDER BY 1",
        "--csv",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["n_label,c", "four,4", "two,4"]
    assert_one_line_error(invoke("query", str(tiny_out), "SELECT nosuch FROM runs"), "nosuch")
    assert_one_line_error(invoke("query", str(tiny_out / "nope"), "SELECT 1"), "nope")


# --- failures, interruption, crashes --------------------------------------------------------


class _ThreadBackend(sweep_mod._Backend):
    """In-process workers, so a test can make one run fail."""

    name = "threads"

    def __init__(self) -> None:
        self.pool = cf.ThreadPoolExecutor(2)
        self.max_in_flight = 2

    def submit(self, spec: sweep_mod.RunSpec, sweep_dir: Path) -> cf.Future[tuple[str, Any]]:
        return self.pool.submit(sweep_mod.simulate, spec.scenario, spec.seed)

    def worker_died(self, exc: BaseException) -> bool:
        return False

    def close(self, *, cancel: bool = False) -> None:
        self.pool.shutdown(wait=True)


def _fail_runs(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Make the runs of ``seed`` with 4 flows raise, in threads of this process (so the
    patched ``run`` is the one that runs)."""
    real_run = sweep_mod.run

    def flaky(scenario: dict[str, Any], s: int, **kwargs: Any) -> ecnlab.Result:
        if s == seed and scenario["workloads"][0]["flows"] == 4:
            raise RuntimeError("injected failure")
        return real_run(scenario, s, **kwargs)

    monkeypatch.setattr(sweep_mod, "run", flaky)
    monkeypatch.setattr(sweep_mod, "_LocalBackend", lambda jobs: _ThreadBackend())


def test_failed_run_is_recorded_and_others_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_run = sweep_mod.run
    _fail_runs(monkeypatch, seed=2)
    out = tmp_path / "out"
    path = write_sweep(tmp_path)
    report = sweep_mod.run_sweep(path, out, progress=False)
    assert (report.done, report.failed) == (6, 2)
    errors = list((out / "errors").iterdir())
    assert len(errors) == 2
    record = json.loads(errors[0].read_text())
    assert record["message"] == "injected failure"
    assert record["seed"] == 2 and record["axes"]["n"] == 4
    assert "Traceback" in record["traceback"]
    con = ecnlab.open_results(out)
    status = dict(con.execute("SELECT status, count(*) FROM runs GROUP BY 1").fetchall())
    assert status == {"done": 6, "failed": 2}

    # Rerun: only the failed runs run again; their error records go once they succeed.
    monkeypatch.setattr(sweep_mod, "run", real_run)
    report = sweep_mod.run_sweep(path, out, progress=False)
    assert (report.skipped, report.done, report.failed) == (6, 2, 0)
    assert list((out / "errors").iterdir()) == []


def test_a_full_disk_stops_the_sweep_and_keeps_what_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a run cannot be stored for want of space, no further run starts (each would be
    simulated only to fail the same way); the error says so, and the same call resumes."""
    monkeypatch.setattr(sweep_mod, "_LocalBackend", lambda jobs: _ThreadBackend())
    real_write = SweepDir.write_run
    writes = []

    def full_after_three(self: SweepDir, result: ecnlab.Result) -> Path:
        writes.append(result.run_id)
        if len(writes) > 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(self, result)

    monkeypatch.setattr(SweepDir, "write_run", full_after_three)
    out = tmp_path / "out"
    path = write_sweep(tmp_path)
    with pytest.raises(sweep_mod.DiskFullError) as caught:
        sweep_mod.run_sweep(path, out, progress=False)
    message = str(caught.value)
    found = re.search(r"(\d+) runs failed and (\d+) were not started \((\d+) stored by this call", message)
    assert found, message
    failed, not_started, stored = map(int, found.groups())
    assert "No space left on device" in message and "run the same command again" in message
    assert stored == 3 and failed >= 1 and failed + not_started == 5
    assert len(writes) == 3 + failed  # the runs not started were not simulated
    assert len(SweepDir(out).stored_runs()) == 3
    assert len(list((out / "errors").iterdir())) == failed

    monkeypatch.setattr(SweepDir, "write_run", real_write)
    report = sweep_mod.run_sweep(path, out, progress=False)
    assert (report.skipped, report.done, report.failed) == (3, 5, 0)
    assert list((out / "errors").iterdir()) == []


def test_sweeps_share_one_pool_each_in_its_folder(
    tiny_out: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_sweeps: several sweeps through one pool, each stored, resumed, verified and
    reported as run_sweep would; a failure is recorded in its own sweep's folder."""
    tiny = sweep_mod.load_sweep(write_sweep(tmp_path))
    other = sweep_mod.load_sweep(
        write_sweep(tmp_path, TINY.replace('name = "tiny"', 'name = "other"').replace(
            "seeds = [1, 2]", "seeds = [3]"), "other.toml")
    )
    a, b = tmp_path / "a", tmp_path / "b"
    shutil.copytree(tiny_out, a)
    stored = SweepDir(a).stored_runs()
    for run_dir in stored[:3]:
        shutil.rmtree(run_dir)
    manifest = json.loads((stored[3] / "manifest.json").read_text())
    (stored[3] / manifest["tables"]["flows"]["file"]).write_bytes(b"damaged")
    _fail_runs(monkeypatch, seed=3)
    ra, rb = sweep_mod.run_sweeps([(tiny, a), (other, b)], progress=False)
    assert (ra.total, ra.skipped, ra.damaged, ra.done, ra.failed) == (8, 4, 1, 4, 0)
    assert (rb.total, rb.skipped, rb.done, rb.failed) == (4, 0, 2, 2)
    assert len(list((b / "errors").iterdir())) == 2
    assert not (a / "errors").exists() or not list((a / "errors").iterdir())
    assert len(list((a / "damaged").iterdir())) == 1
    ours, before = run_tables(a), run_tables(tiny_out)
    assert sorted(ours) == sorted(before)
    for rid in ours:
        assert ours[rid]["summary"] == before[rid]["summary"], rid
        assert_tables_identical(ours[rid]["tables"], before[rid]["tables"])
    assert {r.name for r in SweepDir(b).stored_runs()} == {
        s.run_id for s in other.runs() if s.scenario["workloads"][0]["flows"] == 2
    }
    # Two sweeps into one folder: refused before anything is written.
    with pytest.raises(sweep_mod.SweepError, match="same folder"):
        sweep_mod.run_sweeps([(tiny, tmp_path / "c"), (other, tmp_path / "c")], progress=False)
    assert not (tmp_path / "c").exists()


def _sweep_process(sweep_file: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ecnlab", "sweep", str(sweep_file), "--out", str(out), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: killed with its workers
    )


def _wait_for_runs(out: Path, count: int, proc: subprocess.Popen[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while len(SweepDir(out).stored_runs()) < count:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "sweep too slow"
        time.sleep(0.05)


# Longer runs (1500 simulated s of 30 or 40 flows, about 1.2 M bottleneck packets, a few
# tenths of a wall second each) so the sweep is still running when the tests kill part of
# it: with 8 simulated s the eight runs took 0.2 s and a killed worker could find no run
# left to lose.
SLOW = TINY.replace("duration_s = 2", "duration_s = 1500").replace(
    "values = [2, 4]", "values = [30, 40]"
)


def test_killed_sweep_resumes_without_rerunning_stored_runs(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, SLOW)
    out = tmp_path / "out"
    proc = _sweep_process(path, out, "--jobs", "1")
    _wait_for_runs(out, 2, proc, timeout=120)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    stored = SweepDir(out).stored_runs()
    assert 2 <= len(stored) < 8, "killed part-way"
    for run_dir in stored:
        ecnlab.read_run(run_dir)  # complete and readable
    before = {p.name: snapshot(p) for p in stored}

    result = invoke("sweep", str(path), "--out", str(out), "--jobs", "2")
    assert result.exit_code == 0, result.output
    assert f"{8 - len(stored)} done, {len(stored)} already stored" in result.stderr
    assert len(SweepDir(out).stored_runs()) == 8
    assert {p.name: snapshot(out / "runs" / p.name) for p in stored} == before
    assert [p.name for p in (out / "runs").iterdir() if p.name.startswith(".")] == []


def _worker_pids(parent: int) -> list[int]:
    """The pool's worker processes (spawned children running ``spawn_main``)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and "spawn_main" in cmdline:
            pids.append(int(entry.name))
    return pids


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds workers through /proc")
def test_dead_worker_run_is_retried(tmp_path: Path) -> None:
    path = write_sweep(tmp_path, SLOW)
    out = tmp_path / "out"
    proc = _sweep_process(path, out, "--jobs", "2")
    _wait_for_runs(out, 1, proc, timeout=120)
    workers = _worker_pids(proc.pid)
    assert workers, "no worker process found"
    os.kill(workers[0], signal.SIGKILL)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    retries = int(re.search(r"\((\d+) retries\)", stderr).group(1))  # type: ignore[union-attr]
    assert retries >= 1, stderr
    assert "0 failed" in stderr
    assert len(SweepDir(out).stored_runs()) == 8


def test_a_worker_stores_its_run_as_the_parent_would(
    small_result: ecnlab.Result, tmp_path: Path
) -> None:
    folder = tmp_path / "sweep"
    scenario, seed = small_result.scenario, small_result.seed
    status, run_id = sweep_mod.simulate_and_store(scenario, seed, None, str(folder))
    assert (status, run_id) == ("stored", small_result.run_id)
    stored = SweepDir(folder).runs / run_id
    assert_tables_identical(small_result.tables, store.read_run(stored).tables)
    # Stored meanwhile by another worker (a pool restarted after a death): intact, so done.
    assert sweep_mod.simulate_and_store(scenario, seed, None, str(folder)) == ("stored", run_id)
    # Something else in the way: an error naming it, and nothing of it destroyed.
    other = tmp_path / "other"
    foreign = SweepDir(other).runs / run_id
    foreign.mkdir(parents=True)
    (foreign / "notes.txt").write_text("mine")
    status, error = sweep_mod.simulate_and_store(scenario, seed, None, str(other))
    assert status == "error" and "is not an ecnlab run" in error["message"]
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    # A failing run is reported as simulate reports it.
    bad = {**scenario, "duration_s": -1.0}
    status, error = sweep_mod.simulate_and_store(bad, seed, None, str(folder))
    assert status == "error" and "duration_s" in error["message"] and "Traceback" in error["traceback"]


def test_local_and_dask_give_identical_results(tiny_out: Path, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    out = tmp_path / "dask"
    report = ecnlab.run_sweep(write_sweep(tmp_path), out, backend="dask", jobs=2, progress=False)
    assert (report.done, report.failed) == (8, 0)
    local, dask = run_tables(tiny_out), run_tables(out)
    assert sorted(local) == sorted(dask)
    for rid in local:
        assert local[rid]["summary"] == dask[rid]["summary"], rid
        assert_tables_identical(local[rid]["tables"], dask[rid]["tables"])


# --- plots and report ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["cdf", "ccdf", "queue", "goodput", "fairness", "throughput"])
def test_plot_kinds(tiny_out: Path, tmp_path: Path, kind: str) -> None:
    target = tmp_path / f"{kind}.png"
    result = invoke("plot", str(tiny_out), "--kind", kind, "--out", str(target))
    assert result.exit_code == 0, result.output
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_errors(tiny_out: Path) -> None:
    assert_one_line_error(invoke("plot", str(tiny_out), "--kind", "pie"), "unknown plot kind")
    assert_one_line_error(invoke("plot", str(tiny_out), "--by", "load"), "not an axis")


def _find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _chromium() -> str:
    """Headless Chromium; the test setup installs Debian's package when it is missing."""
    found = _find_chromium()
    if found is None and apt_install("chromium"):
        found = _find_chromium()
    if found is None:
        pytest.fail("headless Chromium is needed (Debian: apt-get install -y chromium)")
    return found


def test_report_renders_in_headless_chromium(tiny_out: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = invoke("report", str(tiny_out), "--out", str(out))
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "http://" not in page and "https://" not in page, "self-contained"
    images = page.count("<img ")
    assert images >= 3  # queueing delay, goodput, fairness (no exchanges in this sweep)
    # A copy with a probe script: after load, record every image's natural width.
    probe = (
        "<script>window.addEventListener('load', () => { document.body.setAttribute("
        "'data-widths', Array.from(document.images).map(i => i.complete ? i.naturalWidth : -1)"
        ".join(',')); });</script></body>"
    )
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", probe))
    dom = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probed.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    match = re.search(r'data-widths="([^"]*)"', dom)
    assert match, dom[:500]
    widths = [int(w) for w in match.group(1).split(",")]
    assert len(widths) == images
    assert all(w > 0 for w in widths), widths


def test_example_sweep_is_valid() -> None:
    for path in (ROOT / "examples" / "sweeps").glob("*.toml"):
        assert ecnlab.load_sweep(path).runs()
