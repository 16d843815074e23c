"""The ``ecnlab`` command line: run, validate, calibrate, schema, bench, sweep, query, plot, report,
verify, reproduce, model, crosscheck, testbed.

Expected errors print one red line, without a traceback, and exit with code 2 for bad input
(invalid scenario, missing file, existing results) or 1 when the work itself failed (failed
runs, damaged results, a full or unwritable disk).

No ``from __future__ import annotations`` here: typer evaluates the parameter annotations at
run time, so they are spelled in a form Python 3.9 can evaluate (``Optional``, not ``X | None``).
"""
# ruff: noqa: FA100

import itertools
import json
import math
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape
from rich.table import Table

from . import _core
from ._cli_common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    command_group,
    err_console,
    out_console,
    reported,
)
from ._cli_common import fail as _fail
from ._result import Result, native_column_values
from ._run import run as run_scenario
from ._scenario import load_scenario, scenario_json
from .crosscheck_cli import crosscheck_app
from .models.cli import model_app
from .store import CorruptRunError, RunExistsError, StoreError, check_out_dir, write_run
from .testbed_cli import testbed_app

__all__ = ["app", "bench_tables", "median_response_time", "summary_table"]

app = command_group("ecnlab", "Packet-level laboratory for ECN, AQM and TCP congestion control.")
app.add_typer(model_app, name="model")
app.add_typer(crosscheck_app, name="crosscheck")
app.add_typer(testbed_app, name="testbed")

_SETS_HELP = "Override a scenario field, e.g. topology.bottleneck.rate_bps=10e6 (repeatable)."


def _load(path: Path, sets: Optional[list[str]]) -> dict[str, Any]:
    try:
        return load_scenario(path, sets or ())
    except (OSError, ValueError) as e:
        _fail(str(e))


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"ecnlab {_core.__version__}")
        raise typer.Exit()


ScenarioArg = Annotated[Path, typer.Argument(help="Scenario TOML file.", show_default=False)]
BudgetOpt = Annotated[
    Optional[str],
    typer.Option(
        "--memory-budget",
        metavar="SIZE",
        help="Refuse a run estimated to need more memory than this (e.g. 4GB, 512MB); "
        "default: $ECNLAB_MEMORY_BUDGET, else the machine's available memory.",
        show_default=False,
    ),
]
SetsOpt = Annotated[
    Optional[list[str]],
    typer.Option("--set", "-s", metavar="PATH=VALUE", help=_SETS_HELP, show_default=False),
]


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Packet-level laboratory for ECN, AQM and TCP congestion control."""


@app.command("run")
def run_cmd(
    scenario: ScenarioArg,
    out: Annotated[
        Optional[Path],
        typer.Option("--out", "-o", help="Folder to write the results to (default results/SCENARIO)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Run seed.")] = 1,
    sets: SetsOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a run already in --out.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar, no summary.")
    ] = False,
    memory_budget: BudgetOpt = None,
) -> None:
    """Run a scenario and write its tables (parquet) and manifest to --out."""
    out = out or Path("results") / scenario.stem
    config = _load(scenario, sets)
    try:
        # Fail before a long simulation, not after it.
        check_out_dir(out, force=force)
        result = run_scenario(
            config, seed, progress=False if quiet else None, memory_budget=memory_budget
        )
    except RunExistsError as e:
        _fail(f"{out} already holds a run; use --force to replace it" if e.replaceable else str(e))
    except ValueError as e:
        _fail(f"{scenario}: {e}")
    except MemoryError as e:
        # Stopped by the budget while it ran: not bad input, and nothing is written.
        _fail(f"{scenario}: {e}; nothing written", EXIT_FAILED)
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted; nothing written[/]")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    try:
        written = write_run(result, out, force=force)
    except RunExistsError as e:
        _fail(f"{out} already holds a run; use --force to replace it" if e.replaceable else str(e))
    except OSError as e:
        # The run is done but cannot be stored (disk full, no permission): not bad input.
        _fail(f"cannot write the run to {out}: {e}", EXIT_FAILED)
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted; nothing written[/]")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if not quiet:
        out_console.print(summary_table(result, written))


@app.command()
def validate(scenario: ScenarioArg, sets: SetsOpt = None, memory_budget: BudgetOpt = None) -> None:
    """Check a scenario (its fields, and its estimated memory against the budget) and print
    it as JSON with every default filled in."""
    from ._run import memory_budget_bytes

    config = _load(scenario, sets)
    try:
        text = scenario_json(config)
        normalized = _core.normalize(text)
        budget = memory_budget_bytes(memory_budget)
        if budget is not None:
            _core.check_budget(text, budget)
    except ValueError as e:
        _fail(f"{scenario}: {e}")
    typer.echo(json.dumps(json.loads(normalized), indent=2))


@app.command()
def calibrate(
    scenario: ScenarioArg,
    more_targets: Annotated[
        Optional[list[float]],
        typer.Argument(
            help="Further target loads (Mb/s), after --target-mbps.", show_default=False
        ),
    ] = None,
    target_mbps: Annotated[
        Optional[list[float]],
        typer.Option(
            "--target-mbps", "-t", help="Target offered load (Mb/s); e.g. --target-mbps 90 98 105."
        ),
    ] = None,
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out", "-o", help="Calibration file (default: SCENARIO.calibration.json beside it)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the first run.")] = 1,
    direction: Annotated[
        str, typer.Option("--direction", help="Loaded direction: down or up.")
    ] = "down",
    down_mbps: Annotated[
        Optional[float],
        typer.Option(
            "--down-mbps",
            help="Per-direction calibration: the down load (Mb/s) scaled by --down-workloads.",
        ),
    ] = None,
    up_mbps: Annotated[
        Optional[float],
        typer.Option(
            "--up-mbps", help="Per-direction calibration: the up load (Mb/s) by --up-workloads."
        ),
    ] = None,
    down_workloads: Annotated[
        Optional[list[int]],
        typer.Option("--down-workloads", help="Workload indices whose knobs set the down load."),
    ] = None,
    up_workloads: Annotated[
        Optional[list[int]],
        typer.Option("--up-workloads", help="Workload indices whose knobs set the up load."),
    ] = None,
    sets: SetsOpt = None,
) -> None:
    """Find the arrival rates that offer each target load on an uncongested 1 Gb/s link.

    With --down-mbps/--up-mbps each direction gets its own load, set by its own workloads'
    rate knobs (e.g. --down-mbps 105.3 --up-mbps 91.2 --down-workloads 0 --up-workloads 1).
    """
    from .calibration import calibrate as calibrate_fn

    if more_targets and not target_mbps:
        # One way to give targets: the values after --target-mbps (this argument only
        # collects the ones that follow the first).
        _fail(f"target loads ({' '.join(f'{t:g}' for t in more_targets)}) follow --target-mbps")
    targets = [*(target_mbps or []), *(more_targets or [])]
    per_direction = {d: v for d, v in (("down", down_mbps), ("up", up_mbps)) if v is not None}
    if per_direction:
        if targets:
            _fail("give either --target-mbps or --down-mbps/--up-mbps, not both")
        groups = {d: list(w) for d, w in (("down", down_workloads), ("up", up_workloads)) if w}
        if set(groups) != set(per_direction):
            _fail("give --down-workloads with --down-mbps and --up-workloads with --up-mbps")
        _calibrate_directions(scenario, per_direction, groups, out, seed, sets)
        return
    if not targets:
        _fail("give at least one target load: --target-mbps 90 98 105")
    with reported(scenario, interrupted="interrupted; nothing written"):
        config = load_scenario(scenario, sets or (), resolve_load=False)
        cal = calibrate_fn(config, targets, seed=seed, direction=direction, progress=None)
        path = out or scenario.with_name(scenario.stem + ".calibration.json")
        path.write_text(cal.to_json())
    table = Table(title=f"calibration of {scenario} ({cal.direction}, 1 Gb/s bottleneck)")
    table.add_column("target Mb/s", justify="right")
    table.add_column("factor", justify="right")
    for knob in cal.knobs:
        table.add_column(knob, justify="right")
    for t, f in cal.targets.items():
        table.add_row(f"{t:g}", f"{f:.4g}", *(f"{v:.6g}" for v in cal.knob_values(t).values()))
    out_console.print(table)
    measured = ", ".join(f"{p.factor:.4g} -> {p.mbps:.4g} Mb/s" for p in cal.points)
    out_console.print(f"runs: {measured}; slope {cal.slope_mbps:.6g} Mb/s per unit factor")
    out_console.print(f"written to {path}")


@app.command()
def warmup(
    scenario: ScenarioArg,
    duration_s: Annotated[
        float, typer.Option("--duration-s", help="Length of each run (s), from an empty network.")
    ] = 3000.0,
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Runs (seeds 1..N).")] = 4,
    bin_s: Annotated[float, typer.Option("--bin-s", help="Width of a load sample (s).")] = 10.0,
    direction: Annotated[
        str, typer.Option("--direction", help="Loaded direction: down or up.")
    ] = "down",
    sets: SetsOpt = None,
) -> None:
    """Measure the warm-up a workload needs: its delivered load over time on an uncongested
    1 Gb/s link from an empty network, and the end of the transient (MSER-5) per seed."""
    from .calibration import warmup as warmup_fn

    with reported(scenario):
        config = load_scenario(scenario, sets or ())
        w = warmup_fn(
            config,
            duration_s=duration_s,
            seeds=seeds,
            bin_s=bin_s,
            direction=direction,
            progress=None,
        )
    table = Table(title=f"delivered load of {scenario} ({w.direction}), mean of {seeds} seeds")
    table.add_column("from (s)", justify="right")
    table.add_column("Mb/s", justify="right")
    for t, mbps in w.table():
        table.add_row(f"{t:g}", f"{mbps:.2f}")
    out_console.print(table)
    cuts = ", ".join(f"seed {s}: {c:g} s" for s, c in w.truncation_s.items())
    out_console.print(f"MSER-5 end of transient: {cuts}")
    out_console.print(f"warm-up: {w.warmup_s:g} s; steady load after it: {w.steady_mbps:.2f} Mb/s")
    if w.at_limit:
        err_console.print(
            "[yellow]warning: the transient may last longer than half the run (MSER-5 at its "
            "limit); measure again with a larger --duration-s[/]"
        )


def _calibrate_directions(
    scenario: Path,
    targets: dict[str, float],
    groups: dict[str, list[int]],
    out: Optional[Path],
    seed: int,
    sets: Optional[list[str]],
) -> None:
    from .calibration import calibrate_directions

    with reported(scenario, interrupted="interrupted; nothing written"):
        config = load_scenario(scenario, sets or (), resolve_load=False)
        cal = calibrate_directions(config, [targets], groups, seed=seed, progress=None)
        path = out or scenario.with_name(scenario.stem + ".calibration.json")
        path.write_text(cal.to_json())
    table = Table(title=f"per-direction calibration of {scenario} (1 Gb/s bottleneck)")
    table.add_column("knob")
    table.add_column("group")
    table.add_column("value", justify="right")
    values = cal.knob_values(targets)
    for g, ks in cal.groups.items():
        for k in ks:
            table.add_row(k, g, f"{values[k]:.6g}")
    out_console.print(table)
    for p in cal.points:
        f = ", ".join(f"{g} x{v:.4g}" for g, v in p.factors.items())
        m = ", ".join(f"{d} {v:.4g} Mb/s" for d, v in p.mbps.items())
        out_console.print(f"run (seed {p.seed}): {f} -> {m}")
    out_console.print(f"written to {path}")


@app.command()
def schema() -> None:
    """Print the JSON Schema of scenarios."""
    typer.echo(_core.schema())


@app.command()
def bench(
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of records.")] = False,
    smoke: Annotated[
        bool,
        typer.Option("--smoke", help="10% of every duration: checks the cases run, measures nothing."),
    ] = False,
    only: Annotated[
        Optional[list[str]],
        typer.Option("--only", hidden=True, help="Run only this case: NAME or NAME:N."),
    ] = None,
    repeat: Annotated[
        int, typer.Option("--repeat", help="Runs per case; the median run is reported.")
    ] = 3,
    peers: Annotated[
        bool,
        typer.Option(
            "--peers",
            help="Also run the dumbbell-10m cases in ns-2.35 (if installed) and report "
            "ecnlab's speed as a ratio to it.",
        ),
    ] = False,
) -> None:
    """Measure simulator speed and memory on fixed scenarios (one subprocess per run)."""
    from . import bench as bench_mod
    try:
        cases = (
            [c for text in only for c in bench_mod.parse_case(text)] if only else bench_mod.CASES
        )
    except ValueError as e:
        _fail(str(e))
    cases = list(cases)
    if peers:
        from .crosscheck.run import Ns2NotFound, find_ns

        try:
            find_ns()
        except Ns2NotFound as e:
            err_console.print(f"[yellow]--peers: {escape(str(e))}; the ns-2 cases are skipped[/]")
        else:
            cases += bench_mod.peer_cases(cases)
    show_status = err_console.is_terminal

    def on_start(case: bench_mod.Case) -> None:
        if show_status:
            err_console.print(f"[dim]running {case.label}{' (smoke)' if smoke else ''}...[/]")

    with reported(errors=(bench_mod.BenchError, ValueError)):
        records = bench_mod.run_cases(cases, smoke=smoke, repeat=repeat, on_start=on_start)
    if as_json:
        typer.echo(json.dumps(records, indent=2))
        return
    for table in bench_tables(records, smoke=smoke):
        out_console.print(table)


def bench_tables(records: list[dict[str, Any]], *, smoke: bool = False) -> list[Table]:
    """The human tables of ``ecnlab bench``: the simulations, then (when run) the engine
    reference, the peers, memory at many connections and the fixed cost of a run."""
    pgo = "" if _core.built_with_pgo else ", built without its PGO profile"
    title = f"ecnlab {_core.__version__} benchmark{' (smoke)' if smoke else ''}{pgo}"
    sims = [r for r in records if r.get("kind", "simulation") == "simulation"]
    sims = [r for r in sims if r["scenario"] != "conns-1e5"]
    tables = []
    if sims:
        table = Table(title=title)
        table.add_column("scenario", no_wrap=True)
        for heading in ("flows", "events/s", "pkts/s", "sim/wall", "RSS MB", "Mb/s", "eng %"):
            table.add_column(heading, justify="right", no_wrap=True)
        table.add_column("link %", justify="right", no_wrap=True)
        for r in sims:
            of = [f"{r[k]:.0%}" if k in r else "" for k in ("of_engine_events", "of_link_pkts")]
            table.add_row(
                r["scenario"],
                str(r["n_flows"]),
                f"{r['events_per_s']:,.0f}",
                f"{r['bottleneck_pkts_per_s']:,.0f}",
                f"{r['sim_s_per_wall_s']:.1f}",
                f"{r['peak_rss_mb']:.0f}",
                f"{r['goodput_mbps']:.2f}",
                *of,
            )
        table.caption = (
            "pkts/s: data packets through the bottleneck per wall second (link-1g: every "
            "packet); sim/wall: simulated seconds per wall second; RSS: peak resident memory "
            "of the case's process; Mb/s: goodput; eng %: events/s as a share of the event "
            "queue's alone (engine-queue); link %: pkts/s as a share of link-1g's"
        )
        tables.append(table)
    engine = [r for r in records if r.get("kind") == "engine"]
    if engine:
        table = Table(title="event queue alone (hold model, 16-byte events)")
        for heading in ("pending events", "events/s"):
            table.add_column(heading, justify="right", no_wrap=True)
        for r in engine:
            table.add_row(f"{r['pending_events']:,}", f"{r['events_per_s']:,.0f}")
        tables.append(table)
    peers = [r for r in records if r.get("kind") == "ns2"]
    if peers:
        table = Table(title="peers: the dumbbell-10m cases in ns-2.35 (count-only script)")
        for heading in ("flows", "pkts/s", "wall s", "cpu s", "set-up s", "after set-up"):
            table.add_column(heading, justify="right", no_wrap=True)
        table.add_column("ecnlab / ns-2", justify="right", no_wrap=True)
        for r in peers:
            ratio = r.get("ecnlab_ratio")
            after = r.get("pkts_per_s_after_setup")
            table.add_row(
                str(r["n_flows"]),
                f"{r['bottleneck_pkts_per_s']:,.0f}",
                f"{r['wall_s']:.2f}",
                f"{r['cpu_s']:.2f}",
                f"{r['setup_s']:.2f}",
                "-" if after is None else f"{after:,.0f}",
                "-" if ratio is None else f"{ratio:.1f}",
            )
        table.caption = (
            "pkts/s: data packets that left ns-2's bottleneck queues (both directions) per wall "
            "second of the ns process; set-up: the same script ended at 1 ms; after set-up: "
            "pkts/s over the rest"
        )
        tables.append(table)
    memory = [r for r in records if r.get("scenario") == "conns-1e5"]
    if memory:
        table = Table(title="memory at many concurrent connections")
        for heading in ("connections open", "sending", "peak RSS MB", "baseline MB", "KiB/conn"):
            table.add_column(heading, justify="right", no_wrap=True)
        for r in memory:
            table.add_row(
                f"{r['open_conns']:,}",
                f"{r['sending_conns']:,}",
                f"{r['peak_rss_mb']:.0f}",
                f"{r['baseline_rss_mb']:.0f}",
                f"{r['kb_per_conn']:.2f}",
            )
        tables.append(table)
    overhead = [r for r in records if r.get("kind") == "command"]
    if overhead:
        table = Table(title="fixed cost of a run: `ecnlab run` of dumbbell-10m as a command")
        for heading in ("flows", "command s", "run's own s", "overhead s", "command RSS MB"):
            table.add_column(heading, justify="right", no_wrap=True)
        for r in overhead:
            table.add_row(
                str(r["n_flows"]),
                f"{r['wall_s']:.2f}",
                f"{r['core_s']:.3f}",
                f"{r['overhead_s']:.2f}",
                f"{r['peak_rss_mb']:.0f}",
            )
        tables.append(table)
    return tables


# --- summary of one run --------------------------------------------------------------


def summary_table(result: Result, written: Optional[Path] = None) -> Table:
    """The one-screen summary printed by ``ecnlab run``."""
    s = result.summary
    wall = float(s.get("wall_s", math.nan))
    sim_s = float(s.get("sim_s", result.scenario.get("duration_s", math.nan)))
    events = s.get("events", 0)
    name = str(result.scenario.get("name", ""))

    table = Table(title=escape(f"{name} (seed {result.seed})"), show_header=False)
    table.add_column("metric", style="bold")
    table.add_column("value", justify="right")
    rows = [
        ("simulated time", f"{sim_s:g} s (window {_num(s.get('window_s'), '{:g}')} s)"),
        ("wall time", f"{wall:.2f} s ({_ratio(sim_s, wall)} x real time)"),
        ("events", f"{events:,} ({_ratio(events, wall, '{:,.0f}')}/s)"),
        (
            "exchanges completed / started",
            f"{s.get('exchanges_completed', 0):,} / {s.get('exchanges_started', 0):,}",
        ),
        (
            "response time mean / median (completed)",
            f"{_ms(s.get('mean_response_time_s'))} / {_ms(median_response_time(result))}",
        ),
    ]
    # One row per recorded link (the dumbbell's are "down" and "up"), in the run's order.
    for link in [k.removeprefix("utilization_") for k in s if k.startswith("utilization_")]:
        rates = [_pct(s.get(f"{m}_{link}")) for m in ("utilization", "loss_rate", "mark_rate")]
        rows.append((escape(f"{link}: utilization / loss / marks"), " / ".join(rates)))
    rows.append(("goodput", _bps(s.get("goodput_bps"))))
    if written is not None:
        rows.append(("written to", escape(str(written))))
    for label, value in rows:
        table.add_row(label, value)
    return table


def median_response_time(result: Result) -> float:
    """Median response time of the completed exchanges in the window (NaN if none).

    As ``pyarrow.compute.quantile(q=0.5)`` (linear interpolation; NaN and nulls ignored),
    from the core's columns when the result still holds them, so ``ecnlab run`` needs no
    pyarrow for its summary."""
    native = result.native_tables()
    if native is not None:
        ex = native.get("exchanges")
        if ex is None or "response_time_s" not in ex:
            return math.nan
        values = native_column_values(ex["response_time_s"])
        if "completed" in ex:
            values = itertools.compress(values, native_column_values(ex["completed"]))
        times = sorted(t for t in values if not math.isnan(t))
        if not times:
            return math.nan
        position = (len(times) - 1) * 0.5
        low = int(position)
        if low == position:
            return float(times[low])
        return float(times[low] + (times[low + 1] - times[low]) * (position - low))
    import pyarrow.compute as pc

    ex = result.tables.get("exchanges")
    if ex is None or ex.num_rows == 0 or "response_time_s" not in ex.column_names:
        return math.nan
    times = ex.column("response_time_s")
    if "completed" in ex.column_names:
        times = pc.filter(times, ex.column("completed"))
    times = pc.drop_null(times)
    if len(times) == 0:
        return math.nan
    median = pc.quantile(times, q=0.5).to_pylist()[0]
    return math.nan if median is None else float(median)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _num(x: Any, fmt: str) -> str:
    return fmt.format(x) if _is_number(x) else "-"


def _ratio(a: Any, b: Any, fmt: str = "{:.2f}") -> str:
    return fmt.format(a / b) if _is_number(a) and _is_number(b) and b > 0 else "-"


def _pct(x: Any) -> str:
    return f"{100 * x:.2f} %" if _is_number(x) else "-"


def _ms(x: Any) -> str:
    return f"{1000 * x:.1f} ms" if _is_number(x) else "-"


def _bps(x: Any) -> str:
    if not _is_number(x):
        return "-"
    for unit, scale in (("Gb/s", 1e9), ("Mb/s", 1e6), ("kb/s", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.2f} {unit}"
    return f"{x:.0f} b/s"


# --- sweeps ----------------------------------------------------------------------------

ResultsArg = Annotated[
    Path, typer.Argument(help="A sweep folder (--out of ecnlab sweep).", show_default=False)
]


# Options of every command that runs sweeps (sweep, reproduce).
JobsOpt = Annotated[
    Optional[int], typer.Option("--jobs", "-j", min=1, help="Runs at once (default: CPUs).")
]
BackendOpt = Annotated[str, typer.Option("--backend", help="local (process pool) or dask.")]
SchedulerOpt = Annotated[
    Optional[str],
    typer.Option("--scheduler", help="Dask scheduler address; default: a LocalCluster."),
]


@app.command()
def sweep(
    sweep_file: Annotated[Path, typer.Argument(help="Sweep TOML file.", show_default=False)],
    out: Annotated[
        Optional[Path],
        typer.Option("--out", "-o", help="Sweep folder (created; resumed; default results/SWEEP)."),
    ] = None,
    jobs: JobsOpt = None,
    backend: BackendOpt = "local",
    scheduler: SchedulerOpt = None,
    retries: Annotated[
        int, typer.Option("--retries", min=0, help="Retries of a run whose worker died.")
    ] = 2,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check every run and list them; run nothing.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    new_definition: Annotated[
        bool,
        typer.Option(
            "--new-definition",
            help="Replace the sweep --out holds even if this one differs (another [set], "
            "base or derived setting); its runs not in this sweep move to superseded/.",
        ),
    ] = False,
    memory_budget: BudgetOpt = None,
) -> None:
    """Run every run of a sweep not yet stored in --out (resumes; retries failed runs;
    recomputes damaged ones)."""
    from . import sweep as sweep_mod

    out = out or Path("results") / sweep_file.stem
    try:
        definition = sweep_mod.load_sweep(sweep_file)
        if dry_run:
            specs = definition.runs()
            out_console.print(_dry_run_table(definition, specs))
            return
    except (OSError, ValueError) as e:
        _fail(str(e))
    if scheduler and backend != "dask":
        _fail("--scheduler needs --backend dask")
    try:
        report = sweep_mod.run_sweep(
            definition,
            out,
            jobs=jobs,
            backend=backend,
            scheduler=scheduler,
            retries=retries,
            progress=False if quiet else None,
            new_definition=new_definition,
            memory_budget=memory_budget,
        )
    except ValueError as e:
        _fail(str(e))
    except OSError as e:
        # Writing the sweep folder failed (disk full, no permission): not bad input.
        _fail(f"the sweep into {out} failed: {e}", EXIT_FAILED)
    except KeyboardInterrupt:
        err_console.print(
            f"[yellow]interrupted; the runs stored in {escape(str(out))} are kept, "
            "run the same command again to resume[/]"
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    line = (
        f"{report.total} runs: {report.done} done, {report.skipped} already stored, "
        f"{report.failed} failed ({report.retried} retries) in {report.wall_s:.1f} s -> {out}"
    )
    if report.damaged:
        line += f"; {report.damaged} damaged stored runs moved to {out / 'damaged'} and rerun"
    if report.superseded:
        line += f"; {report.superseded} runs of the earlier definition moved to superseded/"
    err_console.print(escape(line), soft_wrap=True)
    if report.failed:
        first = next(iter(report.errors.values()))
        err_console.print(
            f"[bold red]error:[/] [red]{report.failed} of {report.total} runs failed; "
            f"errors in {escape(str(out / 'errors'))}/ (first: {escape(first.splitlines()[0])}); "
            "run the same command again to retry them[/]",
            soft_wrap=True,
        )
        raise typer.Exit(1)


def _dry_run_table(definition: Any, specs: list[Any]) -> Table:
    table = Table(title=escape(f"{definition.name}: {len(specs)} runs (dry run)"))
    table.add_column("run_id", no_wrap=True)
    table.add_column("seed", justify="right")
    for axis in definition.axes:
        table.add_column(escape(axis.name))
    for spec in specs:
        labels = [spec.labels[a.name] or "-" for a in definition.axes]
        tag = " (reference)" if spec.reference else ""
        table.add_row(spec.run_id + tag, str(spec.seed), *(escape(x) for x in labels))
    return table


def _open(results: Path, *, confined: bool = False) -> Any:
    from .store import open_results

    try:
        return open_results(results, confined=confined)
    except CorruptRunError as e:
        _fail(str(e), EXIT_FAILED)
    except OSError as e:
        _fail(str(e))


@app.command()
def query(
    results: ResultsArg,
    sql: Annotated[str, typer.Argument(help="SQL over the views runs, exchanges, flows...")],
    csv: Annotated[bool, typer.Option("--csv", help="Print CSV instead of a table.")] = False,
    full_access: Annotated[
        bool,
        typer.Option(
            "--full-access",
            help="Run any SQL with DuckDB's full access (COPY TO, ATTACH, INSTALL, files "
            "and network anywhere); by default a query only reads, and only inside DIR.",
        ),
    ] = False,
) -> None:
    """Query a sweep folder with DuckDB SQL (views: runs, axes, sweep and one per table).

    The store is verified first and opened read-only: only SELECT (and EXPLAIN) statements,
    no external access, files readable only inside DIR, no extensions."""
    import duckdb

    from .store import check_read_only

    con = _open(results, confined=not full_access)
    try:
        if not full_access:
            check_read_only(sql)
        frame = con.execute(sql).df()
    except ValueError as e:
        _fail(f"query refused: {e}")
    except duckdb.Error as e:
        _fail(f"query failed: {' '.join(str(e).split())}")
    if csv:
        typer.echo(frame.to_csv(index=False), nl=False)
        return
    table = Table()
    for column in frame.columns:
        table.add_column(escape(str(column)), no_wrap=True)
    for row in frame.itertuples(index=False):
        table.add_row(*(escape(_cell(v)) for v in row))
    out_console.print(table)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


@app.command()
def plot(
    results: ResultsArg,
    kind: Annotated[
        str, typer.Option("--kind", "-k", help="cdf, ccdf, queue, goodput, fairness, throughput.")
    ] = "cdf",
    by: Annotated[Optional[str], typer.Option("--by", help="Axis drawn as curves/bars.")] = None,
    facet: Annotated[Optional[str], typer.Option("--facet", help="Axis drawn as panels.")] = None,
    out: Annotated[
        Optional[Path], typer.Option("--out", "-o", help="Image file (default DIR/KIND.png).")
    ] = None,
) -> None:
    """Draw one figure of a sweep (PNG, SVG or PDF by the file's extension)."""
    from . import plots

    con = _open(results)
    target = out or results / f"{kind}.png"
    try:
        figure = plots.plot(con, kind, by, facet)
        figure.savefig(target, dpi=120)
    except (ValueError, OSError) as e:
        _fail(str(e))
    err_console.print(f"wrote {escape(str(target))}")


@app.command()
def report(
    results: ResultsArg,
    out: Annotated[
        Optional[Path], typer.Option("--out", "-o", help="HTML file (default DIR/report.html).")
    ] = None,
) -> None:
    """Write one self-contained HTML page: figures, tables, sweep definition, versions."""
    from .report import write_report

    try:
        written = write_report(results, out)
    except CorruptRunError as e:
        _fail(str(e), EXIT_FAILED)
    except (OSError, StoreError) as e:
        _fail(str(e))
    err_console.print(f"wrote {escape(str(written))}")


@app.command("verify")
def verify_cmd(results: ResultsArg) -> None:
    """Check every stored run of a sweep folder (or a run folder) against its manifest (each
    table's size and SHA-256) and list every damaged run; exit 1 if any is."""
    from .store import verify

    try:
        found = verify(results)
    except OSError as e:
        _fail(str(e))
    for run_dir, problems in found.damaged.items():
        out_console.print(escape(f"damaged {run_dir}: {'; '.join(problems)}"), soft_wrap=True)
    for run_dir in found.legacy:
        out_console.print(
            escape(f"unhashed {run_dir}: written before format 2; read in full, intact"),
            soft_wrap=True,
        )
    for leftover in found.leftovers:
        out_console.print(
            escape(f"leftover {leftover}: an interrupted write (removed by the next one)"),
            soft_wrap=True,
        )
    if found.ok:
        err_console.print(escape(found.summary()), soft_wrap=True)
        return
    _fail(found.summary(), EXIT_FAILED)


def _reproduce_testbed(study: str, mode: str, out: Optional[Path], quiet: bool,
                       seeds: Optional[int], database: str = "sqlite") -> None:
    """``reproduce ecn-plus --testbed``: seed 000's testbed part on real stacks."""
    if study != "ecn-plus":
        _fail(f"--testbed: only ecn-plus has a testbed part on real stacks (not {study})")
    from .reproduce import ecn_plus_testbed
    from .reproduce.verdict import verdict_counts
    from .testbed import TestbedError

    folder = out or Path(f"results/ecn-plus-testbed-{mode}")
    try:
        done = ecn_plus_testbed.run(folder, mode, seeds=seeds,
                                    progress=False if quiet else None,
                                    say=lambda line: err_console.print(escape(line),
                                                                       soft_wrap=True),
                                    database=database)
    except TestbedError as e:
        _fail(str(e), EXIT_FAILED)
    except (OSError, ValueError) as e:
        _fail(str(e))
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted; finished runs are kept and reused[/]")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    out_console.print(escape(done.table.set_index("configuration").T.to_string()), soft_wrap=True)
    _print_claims("Seed 000's testbed claims on real stacks", done.claims)
    n = verdict_counts(done.claims)
    reached = "reached" if done.operating_point["reached"] else "NOT reached"
    err_console.print(escape(
        f"paper claims: {n['holds']} hold, {n['reversed']} reversed, {n['unresolved']} "
        f"unresolved ({len(done.runs) - 1} runs of {done.runs['seed'].max()} "
        f"seed(s)); operating point {reached}; written to {folder}"), soft_wrap=True)


def _print_claims(title: str, claims: list[dict]) -> None:
    """The claims' verdicts beside the paper's values, one row each."""
    from . import reproduce as repro

    table = Table(title=escape(title))
    for col in ("id", "verdict", "paper", "ours [interval] (all in claims.json)", "n"):
        table.add_column(col, overflow="fold")
    style = {"holds": "green", "reversed": "bold red", "unresolved": "yellow"}
    for c in claims:
        table.add_row(
            escape(c["id"] + (" (ours)" if c["origin"] == "ours" else "")),
            f"[{style[c['verdict']]}]{c['verdict']}[/]",
            escape(repro.format_value(c["paper"], limit=60)),
            escape(repro.format_estimate(c, limit=80)),
            "-" if c.get("n_seeds") is None else str(c["n_seeds"]),
        )
    out_console.print(table)


@app.command()
def reproduce(
    study: Annotated[
        str,
        typer.Argument(help="The study: ecn-plus, heterogeneous, abe, dcn or l4s.", show_default=False),
    ],
    quick: Annotated[
        bool, typer.Option("--quick", help="Short runs that decide every claim (default).")
    ] = False,
    full: Annotated[
        bool, typer.Option("--full", help="The paper's durations and grids; small spreads.")
    ] = False,
    out: Annotated[
        Optional[Path],
        typer.Option("--out", "-o", help="Output folder (default results/STUDY-MODE; resumed)."),
    ] = None,
    jobs: JobsOpt = None,
    backend: BackendOpt = "local",
    scheduler: SchedulerOpt = None,
    looks: Annotated[
        Optional[int],
        typer.Option(
            "--looks",
            min=1,
            help=(
                "Stop after this many looks (default: as many as the seed plan allows); "
                "claims unresolved then stay unresolved, intervals keep the plan's level."
            ),
        ),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
    new_definition: Annotated[
        bool,
        typer.Option(
            "--new-definition",
            help="Resume a folder whose runs this version of ecnlab defines differently "
            "(other run ids): they are replaced, and moved to each part's superseded/.",
        ),
    ] = False,
    testbed: Annotated[
        bool,
        typer.Option(
            "--testbed",
            help=(
                "ecn-plus only, as root: run the seed's testbed part on real Linux stacks "
                "(ecnlab testbed run) instead of the simulator (docs/testbed.md)."
            ),
        ),
    ] = False,
    seeds: Annotated[
        Optional[int],
        typer.Option(
            "--seeds",
            min=1,
            help=(
                "With --testbed: seeds of the congested runs (default 1 quick, 3 full); a "
                "claim needs two to be decided."
            ),
        ),
    ] = None,
    database: Annotated[
        Optional[str],
        typer.Option("--database", metavar="[sqlite|mariadb]",
                     help="With --testbed: the bookstore's database (default sqlite; mariadb: "
                     "a MariaDB server, docs/testbed.md)."),
    ] = None,
) -> None:
    """Reproduce a seed study: run its sweeps (resumable), then write claims.json,
    figures/, tables/ and report.html, and print every claim beside the paper's value."""
    from . import reproduce as repro

    if quick and full:
        _fail("--quick and --full exclude each other")
    if new_definition and testbed:
        _fail("--new-definition: not with --testbed (its runs are not a sweep's)")
    if database is not None and not testbed:
        _fail("--database: only with --testbed (the testbed's bookstore)")
    if testbed:
        _reproduce_testbed(study, "full" if full else "quick", out, quiet, seeds,
                           database or "sqlite")
        return
    if seeds is not None:
        _fail("--seeds is for --testbed; a simulated study adds seeds itself (--looks)")
    if scheduler and backend != "dask":
        _fail("--scheduler needs --backend dask")
    mode = "full" if full else "quick"
    try:
        chosen = repro.get_study(study)
    except KeyError as e:
        _fail(str(e.args[0]))

    def on_part(i: int, n: int, name: str, runs: int, look: int) -> None:
        again = f" (look {look}: more seeds for unresolved claims)" if look > 1 else ""
        err_console.print(escape(f"[{i}/{n}] {name}: {runs} runs{again}"), soft_wrap=True)

    try:
        report = repro.reproduce(
            chosen,
            mode,
            out,
            jobs=jobs,
            backend=backend,
            scheduler=scheduler,
            progress=False if quiet else None,
            on_part=on_part,
            max_looks=looks,
            new_definition=new_definition,
        )
    except ValueError as e:
        _fail(str(e))
    except OSError as e:  # writing the results failed (a full disk): not bad input
        _fail(str(e), EXIT_FAILED)
    except KeyboardInterrupt:
        err_console.print(
            "[yellow]interrupted; the runs stored so far are kept, "
            "run the same command again to resume[/]"
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    _print_claims(f"{chosen.title}: {mode} reproduction", report.claims)
    n = report.counts("paper")
    op = report.operating_point
    reached = (
        ""
        if op is None
        else (
            "; operating point reached"
            if op.ok
            else "; operating point NOT reached (see claims.json)"
        )
    )
    err_console.print(
        escape(
            f"paper claims: {n['holds']} hold, {n['reversed']} reversed, {n['unresolved']} "
            f"unresolved{reached}; {report.wall_s:.0f} s; claims.json, figures/, tables/, "
            f"report.html in {report.out}; write-up {chosen.doc}"
        ),
        soft_wrap=True,
    )
    if report.failed_runs:
        err_console.print(
            f"[bold red]error:[/] [red]{report.failed_runs} runs failed (errors/ in each "
            "sweep folder); run the same command again to retry them[/]"
        )
        raise typer.Exit(1)
