"""The cross-validation suite against ns-2.35: scenarios, measures and their criteria.

Every case runs one scenario of ``scenarios/`` in both simulators (``ecnlab crosscheck ns2``)
for its seeds and compares named measures, averaged over the seeds, by one of two criteria,
fixed here before the runs:

* ``agree``: |ecnlab - ns-2| <= tolerance x |ns-2| (or an absolute tolerance). The tolerance is
  justified in ``why``: either the seed-to-seed spread of both simulators, measured with
  ``python tests/crosscheck/validation.py --spread N CASE`` (N seeds, standard deviations
  quoted as sd), or exact agreement of deterministic runs;
* ``differ``: a documented model difference, asserted: the relative difference
  (ecnlab - ns-2) / |ns-2| must lie in [low, high] (or each side in its own range), so the
  test fails if the difference disappears or changes sign. ``why`` gives its evidence: the
  ns-2 source line, and where possible the case that removes the cause and agrees.

docs/validation.md is generated from a run of these cases
(``python tests/crosscheck/validation.py --doc docs/validation.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCENARIOS = Path(__file__).resolve().parent / "scenarios"


@dataclass(frozen=True)
class Check:
    """One measure of a case and its criterion."""

    measure: str
    kind: str  # "agree" or "differ"
    why: str
    rel: float = math.nan  # agree: relative tolerance
    abs: float = math.nan  # agree: absolute tolerance (used when rel is NaN)
    low: float = math.nan  # differ: bounds of (ecnlab - ns-2) / |ns-2|
    high: float = math.nan
    ns2_range: tuple[float, float] | None = None  # differ: ranges of each side's value
    ecnlab_range: tuple[float, float] | None = None

    def verdict(self, ns2: float, ecnlab: float) -> tuple[bool, str]:
        """(passes, verdict text)."""
        if math.isnan(ns2) or math.isnan(ecnlab):
            return False, "missing"
        if self.kind == "agree":
            limit = self.rel * abs(ns2) if not math.isnan(self.rel) else self.abs
            ok = abs(ecnlab - ns2) <= limit
            return ok, "agrees" if ok else "DISAGREES"
        ok = True
        if self.ns2_range is not None:
            ok &= self.ns2_range[0] <= ns2 <= self.ns2_range[1]
        if self.ecnlab_range is not None:
            ok &= self.ecnlab_range[0] <= ecnlab <= self.ecnlab_range[1]
        if not math.isnan(self.low):
            d = (ecnlab - ns2) / abs(ns2) if ns2 else math.inf * (ecnlab - ns2)
            ok &= self.low <= d <= self.high
        return ok, "documented difference" if ok else "DIFFERENCE CHANGED"

    def criterion(self) -> str:
        """The criterion in words (for the table)."""
        if self.kind == "agree":
            if not math.isnan(self.rel):
                return f"within {100 * self.rel:g} %"
            return f"within {self.abs:g}"
        parts = []
        if not math.isnan(self.low):
            parts.append(f"difference in [{100 * self.low:+g} %, {100 * self.high:+g} %]")
        if self.ns2_range is not None:
            parts.append(f"ns-2 in [{self.ns2_range[0]:g}, {self.ns2_range[1]:g}]")
        if self.ecnlab_range is not None:
            parts.append(f"ecnlab in [{self.ecnlab_range[0]:g}, {self.ecnlab_range[1]:g}]")
        return "; ".join(parts)


def agree(measure: str, why: str, rel: float = math.nan, abs: float = math.nan) -> Check:
    return Check(measure, "agree", why, rel=rel, abs=abs)


def differ(
    measure: str,
    why: str,
    low: float = math.nan,
    high: float = math.nan,
    ns2: tuple[float, float] | None = None,
    ecnlab: tuple[float, float] | None = None,
) -> Check:
    return Check(measure, "differ", why, low=low, high=high, ns2_range=ns2, ecnlab_range=ecnlab)


@dataclass(frozen=True)
class Case:
    name: str
    scenario: str
    about: str
    checks: tuple[Check, ...]
    seeds: tuple[int, ...] = (1,)
    overrides: tuple[str, ...] = field(default=())

    @property
    def path(self) -> Path:
        return SCENARIOS / self.scenario

    def command(self, seed: int | None = None) -> str:
        sets = "".join(f" -s '{o}'" for o in self.overrides)
        seed = self.seeds[0] if seed is None else seed
        return (
            f"ecnlab crosscheck ns2 tests/crosscheck/scenarios/{self.scenario}{sets} --seed {seed}"
        )


# --- evidence common to several rows -----------------------------------------------------------

DELACK = (
    "ns-2's FullTcp delayed ACK is a periodic timer firing every interval_ from time 0 "
    "(tcp-full.cc, FullTcpAgent::recv and timeout(TCP_TIMER_DELACK), BSD's fast timer), so a "
    "lone segment is acknowledged after 0 to 200 ms instead of ecnlab's 200 ms: ns-2 sends "
    "more ACKs (arrivals_up), each of which opens its window, and its flows need more "
    "congestion signals; with an ACK for every segment (red-ecn-per-segment-acks, "
    "syn-losses) the two agree"
)
ECN_ONE_SEGMENT = (
    "ns-2's ECN response halves cwnd whatever its size (tcp.cc, TcpAgent::slowdown: "
    "CLOSE_CWND_HALF sets cwnd_ = halfwin, only ssthresh_ is floored at 2) and, below one "
    "segment, waits for the retransmission timer (tcp-full.cc, recv: 'if (cwnd_ < 1) "
    "set_rtx_timer()'); ecnlab's ECN response is RFC 5681's max(FlightSize / 2, 2 SMSS), so its "
    "windows stop at 2 segments"
)


def _spread(text: str) -> str:
    return f"seed-to-seed spread {text}"


CASES: tuple[Case, ...] = (
    Case(
        "slow-start",
        "slow-start.toml",
        "handshake and slow start of isolated 300 kB transfers, an ACK per segment",
        (
            agree(
                "response_time_median_s",
                "deterministic (isolated transfers); ns-2 sends a pure ACK before the request "
                "(tcp-full.cc, 'special to ns: generate pure ACK here'), 32 us at 10 Mb/s",
                rel=0.001,
            ),
        ),
    ),
    Case(
        "delayed-ack",
        "delayed-ack.toml",
        "slow start with delayed ACKs (every 2nd segment, 200 ms)",
        (
            differ(
                "response_time_median_s",
                DELACK + "; in slow start each early ACK adds a segment to the window "
                "(slow-start, the same transfers with an ACK per segment, agrees to 0.1 %)",
                low=0.005,
                high=0.08,
            ),
        ),
    ),
    Case(
        "one-flow-fast-recovery",
        "one-flow-fast-recovery.toml",
        "one NewReno flow, drop-tail buffer below the BDP: losses repaired by fast recovery",
        (
            agree("utilization_down", "deterministic single flow", rel=0.01),
            agree("loss_rate_down", "deterministic; 10 drops in the window", rel=0.1),
            agree("mean_queue_pkts_down", "deterministic single flow", rel=0.05),
            differ(
                "timeouts_per_flow",
                "the first slow start overshoots by half a window: ecnlab's NewReno (RFC 6582, "
                "'impatient': the timer restarts on the first partial ACK only, partial "
                "deflation) times out once; ns-2's FullTcp NewReno restarts the timer on every "
                "partial ACK (tcp-full.cc, newack: set_rtx_timer() on progress) and deflates to "
                "ssthresh (NewRenoFullTcpAgent::pack_action), so it recovers without a timeout",
                ns2=(0, 0),
                ecnlab=(1, 1),
            ),
        ),
    ),
    Case(
        "timeouts",
        "timeouts.toml",
        "16 flows with windows of 1-3 segments: most losses repaired by the timer",
        (
            agree("utilization_down", _spread("pending"), rel=0.03),
            agree("loss_rate_down", _spread("pending"), rel=0.1),
            agree("retx_share", _spread("pending"), rel=0.1),
            agree("timeouts_per_flow", _spread("pending"), rel=0.2),
        ),
        seeds=(1, 2),
    ),
    Case(
        "rtt-heterogeneous-droptail",
        "rtt-heterogeneous-droptail.toml",
        "8 flows, RTTs 20-200 ms, drop-tail: RTT unfairness",
        (
            agree("utilization_down", _spread("pending"), rel=0.01),
            agree("loss_rate_down", _spread("pending"), rel=0.1),
            agree("mean_queue_pkts_down", _spread("pending"), rel=0.06),
            agree("jain_bulk", _spread("pending"), abs=0.06),
        ),
        seeds=(1, 2),
    ),
    Case(
        "red",
        "red.toml",
        "RED without ECN (early drops), 12 flows",
        (
            agree("utilization_down", _spread("pending"), rel=0.01),
            agree("loss_rate_down", _spread("pending"), rel=0.12),
            agree("aqm_avg_mean_down", _spread("pending"), rel=0.06),
            agree("jain_bulk", _spread("pending"), abs=0.06),
        ),
        seeds=(1, 2),
    ),
    Case(
        "red-ecn",
        "red-ecn.toml",
        "RED with ECN: early marks instead of drops",
        (
            agree("utilization_down", _spread("pending"), rel=0.01),
            agree("aqm_avg_mean_down", _spread("pending"), rel=0.08),
            agree("loss_rate_down", "no drops in either", abs=0.001),
            differ("mark_rate_down", DELACK, low=-0.3, high=-0.02),
            differ("arrivals_up", DELACK, low=-0.08, high=-0.01),
        ),
        seeds=(1, 2),
    ),
    Case(
        "red-ecn-per-segment-acks",
        "red-ecn.toml",
        "red-ecn with an ACK for every segment: no delayed-ACK timer",
        (
            agree("aqm_avg_mean_down", _spread("pending"), rel=0.08),
            agree("mark_rate_down", _spread("pending"), rel=0.12),
            agree("arrivals_up", "an ACK per segment in both", rel=0.01),
        ),
        seeds=(1, 2),
        overrides=("tcp.ack_every_segments=1",),
    ),
    Case(
        "red-ecn-drop-above-max",
        "red-ecn-drop-above-max.toml",
        "RED with ECN, average above max_th: ECN-capable packets dropped there (RFC 3168)",
        (
            agree("utilization_down", _spread("pending"), rel=0.04),
            agree("aqm_avg_mean_down", _spread("pending"), rel=0.06),
            agree("signal_rate_down", _spread("pending"), rel=0.15),
            differ("timeouts_per_flow", ECN_ONE_SEGMENT, low=-0.35, high=-0.02),
        ),
        seeds=(1, 2),
    ),
    Case(
        "red-ecn-drop-above-max-no-min-queue",
        "red-ecn-drop-above-max.toml",
        "the same without ns-2's RED rule never to signal at a queue of at most one packet",
        (
            differ(
                "utilization_down",
                "ns-2's RED signals only when the queue holds more than one packet (red.cc, "
                "REDQueue::enque: 'if (qavg >= edp_.th_min && qlen > 1)'): with 40 flows "
                "holding the average above max_th, ecnlab without that rule keeps dropping "
                "arrivals at an empty queue and idles the link; with min_queue_pkts = 2 "
                "(red-ecn-drop-above-max) the two agree",
                low=-0.45,
                high=-0.15,
            ),
        ),
        seeds=(1,),
        overrides=("topology.bottleneck.queue.aqm.min_queue_pkts=0",),
    ),
    Case(
        "red-star-above-max",
        "red-ecn-mark-above-max.toml",
        "RED* (marks beyond max_th), 40 ECN flows: marking saturates",
        (
            differ(
                "mark_rate_down",
                ECN_ONE_SEGMENT + ": 40 windows of 2 segments keep "
                "ecnlab's average beyond 2 max_th, where every packet is marked",
                ns2=(0.05, 0.5),
                ecnlab=(0.9, 1.0),
            ),
            differ("timeouts_per_flow", ECN_ONE_SEGMENT, ns2=(3, 40), ecnlab=(0, 0.5)),
            differ(
                "utilization_down",
                ECN_ONE_SEGMENT + ": ns-2's flows wait for their timers",
                low=0.05,
                high=0.3,
            ),
        ),
        seeds=(1,),
    ),
    Case(
        "ared",
        "ared.toml",
        "Adaptive RED (target delay 20 ms, max_p adapted), 20 flows",
        (
            agree("utilization_down", _spread("pending"), rel=0.01),
            agree("aqm_avg_mean_down", _spread("pending"), rel=0.05),
            agree("loss_rate_down", _spread("pending"), rel=0.12),
            agree("aqm_max_p_last_down", _spread("pending"), abs=0.03),
        ),
        seeds=(1, 2),
    ),
    Case(
        "rem-ecn",
        "rem-ecn.toml",
        "REM with ECN marking at departure (ns-2's markpkts_), b* = 30 packets",
        (
            agree("utilization_down", _spread("pending"), rel=0.01),
            agree("mean_queue_pkts_down", _spread("pending"), rel=0.05),
            differ(
                "aqm_prob_mean_down",
                DELACK + "; REM's price settles where the marks balance the windows' growth",
                low=-0.3,
                high=-0.05,
            ),
        ),
        seeds=(1, 2),
    ),
    Case(
        "pi-ecn",
        "pi-ecn.toml",
        "PI with ECN, q_ref = 40 packets",
        (
            agree("utilization_down", _spread("pending"), rel=0.01),
            agree("mean_queue_pkts_down", _spread("pending"), rel=0.08),
            differ(
                "aqm_p_mean_down",
                DELACK + "; PI's probability settles where the marks balance the windows' growth",
                low=-0.3,
                high=-0.05,
            ),
        ),
        seeds=(1, 2),
    ),
    Case(
        "syn-losses",
        "syn-losses.toml",
        "SYN and SYN-ACK losses (3 s initial RTO) behind two-way bulk traffic, an ACK per segment",
        (
            agree("utilization_down", _spread("pending"), rel=0.04),
            agree("handshake_retx_share", _spread("pending"), rel=0.4),
            agree("handshake_wait_mean_s", "3 s initial RTO, doubled on a second loss", rel=0.15),
        ),
        seeds=(1, 2),
        overrides=("tcp.ack_every_segments=1",),
    ),
    Case(
        "ecn-plus",
        "ecn-plus.toml",
        "ECN+ (RFC 5562): ECN-capable SYN-ACKs through RED* kept above its thresholds",
        (
            differ("marks_synack", "SYN-ACKs are marked in both", ns2=(5, 1e9), ecnlab=(5, 1e9)),
            agree("drops_synack", "no SYN-ACK is dropped in either", abs=0.5),
            agree("response_time_median_s", _spread("pending"), rel=0.06),
        ),
        seeds=(1, 2),
    ),
    Case(
        "poisson-short-transfers",
        "poisson-short-transfers.toml",
        "short transfers, Poisson arrivals, 60 % load, drop-tail",
        (
            agree("utilization_down", _spread("pending"), rel=0.04),
            agree("response_time_median_s", _spread("pending"), rel=0.03),
            agree("response_time_mean_s", _spread("pending"), rel=0.03),
            agree("response_time_p90_s", _spread("pending"), rel=0.04),
        ),
        seeds=(1,),
    ),
    Case(
        "web-90",
        "web-sessions.toml",
        "web sessions (ns-2's WebTraf) at 90 % load",
        (
            agree("utilization_down", _spread("pending"), rel=0.1),
            agree("response_time_median_s", _spread("pending"), rel=0.08),
            agree("loss_rate_down", _spread("pending"), rel=0.5),
        ),
        seeds=(1,),
    ),
    Case(
        "web-105",
        "web-sessions.toml",
        "web sessions (ns-2's WebTraf) at 105 % load",
        (
            agree("utilization_down", _spread("pending"), rel=0.06),
            agree("response_time_median_s", _spread("pending"), rel=0.1),
            agree("loss_rate_down", _spread("pending"), rel=0.5),
        ),
        seeds=(1,),
        overrides=("load.offered_load_mbps=10.5",),
    ),
    Case(
        "packmime-90",
        "packmime.toml",
        "PackMime-HTTP 1.0 (ns-2's PackMimeHTTP) at 90 % load",
        (
            agree("utilization_down", _spread("pending"), rel=0.1),
            agree("response_time_median_s", _spread("pending"), rel=0.08),
        ),
        seeds=(1,),
    ),
    Case(
        "packmime-105",
        "packmime.toml",
        "PackMime-HTTP 1.0 at 105 % load",
        (
            agree("utilization_down", _spread("pending"), rel=0.06),
            agree("response_time_median_s", _spread("pending"), rel=0.1),
            agree("loss_rate_down", _spread("pending"), rel=0.5),
        ),
        seeds=(1,),
        overrides=("load.offered_load_mbps=10.5",),
    ),
    Case(
        "large-window-storm",
        "red.toml",
        "red.toml with 4 MiB receiver windows (ecnlab's default)",
        (
            differ(
                "loss_rate_down",
                "ns-2's FullTcp NewReno inflates cwnd_ by a segment per duplicate ACK without "
                "bound while its fast retransmission is lost (tcp-full.cc, extra_ack; "
                "pack_action deflates only on a partial ACK) and then sends recov_maxburst_ = 2 "
                "segments per ACK: one flow floods the queue for seconds (trace: 2 segments per "
                "duplicate ACK, every second one dropped); a receiver window of 90 segments "
                "(red) bounds the inflation and the two agree",
                low=-0.995,
                high=-0.8,
            ),
        ),
        seeds=(1,),
        overrides=('workloads.0.rwnd_bytes={ dist = "constant", value = 4194304 }',),
    ),
)


def run_case(case: Case, ns: str | None = None) -> dict[str, Any]:
    """Run a case's seeds in both simulators: the mean of each measure per side, and the
    verdict of each check."""
    from ecnlab.crosscheck import crosscheck_ns2

    per_seed = []
    for seed in case.seeds:
        r = crosscheck_ns2(case.path, seed=seed, overrides=case.overrides, progress=False)
        per_seed.append((r.ns2_measures, r.ecnlab_measures))
    rows = []
    for check in case.checks:
        ns2 = _mean([m[0].get(check.measure, math.nan) for m in per_seed])
        ecn = _mean([m[1].get(check.measure, math.nan) for m in per_seed])
        ok, verdict = check.verdict(ns2, ecn)
        rows.append(
            {
                "case": case.name,
                "measure": check.measure,
                "ns2": ns2,
                "ecnlab": ecn,
                "ok": ok,
                "verdict": verdict,
                "criterion": check.criterion(),
                "why": check.why,
            }
        )
    return {"case": case.name, "rows": rows, "per_seed": per_seed}


def _mean(values: Sequence[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else math.nan


def by_name() -> Mapping[str, Case]:
    return {c.name: c for c in CASES}
