"""``ecnlab testbed run``: a scenario on real Linux TCP stacks, stored as a run.

:func:`run_testbed` maps the scenario onto a :class:`~ecnlab.testbed.Testbed`
(:mod:`ecnlab._testbed_plan`), starts a server agent in every server namespace and a client
agent in every client namespace (:mod:`ecnlab._testbed_agent`), runs for the scenario's
duration, tears everything down, and writes the simulator's tables (``exchanges``, ``flows``,
``links``, ``queue_counts``, ``queue_samples``, ``aqm_samples``; ``sojourn`` and
``flow_samples`` empty) with the same columns and units, and a manifest with
``"mode": "testbed"``. See docs/testbed.md.
"""

from __future__ import annotations

import json
import math
import os
import platform
import select
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ._result import TABLES, Result
from ._scenario import ScenarioSource, aqm_variable_kept
from ._testbed_mariadb import DATABASES, HOST, MariaDB, check_engine, check_installed
from ._testbed_plan import FLOW_BASE, Plan, plan
from .store import check_out_dir, write_run
from .testbed import Testbed, TestbedError

__all__ = ["AGENT", "DATABASES", "SERVER_PORT", "build_testbed", "run_testbed"]

AGENT = Path(__file__).with_name("_testbed_agent.py")
SERVER_PORT = 5000
WEB_PORT = 8080
_AGENT_START_S = 20.0  # the most an agent may take to say "ready"
_AGENT_STOP_S = 30.0  # the most a server agent may take to record and exit after SIGTERM
_LINKS = {"up": "bottleneck_up", "down": "bottleneck_down"}


def build_testbed(p: Plan, out_dir: Path, database_host: bool = False) -> Testbed:
    """The :class:`Testbed` of a plan (not yet up); ``database_host``: with host ``db`` for
    the MariaDB tier."""
    kwargs = dict(p.testbed)
    kwargs["host_sysctls"] = {h: host.sysctls for h, host in p.hosts.items()}
    return Testbed(out_dir=out_dir, database_host=database_host, **kwargs)


def set_routes(t: Testbed, p: Plan) -> None:
    """Each host's route attributes: minimum RTO, initial window and advertised MSS."""
    for h, host in p.hosts.items():
        attrs = [str(x) for kv in host.route.items() for x in kv]
        subprocess.run(
            ["ip", "-n", t.ns(h), "route", "replace", "10.77.0.0/16", "dev", "eth0", "proto",
             "kernel", "scope", "link", "src", t.address(h), *attrs],
            check=True, capture_output=True, text=True)


def run_testbed(
    scenario: ScenarioSource,
    out: os.PathLike | str,
    seed: int = 1,
    *,
    overrides: Sequence[str] = (),
    force: bool = False,
    progress: bool | None = None,
    on_up: Callable[[Testbed], None] | None = None,
    database: str = "sqlite",
) -> Path:
    """Run a scenario on the testbed and store it as a run folder ``out``.

    Refusals (:class:`~ecnlab._testbed_plan.TestbedUnsupported`, a ValueError naming each
    field) come before anything is built and need no root. ``on_up`` is called with the
    testbed once it is up (tests use it). ``database`` is the TPC-W bookstore's engine:
    ``sqlite`` (one file per server host) or ``mariadb`` (one private MariaDB server in its own
    host on the servers' side; :mod:`ecnlab._testbed_mariadb`). Returns the run folder.

    Raises:
        ValueError: the scenario is invalid, or fields the testbed cannot honour, or an
            unknown ``database``.
        TestbedError: no root, MariaDB missing, or a step of the testbed failed (everything
            is torn down).
        RunExistsError: ``out`` holds a run and ``force`` is False.
    """
    p = plan(scenario, seed, tuple(overrides))
    check_database(database, p)
    if os.geteuid() != 0:
        raise TestbedError("the testbed needs root (network namespaces)")
    if database == "mariadb":
        check_installed()
    check_out_dir(out, force=force)
    if progress is None:
        progress = sys.stderr.isatty()
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ecnlab-testbed-") as work:
        work_dir = Path(work)
        with build_testbed(p, work_dir, database_host=database == "mariadb") as t:
            set_routes(t, p)
            if on_up is not None:
                on_up(t)
            t0, clients, servers, db_info = _run_agents(t, p, work_dir, progress, database)
            t.stop_router()
            records = t.records()
        wall_s = time.perf_counter() - wall
        web = next((r.pop("web_tier") for r in servers if "web_tier" in r), None)
        tables, summary = tables_of(p, t0, clients, [r for r in servers if r], records)
    summary["wall_s"] = wall_s
    if web is not None:
        summary.update(web_summary(web))
    result = Result(tables=tables, summary=summary, scenario=p.scenario, seed=seed)
    extra = {"testbed": {
        "kernel": platform.release(),
        "router": p.testbed | {"pair_delays": [[c, s, d] for (c, s), d in
                                               sorted(p.testbed["pair_delays"].items())]},
        "hosts": {h: {"sysctls": v.sysctls, "route": v.route} for h, v in p.hosts.items()},
        "approximations": p.notes,
        "tables_not_measured": ["sojourn", "flow_samples"],
    }}
    if web is not None:
        extra["testbed"]["web_tier"] = web
        extra["testbed"]["database"] = db_info
    # A run on MariaDB is not the run on SQLite: the engine is part of the run's id.
    options = {"database": database} if database != DATABASES[0] else None
    return write_run(result, out, force=force, mode="testbed", mode_options=options,
                     extra=extra)


def check_database(database: str, p: Plan) -> None:
    """``--database``: a known engine, and MariaDB only for a TPC-W workload (the one that
    has a database)."""
    check_engine(database)
    if database != DATABASES[0] and not p.browsers:
        raise ValueError(f"--database {database}: the scenario has no tpcw_browsers workload, "
                         "the only one with a database")


def web_summary(web: dict[str, dict[str, Any]]) -> dict[str, float]:
    """The web tier's load, over its servers: requests, the mean, 99th percentile and
    largest server time per request (ms: from the request's last byte to the response handed
    to the socket), the database's share of it, and the busiest server's busy fraction (time
    handling requests / run time: the tier is the bottleneck only near 1)."""
    tiers = list(web.values())
    n = sum(w["requests"] for w in tiers)
    pages = [sum(w["pages"].values()) for w in tiers]

    def mean(key: str, weights: list[int]) -> float:
        total = sum(weights)
        return sum((w[key] or 0) * k for w, k in zip(tiers, weights)) / total if total else math.nan

    return {
        "web_requests": n,
        "web_server_ms_mean": mean("server_ms_mean", [w["requests"] for w in tiers]),
        "web_server_ms_p99": max((w["server_ms_p99"] or 0) for w in tiers),
        "web_server_ms_max": max(w["server_ms_max"] for w in tiers),
        "web_db_ms_mean": mean("db_ms_mean", pages),
        "web_db_ms_max": max(w["db_ms_max"] for w in tiers),
        "web_busy_fraction_max": max((w["busy_fraction"] or 0) for w in tiers),
    }


# --- running -------------------------------------------------------------------------------


def _agent(t: Testbed, host: str, args: list[str]) -> subprocess.Popen:
    p = t.popen(host, [sys.executable, str(AGENT), *args], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p


def _expect(host: str, p: subprocess.Popen, word: str, timeout: float) -> None:
    """Waits up to ``timeout`` s for the agent's next line, which must be ``word``."""
    assert p.stdout is not None
    ready, _, _ = select.select([p.stdout], [], [], timeout)
    line = p.stdout.readline() if ready else ""
    if line.strip() != word:
        err = p.stderr.read() if p.poll() is not None and p.stderr else ""
        raise TestbedError(f"the agent in {host} did not say {word!r} within {timeout:g} s: "
                           f"{line.strip()} {err.strip()}".strip())


def _database(t: Testbed, p: Plan, work: Path, database: str
              ) -> tuple[dict[str, str], dict[str, Any], Any]:
    """The bookstore of the seed: per server host, where its web tier finds it; what the
    manifest records; the MariaDB server (None for SQLite)."""
    from ._testbed_web import populate

    if database == "mariadb":
        server = MariaDB(t, work)
        started = time.perf_counter()
        server.start()
        counts = server.populate(p.seed)  # once it is up
        info = {"engine": "mariadb", "version": server.version, "host": HOST,
                "namespace": t.ns(HOST), "address": t.address(HOST), "url": server.url,
                "rows": counts, "start_s": round(time.perf_counter() - started, 3)}
        return {s: server.url for s in t.servers}, info, server
    # One bookstore per server host, the same rows from the seed.
    counts = populate(str(work / "bookstore.db"), p.seed)
    urls = {}
    for s in t.servers:
        db = work / f"{s}.bookstore.db"
        db.write_bytes((work / "bookstore.db").read_bytes())
        urls[s] = str(db)
    return urls, {"engine": "sqlite", "version": sqlite3.sqlite_version,
                  "host": "each server host", "rows": counts}, None


def _run_agents(t: Testbed, p: Plan, work: Path, progress: bool, database: str = "sqlite"
                ) -> tuple[float, list[dict], list[dict], dict[str, Any] | None]:
    """Starts the agents, runs for the duration; returns t0, the agents' records and the
    database's description (None without a TPC-W workload)."""
    servers = {}
    for s in t.servers:
        servers[s] = _agent(t, s, ["server", str(SERVER_PORT), str(work / f"{s}.jsonl")])
    db_info, db_server = None, None
    if p.browsers:
        # The web tier in every server host, on the seed's bookstore.
        urls, db_info, db_server = _database(t, p, work, database)
        for s in t.servers:
            servers[f"{s} web"] = _agent(t, s, ["web", str(WEB_PORT), urls[s],
                                                 str(work / f"{s}.web.jsonl")])
    for s, proc in servers.items():
        _expect(s, proc, "ready", _AGENT_START_S)
    clients: dict[str, subprocess.Popen] = {}
    for i, c in enumerate(t.clients):
        mine = {"bulk": [f for f in p.bulk if f["client"] == i],
                "connections": [f for f in p.connections if f["client"] == i],
                "browsers": [b for b in p.browsers if b["client"] == i],
                "sessions": [s for s in p.sessions if s["client"] == i]}
        for f in mine["bulk"] + mine["connections"] + [
                page for s in mine["sessions"] for page in s["pages"]]:
            f["server_addr"], f["port"] = t.address(f"s{f['server']}"), SERVER_PORT
        for b in mine["browsers"]:
            b["server_addr"], b["port"] = t.address(f"s{b['server']}"), WEB_PORT
        if not any(mine.values()):
            continue
        plan_file = work / f"{c}.plan.json"
        plan_file.write_text(json.dumps({**mine, "tpcw": p.tpcw, "duration_s": p.duration_s,
                                         "warmup_s": p.warmup_s, "t0": "stdin"}))
        clients[c] = _agent(t, c, ["client", str(plan_file), str(work / f"{c}.json")])
    for c, proc in clients.items():
        _expect(c, proc, "ready", _AGENT_START_S)
    # Every agent is up: the run's time 0, a little ahead so each has read it by then.
    t0 = time.monotonic() + 0.2
    for proc in clients.values():
        assert proc.stdin is not None
        proc.stdin.write(f"{t0!r}\n")
        proc.stdin.flush()
    _wait(t, p, t0, clients, progress)
    for c, proc in clients.items():
        _expect(c, proc, "done", 15)
    for proc in servers.values():
        proc.terminate()
    for s, proc in servers.items():
        try:
            proc.wait(timeout=_AGENT_STOP_S)
        except subprocess.TimeoutExpired:
            raise TestbedError(f"the server agent in {s} did not exit within "
                               f"{_AGENT_STOP_S:g} s of SIGTERM") from None
    if db_server is not None:
        db_server.stop()
    for c, proc in clients.items():
        assert proc.stdin is not None
        proc.stdin.write("exit\n")
        proc.stdin.flush()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise TestbedError(f"the client agent in {c} did not exit") from None
    client_rows = [json.loads((work / f"{c}.json").read_text()) for c in clients]
    logs = [work / f"{s}.jsonl" for s in t.servers]
    if p.browsers:
        logs += [work / f"{s}.web.jsonl" for s in t.servers]
    server_rows = [json.loads(line) for log in logs
                   for line in log.read_text().splitlines() if line]
    if p.browsers:
        server_rows.append({"web_tier": {
            s: json.loads((work / f"{s}.web.jsonl.stats.json").read_text()) for s in t.servers}})
    _renumber(p, client_rows, server_rows)
    return t0, client_rows, server_rows, db_info


def _renumber(p: Plan, clients: list[dict], servers: list[dict]) -> None:
    """Numbers the browsers' connections after the planned flows, in order of opening (the
    simulator numbers flows as they open)."""
    dynamic = sorted((r["start_s"], r["flow"]) for c in clients for r in c["flows"]
                     if r["flow"] >= FLOW_BASE)
    first = max((f["flow"] for f in p.bulk + p.connections), default=-1) + 1
    new = {flow: first + k for k, (_, flow) in enumerate(dynamic)}
    for row in [r for c in clients for r in c["flows"] + c["exchanges"]] + servers:
        if row.get("flow") in new:
            row["flow"] = new[row["flow"]]


def _wait(t: Testbed, p: Plan, t0: float, clients: dict[str, subprocess.Popen],
          progress: bool) -> None:
    """Waits until the end of the run, drawing progress; an agent that dies is an error."""
    bar = _Progress(t, p, t0) if progress else None
    try:
        while (now := time.monotonic() - t0) < p.duration_s:
            for c, proc in clients.items():
                if proc.poll() is not None:
                    err = proc.stderr.read().strip() if proc.stderr else ""
                    raise TestbedError(f"the client agent in {c} exited with {proc.returncode} "
                                       f"at {max(now, 0):.1f} s: {err}")
            if bar is not None:
                bar.update(now)
            time.sleep(min(0.25, max(0.01, p.duration_s - now)))
    finally:
        if bar is not None:
            bar.close()


class _Progress:
    """A bar of the run's time with the router's latest rate, queue and signals."""

    def __init__(self, t: Testbed, p: Plan, t0: float) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        self.t, self.t0, self.end = t, t0, p.duration_s
        self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                            TextColumn("{task.fields[now]}"), TimeRemainingColumn(),
                            console=Console(stderr=True), transient=True)
        self.bar.start()
        self.task = self.bar.add_task(f"testbed {p.scenario.get('name', '')}", total=self.end,
                                      now="")
        self.file: Any = None
        # The down direction's samples of about the last half second (the rate shown).
        self.keep = max(2, round(500 / p.testbed["sample_interval_ms"]))
        self.down: list[dict[str, Any]] = []

    def _read(self) -> None:
        """Reads the router's new sample lines (the file grows; a partial line waits)."""
        if self.file is None:
            if not self.t.samples_path.exists():
                return
            self.file = open(self.t.samples_path)  # noqa: SIM115 (closed in close())
        while True:
            pos = self.file.tell()
            line = self.file.readline()
            if not line.endswith("\n"):
                self.file.seek(pos)
                return
            if '"sample"' in line and '"down"' in line:
                self.down = [*self.down[-(self.keep - 1):], json.loads(line)]

    def update(self, now: float) -> None:
        self._read()
        text = f"{max(now, 0):.1f}/{self.end:g} s"
        if len(self.down) >= 2:
            a, b = self.down[0], self.down[-1]
            dt = (b["t_ns"] - a["t_ns"]) / 1e9 or 1.0
            text += (f"  down {(b['delivered_bytes'] - a['delivered_bytes']) * 8 / dt / 1e6:.1f}"
                     f" Mb/s  queue {b['len_pkts']} pkts  marks {b['marked']}  drops "
                     f"{b['dropped']}")
        self.bar.update(self.task, completed=max(now, 0), now=text)

    def close(self) -> None:
        self.bar.stop()
        if self.file is not None:
            self.file.close()


# --- tables ----------------------------------------------------------------------------------


def tables_of(p: Plan, t0: float, clients: list[dict], servers: list[dict],
              records: list[dict]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The simulator's tables and summary from the agents' and the router's records."""
    import pyarrow as pa

    schemas = reference_schemas(p.scenario)
    w0, w1 = p.warmup_s, p.duration_s
    start = next(r for r in records if r["type"] == "start")
    shift = start["monotonic_ns"] / 1e9 - t0  # router time + shift = run time
    samples = {d: [dict(r, t_s=r["t_ns"] / 1e9 + shift) for r in records
                   if r["type"] in ("sample", "final") and r["dir"] == d] for d in _LINKS}
    record = p.scenario["topology"].get("record") or list(_LINKS.values())
    directions = [d for d, link in _LINKS.items() if link in record]
    flows, exchanges, summary = _traffic(p, clients, servers)
    cols: dict[str, dict[str, list[Any]]] = {
        "exchanges": exchanges, "flows": flows,
        "links": _links(p, samples, directions),
        "queue_counts": _queue_counts(samples, directions, w0, w1),
        "queue_samples": _rows(["link", "t_s", "queue_pkts", "queue_bytes"], [
            [_LINKS[d], s["t_s"], s["len_pkts"], s["len_bytes"]] for d in directions
            for s in samples[d] if s["type"] == "sample" and w0 <= s["t_s"] <= w1]),
        "aqm_samples": _rows(["link", "t_s", "variable", "value"], [
            [_LINKS[d], s["t_s"], k, float(v)] for d in directions for s in samples[d]
            if s["type"] == "sample" and w0 <= s["t_s"] <= w1 for k, v in s["aqm"].items()
            if aqm_variable_kept(p.scenario, k)]),
    }
    tables = {}
    for name in TABLES:
        schema = schemas[name]
        data = cols.get(name, {})
        n = len(next(iter(data.values()))) if data else 0
        tables[name] = pa.table(
            {f.name: pa.array(data[f.name], type=f.type)
             if f.name in data else pa.nulls(n, type=f.type) for f in schema}, schema=schema)
    window = w1 - w0
    for d in ("up", "down"):
        a, b = _at(samples[d], w0), _at(samples[d], w1)
        arrivals = _delta(a, b, "enqueued") + _delta(a, b, "dropped")
        summary[f"utilization_{d}"] = _delta(a, b, "busy_ns") / 1e9 / window
        summary[f"loss_rate_{d}"] = _ratio(_delta(a, b, "dropped") + _delta(a, b, "random_losses"),
                                           arrivals + _delta(a, b, "random_losses"))
        summary[f"mark_rate_{d}"] = _ratio(_delta(a, b, "marked"), arrivals)
        summary[f"mean_queue_pkts_{d}"] = _area(a, b, "area_pkts_ns")
        summary[f"delivered_bps_{d}"] = _delta(a, b, "delivered_bytes") * 8 / window
    summary.update({"name": p.scenario.get("name"), "mode": "testbed", "sim_s": w1,
                    "warmup_s": w0, "window_s": window})
    return tables, summary


def reference_schemas(scenario: dict[str, Any]) -> dict[str, Any]:
    """The simulator's schema of every table, from a 1 ms run of the same scenario."""
    from ._run import run

    short = {**scenario, "duration_s": 0.001, "warmup_s": 0.0}
    return {name: table.schema for name, table in run(short, 1, progress=False).tables.items()}


def _traffic(p: Plan, clients: list[dict], servers: list[dict]
             ) -> tuple[dict[str, list[Any]], dict[str, list[Any]], dict[str, Any]]:
    w0, w1 = p.warmup_s, p.duration_s
    got = {r["flow"]: r for c in clients for r in c["flows"]}
    # Planned flows, and the browsers' sessions (their rows carry their identity).
    planned = {f["flow"]: f for f in p.bulk + p.connections}
    planned |= {flow: r for flow, r in got.items() if "workload" in r}
    served = {r["flow"]: r for r in servers if "flow" in r}
    flow_rows, goodput = [], {"down": 0, "up": 0}
    for flow in sorted(got):
        r, f, s = got[flow], planned[flow], served.get(flow, {})
        down, up = _window_bytes(r, "bytes_received", w0), _window_bytes(r, "bytes_acked", w0)
        goodput["down"] += down
        goodput["up"] += up
        done = sum(1 for c in clients for e in c["exchanges"]
                   if e["flow"] == flow and e["end_s"] is not None)
        flow_rows.append([
            flow, f["workload"], p.scenario["workloads"][f["workload"]]["kind"], f["client"],
            f["server"], r["start_s"], math.nan if r["end_s"] is None else r["end_s"],
            bool(r["completed"]), f["rtt_ms"],
            f["rwnd_bytes"], r.get("ecn"), _sum(r.get("bytes_sent"), s.get("server_bytes_sent")),
            _sum(r.get("bytes_retrans"), s.get("server_bytes_retrans")), down + up,
            _sum(r.get("bytes_received"), r.get("bytes_acked")),
            _sum(r.get("total_rto"), s.get("server_total_rto")), r.get("syn_retx"),
            s.get("synack_retx"), _sum(r.get("received_ce"), s.get("server_received_ce")), done,
        ])
    flows = _rows(["flow", "workload", "kind", "client", "server", "start_s", "end_s",
                   "completed", "rtt_ms", "rwnd_bytes", "ecn", "bytes_sent", "retx_bytes",
                   "goodput_bytes", "delivered_bytes", "rtos", "syn_retx", "synack_retx",
                   "ce_received", "exchanges"], flow_rows)
    rows = sorted((e for c in clients for e in c["exchanges"] if w0 <= e["start_s"] < w1),
                  key=lambda e: (e["start_s"], e["flow"], e["seq_in_flow"]))
    ex_rows = []
    for i, e in enumerate(rows):
        f, r, s = planned[e["flow"]], got.get(e["flow"], {}), served.get(e["flow"], {})
        end = math.nan if e["end_s"] is None else e["end_s"]
        first = e["seq_in_flow"] == 0
        ex_rows.append([
            i, e["flow"], f["workload"], e["seq_in_flow"], f["client"], f["server"], e["start_s"],
            end, end - e["start_s"], (w1 if math.isnan(end) else end) - e["start_s"],
            e["request_bytes"], e["response_bytes"], f["rtt_ms"], r.get("ecn"),
            r.get("syn_retx") if first else 0, s.get("synack_retx") if first else 0,
            not math.isnan(end),
        ])
    exchanges = _rows(["exchange", "flow", "workload", "seq_in_flow", "client", "server",
                       "start_s", "end_s", "response_time_s", "elapsed_s", "request_bytes",
                       "response_bytes", "rtt_ms", "ecn", "syn_retx", "synack_retx",
                       "completed"], ex_rows)
    window = w1 - w0
    done = [x for x in ex_rows if x[-1]]
    offered = {"down": sum(x[11] for x in ex_rows), "up": sum(x[10] for x in ex_rows)}
    for f in p.bulk:
        if f["bytes"] and w0 <= f["start_s"] < w1:
            offered[f["direction"]] += f["bytes"]
    summary = {
        "exchanges_started": len(ex_rows), "exchanges_completed": len(done),
        "mean_response_time_s": sum(x[8] for x in done) / len(done) if done else math.nan,
        "flows_started": len(flow_rows),
        "flows_completed": sum(1 for x in flow_rows if x[7]),
        "goodput_bps": (goodput["down"] + goodput["up"]) * 8 / window,
        "goodput_bps_down": goodput["down"] * 8 / window,
        "goodput_bps_up": goodput["up"] * 8 / window,
        "offered_bps_down": offered["down"] * 8 / window,
        "offered_bps_up": offered["up"] * 8 / window,
    }
    return flows, exchanges, summary


def _window_bytes(r: dict[str, Any], key: str, w0: float) -> int:
    """A counter's growth in the window: from its value at the warm-up (0 for a connection
    opened later) to its value at the close or the end of the run."""
    if r.get(key) is None or (r["end_s"] is not None and r["end_s"] < w0):
        return 0
    base = (r.get("warmup_info") or {}).get(key, 0) if r["start_s"] < w0 else 0
    return int(r[key] - (base or 0))


def _links(p: Plan, samples: dict[str, list[dict]], directions: list[str]
           ) -> dict[str, list[Any]]:
    interval = p.scenario.get("metrics", {}).get("interval_s", 1.0)
    w0, w1 = p.warmup_s, p.duration_s
    kinds = ("syn", "synack", "ack", "data", "retx", "fin", "other")
    names = (["link", "t_start_s", "t_end_s", "arrivals_pkts", "delivered_pkts",
              "delivered_bytes", "utilization", "drops", "marks", "drops_early", "drops_forced",
              "drops_overflow", "marks_early", "marks_forced"]
             + [f"drops_{k}" for k in kinds] + [f"marks_{k}" for k in kinds]
             + ["random_losses", "mean_queue_pkts", "mean_queue_bytes"])
    rows = []
    for d in directions:
        k = 0
        while w0 + k * interval < w1 - 1e-9:
            t_a, t_b = w0 + k * interval, min(w0 + (k + 1) * interval, w1)
            a, b = _at(samples[d], t_a), _at(samples[d], t_b)
            span = (b["t_ns"] - a["t_ns"]) / 1e9 or 1.0

            def count(pattern: Callable[[str], bool], a: dict = a, b: dict = b) -> int:
                return sum(v for key, v in b["counts"].items() if pattern(key)) - sum(
                    v for key, v in a["counts"].items() if pattern(key))

            rows.append(
                [_LINKS[d], t_a, t_b, _delta(a, b, "enqueued") + _delta(a, b, "dropped"),
                 _delta(a, b, "delivered_pkts"), _delta(a, b, "delivered_bytes"),
                 _delta(a, b, "busy_ns") / 1e9 / span, _delta(a, b, "dropped"),
                 _delta(a, b, "marked"), _delta(a, b, "dropped_early"),
                 _delta(a, b, "dropped_forced"), _delta(a, b, "dropped_overflow"),
                 count(lambda key: key.endswith(".marked.early")),
                 count(lambda key: key.endswith(".marked.forced"))]
                + [count(lambda key, k=kind: key.startswith(f"{k}.dropped.")) for kind in kinds]
                + [count(lambda key, k=kind: key.startswith(f"{k}.marked.")) for kind in kinds]
                + [_delta(a, b, "random_losses"), _area(a, b, "area_pkts_ns"),
                   _area(a, b, "area_bytes_ns")])
            k += 1
    return _rows(names, rows)


def _queue_counts(samples: dict[str, list[dict]], directions: list[str], w0: float, w1: float
                  ) -> dict[str, list[Any]]:
    rows = []
    for d in directions:
        a, b = _at(samples[d], w0), _at(samples[d], w1)
        for key in sorted(b["counts"]):
            n = b["counts"][key] - a["counts"].get(key, 0)
            if n > 0:
                rows.append([_LINKS[d], *key.split("."), n])
    return _rows(["link", "kind", "outcome", "reason", "packets"], rows)


def _at(samples: list[dict], t: float) -> dict:
    """The last sample at or before run time ``t`` (the first one if none is)."""
    best = samples[0]
    for s in samples:
        if s["t_s"] <= t + 1e-9:
            best = s
        else:
            break
    return best


def _delta(a: dict, b: dict, key: str) -> int:
    return int(b[key]) - int(a[key])


def _area(a: dict, b: dict, key: str) -> float:
    dt = b["t_ns"] - a["t_ns"]
    return (int(b[key]) - int(a[key])) / dt if dt > 0 else math.nan


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def _sum(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _rows(names: list[str], rows: list[list[Any]]) -> dict[str, list[Any]]:
    return {n: [r[i] for r in rows] for i, n in enumerate(names)}
