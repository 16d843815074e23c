"""Measure the suite's spreads, or run it and write docs/validation.md.

    python tests/crosscheck/validation.py --spread 4 red-ecn pi-ecn   # seeds 1..4 of each
    python tests/crosscheck/validation.py --doc docs/validation.md   # the whole suite

``--spread`` prints, per check, the mean and seed-to-seed standard deviation of each side over
seeds 1..N and stores them in spread.json, from which the ``within_spread`` tolerances of
cases.py are computed. ``--doc`` runs every case with its
own seeds and writes the table: the numbers in docs/validation.md are those of that run.
At most two cases run at once (``--jobs``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import statistics
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases import CASES, SPREAD_FILE, Case, by_name, run_case


def _spread(case: Case, n: int) -> Case:
    return replace(case, seeds=tuple(range(1, n + 1)))


def _measure(case: Case) -> dict[str, Any]:
    return run_case(case, verdicts=False)


def spread(names: list[str], n: int, jobs: int) -> None:
    cases = [by_name()[name] for name in names] if names else list(CASES)
    with ProcessPoolExecutor(jobs) as pool:
        results = list(pool.map(_measure, [_spread(c, n) for c in cases]))
    data = json.loads(SPREAD_FILE.read_text())
    if n != data["seeds"]:
        raise SystemExit(
            f"{SPREAD_FILE.name} holds spreads over {data['seeds']} seeds; use --spread {data['seeds']}"
        )
    for case, result in zip(cases, results):
        print(f"== {case.name} (seeds 1..{n})")
        for check in case.checks:
            a = [m[0].get(check.measure, math.nan) for m in result["per_seed"]]
            b = [m[1].get(check.measure, math.nan) for m in result["per_seed"]]
            sa = statistics.stdev(a) if n > 1 else math.nan
            sb = statistics.stdev(b) if n > 1 else math.nan
            print(
                f"  {check.measure:26s} ns-2 {statistics.mean(a):.5g} sd {sa:.2g}   "
                f"ecnlab {statistics.mean(b):.5g} sd {sb:.2g}"
            )
            data["spread"][f"{case.name}|{check.measure}"] = [
                float(f"{statistics.mean(a):.5g}"), float(f"{sa:.2g}"),
                float(f"{statistics.mean(b):.5g}"), float(f"{sb:.2g}"),
            ]  # fmt: skip
    measured_at = f"{_commit()} (ecnlab) and {_ns2_version()}, {datetime.date.today()}"
    if names:
        # Only these cases were measured now: the others keep the provenance they had.
        by_case = data.setdefault("measured_at_by_case", {})
        by_case.update({case.name: measured_at for case in cases})
    else:
        data["measured_at"] = measured_at
        data.pop("measured_at_by_case", None)
    SPREAD_FILE.write_text(json.dumps(data, indent=1) + "\n")
    print(f"spreads written to {SPREAD_FILE}")


def _commit() -> str:
    """The checked-out commit (the runs' ecnlab)."""
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        check=False,
        capture_output=True,
        text=True,
        cwd=SPREAD_FILE.parent,
    )
    return f"commit {out.stdout.strip()}" if out.returncode == 0 else "an unknown commit"


def _ns2_version() -> str:
    out = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Version}", "ns2"], check=False, capture_output=True, text=True
    )
    return f"Debian's ns2 {out.stdout.strip()}" if out.returncode == 0 else "ns-2.35"


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "-"
    return f"{x:.4g}"


def _diff(ns2: float, ecnlab: float) -> str:
    if math.isnan(ns2) or math.isnan(ecnlab):
        return "-"
    if ns2 == 0:
        return "0" if ecnlab == 0 else "-"
    return f"{100 * (ecnlab - ns2) / abs(ns2):+.1f} %"


def doc(path: Path, jobs: int) -> int:
    start = datetime.datetime.now()
    with ProcessPoolExecutor(jobs) as pool:
        results = list(pool.map(run_case, CASES))
    wall = (datetime.datetime.now() - start).total_seconds()
    lines = [_HEAD.strip(), ""]
    lines.append(
        "| scenario | measure | ns-2 | ecnlab | difference | criterion | verdict | explanation |"
    )
    lines.append("|---|---|---|---|---|---|---|---|")
    failed = 0
    for case, result in zip(CASES, results):
        for row in result["rows"]:
            failed += not row["ok"]
            lines.append(
                f"| `{case.name}` | `{row['measure']}` | {_fmt(row['ns2'])} | "
                f"{_fmt(row['ecnlab'])} | {_diff(row['ns2'], row['ecnlab'])} | "
                f"{row['criterion']} | {row['verdict']} | {row['why']} |"
            )
    lines += ["", "## The scenarios", ""]
    lines.append("| scenario | exercises | seeds | rerun by hand |")
    lines.append("|---|---|---|---|")
    for case in CASES:
        seeds = ", ".join(map(str, case.seeds))
        lines.append(f"| `{case.name}` | {case.about} | {seeds} | `{case.command()}` |")
    lines += [
        "",
        _TAIL.strip().format(
            date=start.strftime("%Y-%m-%d"),
            wall=wall,
            rows=sum(len(c.checks) for c in CASES),
            cases=len(CASES),
            failed=failed,
        ),
        "",
    ]
    path.write_text("\n".join(lines))
    print(f"wrote {path}: {len(CASES)} cases, {failed} failing rows, {wall:.0f} s")
    return 1 if failed else 0


_HEAD = """
# Validation against ns-2.35

The seed studies ran on ns-2 (000 and 001 in full, 002 for its model figure; 004's HTTP
generator is ns-2's PackMime). This page compares ecnlab with ns-2.35 (Debian's `ns2`
package) on small scenarios, each exercising one model and then models in combination:
`ecnlab crosscheck ns2` translates the scenario into an ns-2 script
(`python/ecnlab/crosscheck/`), runs both simulators with the same seed and reads both into the
same tables, so every measure below is computed by one function for both sides
(`python/ecnlab/crosscheck/compare.py`). The suite is `tests/crosscheck/` (run by
`python -m pytest -q`, so by `.ci/run`); each row's criterion is fixed in
`tests/crosscheck/cases.py`: *agree* within a tolerance justified by the measured
seed-to-seed spread of both simulators (or exactly, for deterministic runs), or a *documented
difference*, asserted, with its evidence: the ns-2 source line, and where possible a row
that removes the cause and agrees. The table is generated by a run of the suite (see the end
of the page), not written by hand.

Differences found by this comparison and fixed in ecnlab (each with a unit test at the
endpoint): an ECN echo on the ACK of exactly the data outstanding at the last reduction was
taken as new (a second reduction for one mark); the ECN reduction halved the data in flight
*after* the echoing ACK, one segment more than RFC 3168's halving; CWR followed only an ECN
reduction, where RFC 3168 6.1.2 sends it after a reduction "for any reason", so a receiver kept
echoing a mark that a fast retransmit or a timeout had already answered and the sender reduced a
second time for it (found by tracing `red-ecn-drop-above-max-fulltcp`: ecnlab made 10-20 % more
ECN reductions per flow than ns-2 from the same number of marks, and its RED average was 0.9 %
lower). And ns-2's RED rule never
to signal while the queue holds at most one packet is now an option (`min_queue_pkts = 2`,
docs/models/red.md); the RED scenarios use it, and `red-ecn-drop-above-max-no-min-queue`
shows what it changes. ns-2's ECN response (FullTcp halves its window whatever its size and,
below one segment, waits for its retransmission timer) is an option too
(`tcp.ecn_response = "ns2"`, docs/models/ecn.md): `red-star-above-max` shows RFC 3168's
response against ns-2's, `red-star-above-max-ns2-response` the option against ns-2's. So is
FullTcp's end of a retransmission timer's backoff at every ACK of new data
(`tcp.rto_backoff_end = "new_ack"`; ecnlab's default keeps it until an RTT sample, as RFC 6298
with Karn's algorithm): `red-ecn-drop-above-max-fulltcp`, `ecn-plus-fulltcp` and
`timeouts-fulltcp-timers` use it.
Tracing the rows these explain found two more differences: the option's wait after an echo
below one segment backed the timer off at its end, which ns-2 does not when nothing is
outstanding (fixed); and FullTcp restarts from its initial window after an idle period longer
than srtt + 4 rttvar (`slow_start_restart_`, so a sender back from such a wait sends two
segments, not one), which ecnlab does not model: the translation turns it off. ecnlab's
higher utilisation in cases with windows of a few segments comes from FullTcp's answer to a
loss, 4.4BSD Reno's (ssthresh from cwnd in whole segments, nothing new at the third duplicate
ACK, growth on the ACK that ends recovery): first taken for NewReno's partial-ACK rule, it was
traced by comparing both simulators' bottleneck traces (ns-2 sends more single-packet rounds
and more back-to-back pairs) and is now an option (`tcp.loss_response = "ns2"`,
docs/models/tcp.md), with which `timeouts-fulltcp` and `timeouts-fulltcp-reno` agree.

Measures (docs/results.md for the tables they come from): `utilization_*`, `loss_rate_*`,
`mark_rate_*`, `signal_rate_*` (drops and marks per arrival), `mean_queue_pkts_*` over the
measurement window per bottleneck direction; `arrivals_up` (packets entering the up queue:
mostly ACKs); `jain_bulk` (Jain's index of the bulk flows' goodputs); `retx_share`
(retransmitted over sent payload); `timeouts_per_flow`, `ecn_reductions_per_flow`;
`response_time_*_s` over completed exchanges that started in the window;
`handshake_retx_share` and `handshake_wait_mean_s` (exchanges whose SYN or SYN-ACK was
resent, and their wait); `marks_synack`, `drops_synack` (counts); `aqm_*` (the AQM's sampled
average queue, probability and final max_p).

## The table
"""

_TAIL = """
## How this page was made, and how to rerun a row

Generated on {date} by `python tests/crosscheck/validation.py --doc docs/validation.md`
({cases} cases, {rows} rows, {failed} failing; {wall:.0f} s of wall time with two cases at a
time on the project machine). The same cases run in CI as `tests/crosscheck/test_validation.py`
(`python -m pytest -q tests/crosscheck`, or `-k NAME` for one case); the tests install Debian's
`ns2` package with apt-get when `ns` is missing and they run as root.

To rerun one row by hand, run its scenario's command (table above): it prints both sides'
measures and, with `--out DIR`, writes both sides' tables, the comparison and the ns-2 script
(`DIR/ns2/scenario.tcl`, which `ns` reruns by itself and gives the same trace). A case with
several seeds averages them: add `--seed N` for each. An *agree* row whose explanation quotes a
seed-to-seed spread allows three standard deviations of the difference between the two sides'
means; the spreads are measured with `python tests/crosscheck/validation.py --spread 8 [NAME]`
(seeds 1 to 8 of both simulators), which stores them in `tests/crosscheck/spread.json`. Eight,
because three seeds estimated some standard deviations more than ten times too small (the mark
rate of `red-star-above-max-ns2-response`: ns-2 sd 0.0002 over seeds 1-3, 0.0031 over 1-8), which
failed rows whose difference was well inside the real spread.

What ns-2.35 cannot express is refused by `ecnlab crosscheck ns2` with one line naming the
field (for example `topology.bottleneck.queue.aqm.kind = "codel": ns-2.35 has no CoDel`): PIE,
CoDel, the threshold marker, DCN, AFD, RIO-PS, CHOKe, AECN; CUBIC, ABE and ABC; the seed's
ECN+ variant (ns-2's FullTcp client always echoes a marked SYN-ACK: use `rfc5562`); ECNM;
byte mode; REM marking at arrival; fractional `ecn_fraction`; TPC-W browsers and packet
sources; web sessions with more than one page per site or `inter_page_from = "start"`.
ecnlab has no SACK, so ns-2's `Agent/TCP/FullTcp/Sack` has nothing to be compared with. Every
approximation the translation makes is printed as a note and written into the script's header
(`ecnlab crosscheck ns2` lists them), and ns-2's defaults the seed studies relied on are in
[ns2-defaults.md](ns2-defaults.md).
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spread", type=int, metavar="N", help="seeds 1..N of each case")
    parser.add_argument("--doc", type=Path, help="run the suite and write this page")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    args = parser.parse_args()
    if args.spread:
        spread(args.cases, args.spread, args.jobs)
        return 0
    if args.doc:
        return doc(args.doc, args.jobs)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
