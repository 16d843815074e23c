"""Seed 000's testbed (section 7, restated in seed 003) on real Linux stacks:
``ecnlab reproduce ecn-plus --testbed`` (root).

The seed's testbed part (``testbed.toml``: TPC-W browsers over persistent connections, RTTs
10-150 ms, RED* at 5 ms on a 10 Mb/s bottleneck) run by ``ecnlab testbed run`` instead of the
simulator: a two-tier bookstore in the server namespaces, emulated browsers in the client
namespaces (docs/testbed.md, "The TPC-W workload"). The runs:

1. the uncongested reference, 100 Mb/s drop-tail, with the browser count the simulator's
   calibration gives for 15 Mb/s; its measured down throughput is the calibration check, the
   operating point (when it is off by more than :data:`CALIBRATION_TOLERANCE`, the count is
   scaled and the reference run again, once); first seed only;
2. per seed, 10 Mb/s RED* (the study's parameters) with no ECN, ECN, and ECN+ (the router's
   ECN+ emulation of the servers' SYN-ACKs). A seed draws the host pairs' RTTs and the
   browsers' walks.

The study's testbed claims (section 7: the same :class:`ClaimSpec` objects the simulated
``testbed`` part decides) are decided on these runs by the same rule, paired by seed: with one
seed (quick) every claim is unresolved, since an interval needs two.

The hosts run Linux's TCP with the seed's settable values (NewReno, minimum RTO 1 s, initial
window 2, MSS 1460, no timestamps); what Linux cannot be made to do as the seed's stack did
(initial RTO 1 s, not 3 s; delayed ACKs from 40 ms, not 200 ms; SACK, PRR...) is listed in
the report from the testbed's own refusals of the seed's profile. It writes ``testbed-real.csv``,
``testbed-real.md``, ``testbed-real-runs.csv`` (one row per run), ``claims.json`` and the CDF
and CCDF figures beside the runs.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .. import analysis, store
from .._scenario import load_scenario
from .._testbed_plan import SETTABLE_TCP, TestbedUnsupported, normalize, plan
from ..store import read_run
from ._study import DECISION_RULE, format_estimate, format_value
from .ecn_plus import (
    AQMS,
    CLAIMS,
    DATA,
    ECN_MODES,
    HORIZON_S,
    TESTBED_MEAN_S,
    TESTBED_REFERENCE,
    TESTBED_THROUGHPUT,
    _response_measures,
    ccdf_figure,
    cdf_figure,
)
from .verdict import CONFIDENCE, verdict_counts

__all__ = ["SIMULATION", "TESTBED_CLAIMS", "Reproduction", "decide_claims", "linux_differences",
           "run", "scenario"]

SCENARIO = DATA / "testbed.toml"
TARGET_MBPS = 15.0
CALIBRATION_TOLERANCE = 0.05
"""The reference run's down throughput may differ from 15 Mb/s by this share."""
TIMING = {"quick": {"warmup_s": 30.0, "window_s": 120.0},
          "full": {"warmup_s": 150.0, "window_s": 600.0}}
"""Seconds of wall-clock time per run: the browsers start within 20.1 s (the RBE's stagger);
quick keeps four runs within 15 minutes."""
SEEDS = {"quick": 1, "full": 3}
"""Seeds per mode (``--seeds`` changes it): quick's one seed keeps within 15 minutes and
leaves every claim unresolved; each further seed adds three runs."""
RULE = DECISION_RULE + (" The testbed looks once: its seeds are fixed before the runs "
                        "(--seeds) and every interval is at 95%.")
TESTBED_CLAIMS = tuple(c for c in CLAIMS if c.parts == frozenset({"testbed"}))
"""The study's claims on its testbed (section 7), decided here on real stacks."""
SIMULATION = {  # docs/reproduction/ecn-plus.md, the quick run's testbed table (3 seeds)
    "no ECN": {"mean_s": 0.951, "nt": 88.5},
    "ECN": {"mean_s": 1.001, "nt": 99.2},
    "ECN+": {"mean_s": 0.704, "nt": 100.0},
    TESTBED_REFERENCE: {"mean_s": 0.0818, "nt": 15.0},
}
LABELS = {TESTBED_REFERENCE: "reference", "no ECN": "no-ecn", "ECN": "ecn", "ECN+": "ecn-plus"}


def _seed_scenario() -> dict[str, Any]:
    return load_scenario(SCENARIO)


def linux_tcp() -> dict[str, Any]:
    """The seed's TCP values the testbed can set (from its ``seed-2005`` profile), on Linux."""
    tcp = normalize(_seed_scenario())["tcp"]
    keep = {k: tcp[k] for k in SETTABLE_TCP if tcp.get(k) is not None
            and k not in ("ecn", "ecn_plus")}
    return {"profile": "linux", **keep}


def linux_differences() -> list[str]:
    """Where Linux's stack differs from the seed's: the testbed's refusals of the seed's
    profile, one line per field (the seed's value, why, Linux's)."""
    try:
        plan(_seed_scenario())
    except TestbedUnsupported as e:
        return [p for p in e.problems if not p.startswith("tcp.profile")]
    return []


def scenario(mode: str, browsers: int, timing: dict[str, float]) -> dict[str, Any]:
    """The testbed scenario of one run: ``mode`` is an ECN mode or the reference."""
    s = _seed_scenario()
    s.pop("load", None)
    s["tcp"] = linux_tcp()
    s["duration_s"] = timing["warmup_s"] + timing["window_s"]
    s["warmup_s"] = timing["warmup_s"]
    s["workloads"][0]["browsers"] = browsers
    bottleneck = s["topology"]["bottleneck"]
    if mode == TESTBED_REFERENCE:
        bottleneck["rate_bps"] = 100e6
        bottleneck["queue"]["aqm"] = {"kind": "droptail"}
    else:
        bottleneck["queue"]["aqm"] = {**AQMS["RED*"], "ecn": mode != "no ECN"}
        s["tcp"]["ecn"] = mode != "no ECN"
        s["tcp"]["ecn_plus"] = "seed" if mode == "ECN+" else "off"
    return s


def calibrated_browsers() -> int:
    """The simulator's calibrated browser count for 15 Mb/s (``testbed.calibration.json``)."""
    return int(load_scenario(SCENARIO)["workloads"][0]["browsers"])


def measures(run_dir: Path) -> dict[str, Any]:
    """The testbed table's measures of one run (as the simulated part's)."""
    r = read_run(run_dir)
    ex = r.tables["exchanges"].to_pandas()
    row: dict[str, Any] = _response_measures(ex, HORIZON_S["testbed"], first_exchanges=True)
    rate = r.scenario["topology"]["bottleneck"]["rate_bps"]
    s = r.summary
    row.update(
        delivered_mbps=s["delivered_bps_down"] / 1e6,
        nt=100 * s["delivered_bps_down"] / rate,
        loss_pct=100 * s["loss_rate_down"],
        mark_pct=100 * s["mark_rate_down"],
        queue_pkts=s["mean_queue_pkts_down"],
        **{k: s[k] for k in s if k.startswith("web_")},
    )
    return row


@dataclass
class Reproduction:
    """What ``run`` measured and decided."""

    table: pd.DataFrame  # one row per configuration, the seeds' means
    runs: pd.DataFrame  # one row per run
    claims: list[dict[str, Any]]  # claims.json's entries
    operating_point: dict[str, Any]


def run(out: Path, mode: str = "quick", *, seeds: int | None = None,
        progress: bool | None = None, say: Callable[[str], None] = print,
        database: str = "sqlite") -> Reproduction:
    """Runs the reference and, per seed, the three congested runs into ``out`` (each run
    folder reused when present and on the same database engine), writes the tables, the
    claims, the report and the figures. ``database``: the bookstore's engine (``ecnlab testbed
    run --database``). Needs root."""
    from .._testbed_mariadb import check_engine, check_installed
    from ..testbed import TestbedError
    from ..testbed_run import run_testbed

    n_seeds = SEEDS[mode] if seeds is None else seeds
    if n_seeds < 1:
        raise ValueError(f"seeds ({n_seeds}): at least 1")
    check_engine(database)
    if os.geteuid() != 0:
        raise TestbedError("the testbed needs root (network namespaces)")
    if database == "mariadb":
        check_installed()
    timing = TIMING[mode]
    out.mkdir(parents=True, exist_ok=True)
    for line in ["Linux's stack differs from the seed's (not emulated):", *linux_differences()]:
        say(line)

    def one(label: str, browsers: int, seed: int, run_dir: Path) -> dict[str, Any]:
        load_file = run_dir.with_name(run_dir.name + ".load-average.json")  # the run is sealed
        if database_of(run_dir) != database:  # none yet, or a run on the other engine
            say(f"{label}, seed {seed}: {browsers} browsers, "
                f"{timing['warmup_s'] + timing['window_s']:g} s, database {database}")
            run_testbed(scenario(label, browsers, timing), run_dir, seed, progress=progress,
                        force=True, database=database)
            # The machine's load average over the run's last 5 minutes (2 cores).
            load_file.write_text(json.dumps(os.getloadavg()[1]))
        m = measures(run_dir)
        m.update(seed=seed, ecn_mode_label=label, reference=label == TESTBED_REFERENCE,
                 browsers=browsers)
        m["load_average"] = json.loads(load_file.read_text()) if load_file.exists() else math.nan
        say(f"{label}, seed {seed}: delivered {m['delivered_mbps']:.2f} Mb/s down, mean "
            f"response {m['mean_s']:.3f} s, throughput {m['nt']:.1f}%, web tier busy "
            f"{100 * m.get('web_busy_fraction_max', math.nan):.1f}%, database time per page "
            f"{m.get('web_db_ms_mean', math.nan):.2f} ms, load average "
            f"{m['load_average']:.1f}")
        return m

    browsers = calibrated_browsers()
    reference = out / LABELS[TESTBED_REFERENCE]
    rows = [one(TESTBED_REFERENCE, browsers, 1, reference)]
    got = rows[0]["delivered_mbps"]
    calibration = (f"simulator's calibration: {browsers} browsers for {TARGET_MBPS:g} Mb/s; "
                   f"measured on the testbed at 100 Mb/s: {got:.2f} Mb/s")
    def reached(mbps: float) -> bool:
        return abs(mbps / TARGET_MBPS - 1) <= CALIBRATION_TOLERANCE

    if not reached(got):
        browsers = max(1, round(browsers * TARGET_MBPS / got))
        for suffix in ("", ".load-average.json"):
            (out / (reference.name + suffix)).rename(out / f"reference-uncalibrated{suffix}")
        rows = [one(TESTBED_REFERENCE, browsers, 1, reference)]
        got = rows[0]["delivered_mbps"]
        calibration += f"; rescaled to {browsers} browsers: {got:.2f} Mb/s"
    say(calibration)
    point = {"target_mbps": TARGET_MBPS, "tolerance": CALIBRATION_TOLERANCE,
             "measured_mbps": got, "browsers": browsers,
             "reached": reached(got)}
    for seed in range(1, n_seeds + 1):
        rows += [one(m, browsers, seed, out / f"seed-{seed}" / LABELS[m]) for m in ECN_MODES]
    runs = pd.DataFrame(rows)
    runs.to_csv(out / "testbed-real-runs.csv", index=False)
    table = table_of(runs)
    table.to_csv(out / "testbed-real.csv", index=False)
    claims = decide_claims(runs)
    _write_claims(out / "claims.json", mode, n_seeds, point, claims)
    km = {label: _km([out / LABELS[label]] if label == TESTBED_REFERENCE else
                     [out / f"seed-{s}" / LABELS[label] for s in range(1, n_seeds + 1)])
          for label in (TESTBED_REFERENCE, *ECN_MODES)}
    curves = {f"RED*, {m}": km[m] for m in ECN_MODES}
    cdf_figure("Testbed on real stacks", {"": curves}, {"": km[TESTBED_REFERENCE]}).savefig(
        out / "fig11-testbed-real-cdf.png", dpi=120)
    ccdf_figure(curves, km[TESTBED_REFERENCE], HORIZON_S["testbed"]).savefig(
        out / "fig12-testbed-real-ccdf.png", dpi=120)
    (out / "testbed-real.md").write_text(
        report(table, calibration, mode, browsers, n_seeds, claims, point, database))
    return Reproduction(table, runs, claims, point)


def database_of(run_dir: Path) -> str | None:
    """The database engine of a stored testbed run (None: no run there)."""
    try:
        manifest = json.loads((run_dir / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    return (manifest.get("mode_options") or {}).get("database", "sqlite")


def decide_claims(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """The study's testbed claims decided on the runs (one row per run: ``seed``,
    ``ecn_mode_label`` and the measures), one look at :data:`CONFIDENCE`."""
    return [c.evaluate({"testbed": runs}, CONFIDENCE) for c in TESTBED_CLAIMS]


def _write_claims(path: Path, mode: str, n_seeds: int, point: dict[str, Any],
                  claims: list[dict[str, Any]]) -> None:
    from .. import __version__

    document = {
        "study": "ecn-plus",
        "part": "testbed on real Linux stacks",
        "mode": mode,
        "ecnlab": __version__,
        "rule": RULE,
        "confidence": CONFIDENCE,
        "looks": 1,
        "interval_confidence": CONFIDENCE,
        "seeds": list(range(1, n_seeds + 1)),
        "counts": {"paper": verdict_counts(claims)},
        "operating_point": point,
        "claims": claims,
    }
    json.dumps(document, allow_nan=False)  # fail here, naming nothing half-written
    store._write_json_atomic(path, document)


def _km(run_dirs: list[Path]) -> pd.DataFrame:
    """The Kaplan-Meier estimate of the response times of the runs pooled."""
    ex = pd.concat([read_run(d).tables["exchanges"].to_pandas() for d in run_dirs])
    return analysis.kaplan_meier(ex["elapsed_s"], ex["completed"])


def table_of(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per configuration: the paper's numbers, the simulation's, the testbed's (the
    mean over its seeds; per run in ``runs``)."""
    out = []
    for label in (TESTBED_REFERENCE, *ECN_MODES):
        mine = runs[runs["ecn_mode_label"] == label]
        if mine.empty:
            continue
        m = mine.mean(numeric_only=True)
        name = label if label == TESTBED_REFERENCE else f"RED*, {label}"
        out.append({
            "configuration": name,
            "seeds": len(mine),
            "paper mean response (s)": TESTBED_MEAN_S.get(label, math.nan),
            "simulation mean response (s)": SIMULATION[label]["mean_s"],
            "testbed mean response (s, Kaplan-Meier to 120 s)": m["mean_s"],
            "testbed mean of first exchanges (s)": m["first_mean_s"],
            "testbed within 3 s (%)": m["f3"],
            "paper throughput (%)": TESTBED_THROUGHPUT.get(label, math.nan),
            "simulation throughput (%)": SIMULATION[label]["nt"],
            "testbed throughput (% of the bottleneck)": m["nt"],
            "delivered (Mb/s)": m["delivered_mbps"],
            "requests completed": m["served"],
            "exchanges": m["exchanges"],
            "unfinished": m["unfinished"],
            "drops (%)": m["loss_pct"],
            "marks (%)": m["mark_pct"],
            "mean queue (packets)": m["queue_pkts"],
            "server time per request (ms, mean / max)":
                f"{m.get('web_server_ms_mean', math.nan):.2f} / "
                f"{mine.get('web_server_ms_max', pd.Series([math.nan])).max():.1f}",
            "database time per page (ms, mean / max)":
                f"{m.get('web_db_ms_mean', math.nan):.2f} / "
                f"{mine.get('web_db_ms_max', pd.Series([math.nan])).max():.1f}",
            "busiest web tier busy (%)":
                100 * mine.get("web_busy_fraction_max", pd.Series([math.nan])).max(),
            "machine load average (5 min, 2 cores)": m["load_average"],
        })
    return pd.DataFrame(out)


def report(table: pd.DataFrame, calibration: str, mode: str, browsers: int, n_seeds: int,
           claims: list[dict[str, Any]], point: dict[str, Any], database: str = "sqlite") -> str:
    t = TIMING[mode]
    n = verdict_counts(claims)
    reached = "reached" if point["reached"] else "NOT reached"
    where = ("one private MariaDB server in its own host on the servers' side"
             if database == "mariadb" else "SQLite, one copy per server host")
    option = "" if database == "sqlite" else f" --database {database}"
    lines = [
        "# Seed 000's testbed on real Linux stacks",
        "",
        (f"`ecnlab reproduce ecn-plus --testbed --{mode} --seeds {n_seeds}{option}`: {browsers} "
         f"browsers, {t['warmup_s']:g} s warm-up and {t['window_s']:g} s window per run; the "
         f"testbed's numbers are means over {n_seeds} seed(s), per run in "
         f"`testbed-real-runs.csv`; the bookstore's database: {where}."),
        "",
        f"Calibration (the operating point, {reached}): {calibration}.",
        "",
        "Linux's stack differs from the seed's (not emulated):",
        "",
        *[f"* {d}" for d in linux_differences()],
        "",
        _markdown(table.set_index("configuration").T),
        "",
        "![CDF](fig11-testbed-real-cdf.png)",
        "![CCDF](fig12-testbed-real-ccdf.png)",
        "",
        "## The paper's testbed claims on real stacks",
        "",
        (f"Paper claims: {n['holds']} hold, {n['reversed']} reversed, {n['unresolved']} "
         f"unresolved ({n_seeds} seed(s)). {RULE} "
         "Everything in `claims.json`."),
        "",
        _markdown(pd.DataFrame(
            [[c["verdict"], format_value(c["paper"]), format_estimate(c), c["n_seeds"],
              c["criterion"]] for c in claims],
            index=[c["id"] for c in claims],
            columns=["verdict", "paper", "testbed [interval]", "seeds", "criterion"])),
        "",
    ]
    return "\n".join(lines)


def _markdown(df: pd.DataFrame) -> str:
    def cell(v: Any) -> str:
        return f"{v:.3g}" if isinstance(v, float) else str(v)

    rows = [["", *map(str, df.columns)], ["---"] * (len(df.columns) + 1)]
    rows += [[str(i), *map(cell, r)] for i, r in zip(df.index, df.itertuples(index=False))]
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)
