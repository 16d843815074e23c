"""Seed 004: Le, Aikat, Jeffay, Smith, "Differential Congestion Notification: Taming the Elephants".

Two routers joined by 100 Mb/s in each direction carry PackMime-HTTP traffic (HTTP/1.1 with
persistent connections) at offered loads of 90, 98 and 105 Mb/s, calibrated on an uncongested
1 Gb/s link, under drop-tail (240 packets), PI (q_ref 24), DCN (q_ref 24), AFD (q_ref 240) and
RIO-PS, with and without ECN; then a general TCP mix with asymmetric load (105.3 Mb/s forward,
91.2 Mb/s reverse). Write-up: ``docs/reproduction/dcn.md``.

Parts (each a sweep over load x queue and seeds, with the uncongested 1 Gb/s network as the
sweep's reference):

* ``http``: the schemes without ECN (drop-tail, PI, DCN, AFD, RIO-PS), endpoints without ECN;
* ``http-ecn``: PI, AFD and RIO-PS marking, endpoints with ECN;
* ``tcp-mix`` and ``tcp-mix-ecn``: the same split for the general TCP workload (Table 2's
  drop-tail and DCN, then PI/ECN, AFD/ECN and RIO-PS/ECN).

Response times are compared as the mean of ``min(response time, 2 s)`` (an exchange that did not
complete counts as 2 s): the area above the paper's CDFs, which stop at 2 s.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ._study import Findings, Results, SeedPlan, Study, claim, summary

__all__ = ["STUDY", "DcnStudy"]

DATA = Path(__file__).parent / "data" / "dcn"

LOADS = (90, 98, 105)
"""Offered loads (Mb/s on an uncongested 1 Gb/s link, i.e. % of the 100 Mb/s link)."""

SEEDS = (1, 2, 3)

AQM_LIMIT_PKTS = 5000
"""Hard limit of the AQM queues: large enough that they never tail-drop (checked in Table 1)."""

T_CAP_S = 2.0
"""Response times are compared up to 2 s, the range of the paper's CDFs."""

SMALL_BYTES = 100_000
"""Figures 15-18 split responses at 100,000 bytes."""


def _queue(kind: str, ecn: bool = False, **params: Any) -> dict[str, Any]:
    if kind == "droptail":
        return {"limit_pkts": 240}
    aqm: dict[str, Any] = {"kind": kind, **params}
    if ecn:
        aqm["ecn"] = True
    return {"limit_pkts": AQM_LIMIT_PKTS, "aqm": aqm}


# The schemes of seed 004 section 5: (label, queue). RIO-PS keeps its inventors' defaults.
HTTP_PLAIN = (
    ("drop-tail", _queue("droptail")),
    ("PI", _queue("pi", q_ref_pkts=24)),
    ("DCN", _queue("dcn", q_ref_pkts=24)),
    ("AFD", _queue("afd", q_target_pkts=240)),
    ("RIO-PS", _queue("rio_ps")),
)
HTTP_ECN = (
    ("PI/ECN", _queue("pi", True, q_ref_pkts=24)),
    ("AFD/ECN", _queue("afd", True, q_target_pkts=240)),
    ("RIO-PS/ECN", _queue("rio_ps", True)),
)
# Table 2: PI/ECN and AFD/ECN with q_ref 240, DCN with 24.
MIX_PLAIN = (
    ("drop-tail", _queue("droptail")),
    ("DCN", _queue("dcn", q_ref_pkts=24)),
)
MIX_ECN = (
    ("PI/ECN", _queue("pi", True, q_ref_pkts=240)),
    ("AFD/ECN", _queue("afd", True, q_target_pkts=240)),
    ("RIO-PS/ECN", _queue("rio_ps", True)),
)
UNCONGESTED = "uncongested"

DURATIONS = {
    # (duration_s, warmup_s). Full: the paper's 90 measured minutes after 15 of start-up.
    "full": {"http": (6300.0, 900.0), "tcp-mix": (6300.0, 900.0)},
    # Quick (docs/reproduction/dcn.md, "Quick mode"): PackMime connections are short-lived,
    # so 30 s of warm-up reach steady state and 60 s measure about 1e5 exchanges per run; the
    # mix's elephants (up to 100 MB at 16 kB windows) need longer to build up their load.
    "quick": {"http": (90.0, 30.0), "tcp-mix": (240.0, 60.0)},
}


def _part(
    name: str,
    base: str,
    schemes: tuple[tuple[str, dict[str, Any]], ...],
    mode: str,
    *,
    ecn: bool,
    loads: tuple[Any, ...] | None,
    reference: bool,
) -> dict[str, Any]:
    workload = "http" if base == "http.toml" else "tcp-mix"
    duration, warmup = DURATIONS[mode][workload]
    sweep: dict[str, Any] = {
        "name": name,
        "base": base,
        "seeds": list(SEEDS),
        "set": {"duration_s": duration, "warmup_s": warmup, "tcp.ecn": ecn},
        "axes": [],
    }
    if loads is not None:
        sweep["axes"].append(
            {
                "name": "load",
                "path": "load.offered_load_mbps",
                "values": list(loads),
                "labels": [f"{v}%" for v in loads],
            }
        )
    sweep["axes"].append(
        {
            "name": "scheme",
            "path": "topology.bottleneck.queue",
            "values": [q for _, q in schemes],
            "labels": [label for label, _ in schemes],
        }
    )
    if reference:
        sweep["reference"] = {
            "label": UNCONGESTED,
            "vary": ["load"] if loads is not None else [],
            "set": {"topology.bottleneck.rate_bps": 1e9},
        }
    return sweep


class DcnStudy(Study):
    """Seed 004: DCN against drop-tail, PI, AFD and RIO-PS on HTTP and a general TCP mix."""

    name = "dcn"
    title = "Le, Aikat, Jeffay, Smith: Differential Congestion Notification: Taming the Elephants"
    doc = "docs/reproduction/dcn.md"
    data_dir = DATA

    def sweeps(self, mode: str) -> list[dict[str, Any]]:
        return [{k: v for k, v in d.items() if k != "seeds"} for d in self._parts(mode)]

    def seed_plan(self, mode: str, part: str) -> SeedPlan:
        n = {d["name"]: d["seeds"] for d in self._parts(mode)}[part]
        count = n if isinstance(n, int) else len(n)
        return SeedPlan(count, 0, count)

    def _parts(self, mode: str) -> list[dict[str, Any]]:
        return [
            _part("http", "http.toml", HTTP_PLAIN, mode, ecn=False, loads=LOADS, reference=True),
            _part("http-ecn", "http.toml", HTTP_ECN, mode, ecn=True, loads=LOADS, reference=False),
            _part(
                "tcp-mix", "tcp-mix.toml", MIX_PLAIN, mode, ecn=False, loads=None, reference=True
            ),
            _part(
                "tcp-mix-ecn", "tcp-mix.toml", MIX_ECN, mode, ecn=True, loads=None, reference=False
            ),
        ]

    def analyze(self, results: Results, frames: Any = None) -> Findings:
        f = Findings()
        http = _read(results, ("http", "http-ecn"), has_load=True)
        mix = _read(results, ("tcp-mix", "tcp-mix-ecn"), has_load=False)
        f.notes.append(
            f"Mode {results.mode}: seeds {', '.join(map(str, SEEDS))}; response times compared as "
            "the mean of min(response time, 2 s) per run (unfinished exchanges count 2 s), "
            "the area above the paper's CDFs."
        )
        _http_claims(f, http)
        _mix_claims(f, mix)
        _http_outputs(f, http)
        _mix_outputs(f, mix)
        return f


STUDY = DcnStudy()


# --------------------------------------------------------------------------- reading the runs


class Data:
    """Per-run statistics of one workload, read once from the stored sweeps.

    ``runs``: one row per run (``scheme``, ``load``, ``seed``, loss, utilization, counts).
    ``rt``: per run and size class, the truncated mean response time and the response-time
    histogram in 10 ms bins (``bins``, last bin = 2 s and above). ``big``: response times of the
    responses over 100 kB. ``bytes``: completed response bytes per run by log-size bin.
    """

    def __init__(
        self, runs: pd.DataFrame, rt: pd.DataFrame, big: pd.DataFrame, nbytes: pd.DataFrame
    ) -> None:
        self.runs = runs
        self.rt = rt
        self.big = big
        self.bytes = nbytes

    def schemes(self) -> list[str]:
        order = [UNCONGESTED] + [s for s, _ in HTTP_PLAIN + HTTP_ECN]
        have = set(self.runs["scheme"])
        return [s for s in order if s in have]


def _read(results: Results, parts: tuple[str, ...], *, has_load: bool) -> Data:
    runs, rt, big, nbytes = [], [], [], []
    for part in parts:
        if part not in results.parts:
            continue
        con = results.open(part)
        load = "load" if has_load else "0"
        scheme = f"CASE WHEN reference THEN '{UNCONGESTED}' ELSE scheme_label END"
        keys = f"run_id, seed, {load} AS load, {scheme} AS scheme"
        runs.append(
            con.execute(
                f"""SELECT {keys}, duration_s, window_s, loss_rate_down, loss_rate_up,
                       utilization_down, utilization_up, exchanges_completed
                    FROM runs WHERE status = 'done'"""
            ).df()
        )
        traffic = con.execute(
            """SELECT run_id, link, sum(delivered_bytes) * 8 / (max(t_end_s) - min(t_start_s))
                       / 1e6 AS mbps, sum(drops_overflow) AS overflow
                FROM links GROUP BY ALL"""
        ).df()
        runs[-1] = runs[-1].merge(
            traffic.pivot(index="run_id", columns="link", values=["mbps", "overflow"]).pipe(
                lambda t: t.set_axis([f"{a}_{b.split('_')[1]}" for a, b in t.columns], axis=1)
            ),
            left_on="run_id",
            right_index=True,
            how="left",
        )
        # Exchanges that started at least T_CAP_S before the end: an unfinished one took
        # longer than T_CAP_S.
        rtexpr = f"CASE WHEN completed THEN response_time_s ELSE {T_CAP_S} END"
        where = f"e.start_s <= r.duration_s - {T_CAP_S}"
        rt.append(
            con.execute(
                f"""SELECT e.run_id, e.response_bytes <= {SMALL_BYTES} AS small,
                       least(floor({rtexpr} / 0.01), {int(T_CAP_S / 0.01)}) AS bin,
                       count(*) AS n, sum(least({rtexpr}, {T_CAP_S})) AS capped_sum
                    FROM exchanges e JOIN runs r USING (run_id)
                    WHERE {where} GROUP BY ALL"""
            ).df()
        )
        big.append(
            con.execute(
                f"""SELECT e.run_id, CASE WHEN completed THEN response_time_s ELSE 'inf' END
                       AS rt FROM exchanges e JOIN runs r USING (run_id)
                    WHERE {where} AND response_bytes > {SMALL_BYTES}"""
            ).df()
        )
        nbytes.append(
            con.execute(
                """SELECT run_id, floor(log10(greatest(response_bytes, 1)) * 10) AS bin,
                       sum(response_bytes) AS bytes
                   FROM exchanges WHERE completed GROUP BY ALL"""
            ).df()
        )
    keys = pd.concat(runs, ignore_index=True)
    ident = keys[["run_id", "seed", "load", "scheme"]]
    return Data(
        keys,
        pd.concat(rt, ignore_index=True).merge(ident, on="run_id"),
        pd.concat(big, ignore_index=True).merge(ident, on="run_id"),
        pd.concat(nbytes, ignore_index=True).merge(ident, on="run_id"),
    )


# --------------------------------------------------------------------------- statistics


def capped_mean(d: Data, *, small: bool | None = None) -> pd.DataFrame:
    """Mean of min(response time, 2 s) per (scheme, load, seed); ``small`` selects a class."""
    rt = d.rt if small is None else d.rt[d.rt["small"] == small]
    g = rt.groupby(["scheme", "load", "seed"])[["capped_sum", "n"]].sum()
    return (g["capped_sum"] / g["n"]).rename("capped_mean_s").reset_index()


def cdf_grid(d: Data, *, small: bool | None = None) -> pd.DataFrame:
    """P(response time < x) at x = 10 ms .. 2 s, pooled over seeds: rows (scheme, load)."""
    rt = d.rt if small is None else d.rt[d.rt["small"] == small]
    h = rt.groupby(["scheme", "load", "bin"])["n"].sum().unstack("bin", fill_value=0)
    h = h.reindex(columns=range(int(T_CAP_S / 0.01) + 1), fill_value=0)
    cum = h.cumsum(axis=1).div(h.sum(axis=1), axis=0)
    cum.columns = [(b + 1) * 0.01 for b in cum.columns]
    return cum.iloc[:, :-1]  # the last bin is "2 s or more"


def per_seed_values(frame: pd.DataFrame, value: str, scheme: str, load: Any) -> list[float]:
    """``value`` of one scheme at one load, in seed order (empty if the runs are missing)."""
    part = frame[(frame["scheme"] == scheme) & (frame["load"] == load)].sort_values("seed")
    return [float(v) for v in part[value]]


def best_version(cm: pd.DataFrame, scheme: str, load: Any) -> str:
    """The better of ``scheme`` and ``scheme/ECN`` at ``load`` (lower mean capped response)."""
    means = {
        s: float(np.mean(v))
        for s in (scheme, f"{scheme}/ECN")
        if (v := per_seed_values(cm, "capped_mean_s", s, load))
    }
    return min(means, key=means.__getitem__)


def ratio(a: list[float], b: list[float]) -> list[float]:
    """Per-seed ratios a/b (paired by seed)."""
    return [x / y if y else math.nan for x, y in zip(a, b)]


def byte_share_below(d: Data, size_bytes: float) -> pd.DataFrame:
    """Per run: the share of completed response bytes in responses of at most ``size_bytes``."""
    cut = math.floor(math.log10(size_bytes) * 10)
    b = d.bytes.assign(below=lambda t: t["bin"] < cut)
    tot = b.groupby(["scheme", "load", "seed"])["bytes"].sum()
    low = b[b["below"]].groupby(["scheme", "load", "seed"])["bytes"].sum()
    return (low / tot).fillna(0.0).rename("share").reset_index()


def paired_mean(values: list[float]) -> float:
    return float(np.mean(values)) if values else math.nan


# --------------------------------------------------------------------------- claims


def _http_claims(f: Findings, d: Data) -> None:
    cm = capped_mean(d)
    runs = d.runs

    def v(
        scheme: str, load: Any, frame: pd.DataFrame = cm, col: str = "capped_mean_s"
    ) -> list[float]:
        return per_seed_values(frame, col, scheme, load)

    # Figure 5: DCN close to the uncongested network at every load.
    plain = [s for s, _ in HTTP_PLAIN + HTTP_ECN]
    gap = {
        load: {s: ratio(v(s, load), v(UNCONGESTED, load)) for s in plain if v(s, load)}
        for load in LOADS
    }
    ok = all(
        paired_mean(gap[load]["DCN"]) <= min(paired_mean(r) for r in gap[load].values()) * 1.02
        for load in LOADS
    )
    f.claims.append(
        claim(
            "fig5-dcn-near-uncongested",
            "At every load DCN's response times are close to the uncongested network's "
            "(closest of all schemes)",
            paper="Figure 5, 9, 11, 13",
            ours={f"{load}% DCN/uncongested": summary(gap[load]["DCN"]) for load in LOADS},
            criterion="capped mean response time over the uncongested one is, at every load, "
            "within 2 % of the lowest such ratio of all schemes",
            passed=ok,
        )
    )

    # Figures 11 and 13: DCN without ECN at least as good as PI with ECN.
    rs = {load: ratio(v("DCN", load), v("PI/ECN", load)) for load in (98, 105)}
    f.claims.append(
        claim(
            "dcn-vs-pi-ecn",
            "At 98% and 105% load DCN without ECN gives response times equal or superior to "
            "PI with ECN",
            paper="Figures 11, 13",
            ours={f"{load}% DCN/PI-ECN": summary(r) for load, r in rs.items()},
            criterion="mean over seeds of the paired ratio of capped mean response times "
            "(DCN / PI-ECN) at most 1.02 at both loads",
            passed=all(paired_mean(r) <= 1.02 for r in rs.values()),
        )
    )

    # DCN and PI/ECN clearly better than the others at 98 and 105.
    others = ("drop-tail", "PI", "AFD", "AFD/ECN", "RIO-PS", "RIO-PS/ECN")
    best_two: dict[str, Any] = {}
    ok = True
    for load in (98, 105):
        worst_of_two = max(paired_mean(v("DCN", load)), paired_mean(v("PI/ECN", load)))
        best_other = min(others, key=lambda s: paired_mean(v(s, load)))
        best_two[f"{load}% DCN"] = summary(v("DCN", load))
        best_two[f"{load}% PI/ECN"] = summary(v("PI/ECN", load))
        best_two[f"{load}% best other ({best_other})"] = summary(v(best_other, load))
        ok &= worst_of_two < paired_mean(v(best_other, load))
    f.claims.append(
        claim(
            "dcn-pi-ecn-superior",
            "At 98% and 105% load DCN and PI/ECN are clearly superior to the other AQMs",
            paper="Figures 11, 13",
            ours=best_two,
            criterion="capped mean response time (s): both DCN and PI/ECN below every other "
            "scheme at both loads",
            passed=ok,
        )
    )

    # Differential schemes: DCN better than RIO-PS better than AFD (best versions).
    order: dict[str, Any] = {}
    ok = True
    for load in (98, 105):
        rio, afd = best_version(cm, "RIO-PS", load), best_version(cm, "AFD", load)
        m = [paired_mean(v(s, load)) for s in ("DCN", rio, afd)]
        order[f"{load}% DCN"] = summary(v("DCN", load))
        order[f"{load}% {rio}"] = summary(v(rio, load))
        order[f"{load}% {afd}"] = summary(v(afd, load))
        ok &= m[0] < m[1] < m[2]
    f.claims.append(
        claim(
            "differential-order",
            "Among the differential schemes DCN beats RIO-PS, which beats AFD",
            paper="Figures 9, 11, 13 (section 5.1)",
            ours=order,
            criterion="capped mean response time (s) of the best version of each (with or "
            "without ECN): DCN < RIO-PS < AFD at 98% and 105%",
            passed=ok,
        )
    )

    # Table 1: loss at 105 %.
    paper_loss = {"drop-tail": 8.8, "PI": 6.5, "AFD": 8.9, "RIO-PS": 8.2, "DCN": 3.0}
    loss = {s: [100 * x for x in v(s, 105, runs, "loss_rate_down")] for s in paper_loss}
    f.claims.append(
        claim(
            "loss-105",
            "At 105% load DCN's loss rate is below drop-tail's, PI's (no ECN), AFD's and RIO-PS's",
            paper=paper_loss,
            ours={s: summary(x) for s, x in loss.items()},
            criterion="forward-path loss rate (%) of DCN below each of the four in every seed",
            passed=all(
                all(a < b for a, b in zip(loss["DCN"], loss[s])) for s in paper_loss if s != "DCN"
            ),
        )
    )

    # PI: ECN matters above 90 %.
    pr = {load: ratio(v("PI/ECN", load), v("PI", load)) for load in (98, 105)}
    f.claims.append(
        claim(
            "pi-needs-ecn",
            "Without ECN PI degrades rapidly above 90% load; with ECN it stays close",
            paper="Figure 6",
            ours={f"{load}% PI-ECN/PI": summary(r) for load, r in pr.items()},
            criterion="paired ratio of capped mean response times PI/ECN over PI below 0.95 at "
            "98% and 105%",
            passed=all(paired_mean(r) < 0.95 for r in pr.values()),
        )
    )

    # RIO-PS: ECN contributes little.
    rr = {load: ratio(v("RIO-PS/ECN", load), v("RIO-PS", load)) for load in LOADS}
    f.claims.append(
        claim(
            "rio-ps-ecn-little",
            "At all loads ECN contributes little to RIO-PS",
            paper="Figure 8",
            ours={f"{load}% RIO-PS-ECN/RIO-PS": summary(r) for load, r in rr.items()},
            criterion="paired ratio of capped mean response times within 0.95-1.05 at every load",
            passed=all(0.95 <= paired_mean(r) <= 1.05 for r in rr.values()),
        )
    )

    # AFD: a small improvement with ECN at 98 and 105.
    ar = {load: ratio(v("AFD/ECN", load), v("AFD", load)) for load in (98, 105)}
    f.claims.append(
        claim(
            "afd-ecn-small-gain",
            "AFD shows a small yet noticeable improvement with ECN at 98% and 105% load",
            paper="Figure 7",
            ours={f"{load}% AFD-ECN/AFD": summary(r) for load, r in ar.items()},
            criterion="paired ratio of capped mean response times below 1 and above 0.8 at both",
            passed=all(0.8 < paired_mean(r) < 1.0 for r in ar.values()),
        )
    )

    # Table 1: loss grows with load for AFD and RIO-PS much more than for DCN.
    growth = {
        s: [
            100 * (b - a)
            for a, b in zip(v(s, 90, runs, "loss_rate_down"), v(s, 105, runs, "loss_rate_down"))
        ]
        for s in ("DCN", "AFD", "AFD/ECN", "RIO-PS", "RIO-PS/ECN")
    }
    f.claims.append(
        claim(
            "loss-growth",
            "As load increases the loss rate increases significantly for AFD and RIO-PS, even "
            "with ECN, while DCN keeps a fairly low loss rate",
            paper={"DCN": 2.05, "AFD": 8.4, "AFD/ECN": 8.7, "RIO-PS": 6.1, "RIO-PS/ECN": 6.6},
            ours={s: summary(x) for s, x in growth.items()},
            criterion="loss rate at 105% minus at 90% (percentage points): DCN's below each "
            "AFD and RIO-PS version's",
            passed=all(
                paired_mean(growth["DCN"]) < paired_mean(x) for s, x in growth.items() if s != "DCN"
            ),
        )
    )

    # Figures 10, 12, 14: under DCN more of the bytes come from responses up to 100 kB / 1 MB.
    ok = True
    shares: dict[str, Any] = {}
    for size in (1e5, 1e6):
        sh = byte_share_below(d, size)
        for load in LOADS:
            dcn = paired_mean(v("DCN", load, sh, "share"))
            best = max(
                (s for s in plain if s != "DCN"), key=lambda s: paired_mean(v(s, load, sh, "share"))
            )
            shares[f"{load}% <= {size:.0e} B: DCN"] = summary(v("DCN", load, sh, "share"))
            shares[f"{load}% <= {size:.0e} B: {best}"] = summary(v(best, load, sh, "share"))
            ok &= dcn >= paired_mean(v(best, load, sh, "share"))
    f.claims.append(
        claim(
            "bytes-from-short",
            "Under DCN a greater fraction of the bytes comes from shorter responses (DCN's "
            "curve is above the others beyond about 50 kB)",
            paper="Figures 10, 12, 14",
            ours=shares,
            criterion="share of completed response bytes in responses up to 100 kB and up to "
            "1 MB: DCN's at least the highest other scheme's, every load",
            passed=ok,
        )
    )

    # Figures 15-18: > 99 % of responses do better; only some large ones do worse.
    cms = capped_mean(d, small=True)
    n_small = d.rt[d.rt["small"]].groupby("run_id")["n"].sum()
    n_all = d.rt.groupby("run_id")["n"].sum()
    frac_small = float((n_small / n_all).mean())
    small_ok = True
    small_vals: dict[str, Any] = {"share of responses <= 100 kB": frac_small}
    for load in (90, 98):
        best_other = min(
            (s for s in plain if s != "DCN"),
            key=lambda s: paired_mean(per_seed_values(cms, "capped_mean_s", s, load)),
        )
        dcn = per_seed_values(cms, "capped_mean_s", "DCN", load)
        oth = per_seed_values(cms, "capped_mean_s", best_other, load)
        small_vals[f"{load}% small DCN/{best_other}"] = summary(ratio(dcn, oth))
        small_ok &= paired_mean(ratio(dcn, oth)) < 1.0
    worse = _large_worse_share(d, 98)
    small_vals["98% share of large responses slower under DCN than the best other"] = worse
    f.claims.append(
        claim(
            "small-better-some-large-worse",
            "More than 99% of responses (those under 100 kB) do better under DCN, while only "
            "some responses over 100 kB do worse",
            paper="Figures 15-18: DCN better for ~75% (90%) and ~40% (98%) of responses over 100 kB",
            ours=small_vals,
            criterion="responses <= 100 kB are > 99% of all; their capped mean response time "
            "under DCN below every other scheme's at 90% and 98%; at 98% some but not all "
            "quantiles of the > 100 kB responses are slower under DCN than under the best other",
            passed=frac_small > 0.99 and small_ok and 0.0 < worse < 1.0,
        )
    )


def _large_worse_share(d: Data, load: Any) -> float:
    """Share of quantiles (1..99 %) of > 100 kB response times at which DCN is slower than the
    fastest other scheme at that quantile (pooled over seeds)."""
    big = d.big[d.big["load"] == load]
    qs = np.linspace(0.01, 0.99, 99)
    curves = {
        s: np.quantile(g["rt"].to_numpy(dtype=float), qs, method="nearest")
        for s, g in big.groupby("scheme")
        if s != UNCONGESTED and len(g)
    }
    if "DCN" not in curves or len(curves) < 2:
        return math.nan
    best = np.min(np.vstack([c for s, c in curves.items() if s != "DCN"]), axis=0)
    return float(np.mean(curves["DCN"] > best))


def _mix_claims(f: Findings, d: Data) -> None:
    cm = capped_mean(d)
    schemes = [s for s in d.schemes() if s != UNCONGESTED]
    gaps = {
        s: ratio(
            per_seed_values(cm, "capped_mean_s", s, 0),
            per_seed_values(cm, "capped_mean_s", UNCONGESTED, 0),
        )
        for s in schemes
    }
    ranked = sorted(schemes, key=lambda s: paired_mean(gaps[s]))
    f.claims.append(
        claim(
            "tcp-mix-closest",
            "In the general TCP workload DCN and RIO-PS come closest to the uncongested network",
            paper="Figures 19, 20",
            ours={s: summary(gaps[s]) for s in ranked},
            criterion="capped mean response time over the uncongested one: DCN and RIO-PS/ECN "
            "have the two lowest ratios",
            passed=set(ranked[:2]) == {"DCN", "RIO-PS/ECN"},
        )
    )
    loss = {s: [100 * x for x in per_seed_values(d.runs, "loss_rate_down", s, 0)] for s in schemes}
    paper = {"drop-tail": 3.7, "PI/ECN": 0.2, "DCN": 1.0, "AFD/ECN": 4.5, "RIO-PS/ECN": 3.4}
    f.claims.append(
        claim(
            "tcp-mix-loss",
            "In the general TCP workload DCN's forward loss rate is below drop-tail's, "
            "AFD/ECN's and RIO-PS/ECN's",
            paper=paper,
            ours={s: summary(x) for s, x in loss.items()},
            criterion="forward-path loss rate (%): DCN's below those three in every seed",
            passed=all(
                all(a < b for a, b in zip(loss["DCN"], loss[s]))
                for s in ("drop-tail", "AFD/ECN", "RIO-PS/ECN")
            ),
        )
    )


# --------------------------------------------------------------------------- figures and tables

# Seed 004 Table 1: (scheme, load) -> (loss %, completed millions, Mb/s), without / with ECN.
PAPER_TABLE1: dict[tuple[str, int], tuple[float, float, float]] = {
    (UNCONGESTED, 90): (0.0, 15.0, 91.3),
    (UNCONGESTED, 98): (0.0, 16.2, 98.2),
    (UNCONGESTED, 105): (0.0, 17.3, 105.9),
    ("drop-tail", 90): (1.8, 14.6, 89.9),
    ("drop-tail", 98): (6.0, 15.1, 92.0),
    ("drop-tail", 105): (8.8, 15.0, 92.4),
    ("PI", 90): (1.3, 14.4, 87.9),
    ("PI", 98): (3.9, 15.1, 89.3),
    ("PI", 105): (6.5, 15.1, 89.9),
    ("PI/ECN", 90): (0.3, 14.6, 88.6),
    ("PI/ECN", 98): (1.8, 14.9, 89.4),
    ("PI/ECN", 105): (2.5, 15.0, 89.5),
    ("DCN", 90): (0.95, 14.5, 86.1),
    ("DCN", 98): (2.3, 14.9, 88.6),
    ("DCN", 105): (3.0, 15.3, 90.5),
    ("AFD", 90): (0.5, 14.7, 88.3),
    ("AFD", 98): (6.1, 14.5, 87.6),
    ("AFD", 105): (8.9, 14.6, 87.8),
    ("AFD/ECN", 90): (0.5, 14.6, 88.3),
    ("AFD/ECN", 98): (6.2, 14.5, 87.9),
    ("AFD/ECN", 105): (9.2, 14.4, 87.9),
    ("RIO-PS", 90): (2.1, 14.6, 88.8),
    ("RIO-PS", 98): (5.3, 15.0, 91.2),
    ("RIO-PS", 105): (8.2, 15.3, 91.9),
    ("RIO-PS/ECN", 90): (1.3, 14.6, 87.9),
    ("RIO-PS/ECN", 98): (4.7, 15.2, 91.0),
    ("RIO-PS/ECN", 105): (7.9, 15.3, 91.9),
}

# Seed 004 Table 2: scheme -> (completed millions, fwd loss %, rev loss %, fwd Mb/s, rev Mb/s).
PAPER_TABLE2: dict[str, tuple[float, float, float, float, float]] = {
    UNCONGESTED: (2.75, 0.0, 0.0, 105.3, 91.2),
    "drop-tail": (2.62, 3.7, 0.9, 90.8, 85.7),
    "PI/ECN": (2.69, 0.2, 0.1, 88.5, 84.4),
    "DCN": (2.60, 1.0, 0.6, 89.4, 83.3),
    "AFD/ECN": (2.67, 4.5, 0.7, 87.5, 80.2),
    "RIO-PS/ECN": (2.66, 3.4, 1.0, 91.0, 83.5),
}

PAPER_WINDOW_S = 5400.0
"""The paper counts completed exchanges over its 90-minute measurement interval."""


def _run_table(d: Data) -> pd.DataFrame:
    r = d.runs.assign(
        loss_pct=lambda t: 100 * t["loss_rate_down"],
        loss_up_pct=lambda t: 100 * t["loss_rate_up"],
        completed_per_90min_m=lambda t: t["exchanges_completed"] / t["window_s"] * 5400 / 1e6,
    )
    cols = ["loss_pct", "loss_up_pct", "completed_per_90min_m", "mbps_down", "mbps_up"]
    cols += ["overflow_down"]
    return r.groupby(["scheme", "load"])[cols].mean()


def table1(d: Data) -> pd.DataFrame:
    """ecnlab's Table 1 (means over seeds) beside the seed's."""
    ours = _run_table(d)
    rows = []
    for s in d.schemes():
        for load in LOADS:
            if (s, load) not in ours.index:
                continue
            o = ours.loc[(s, load)]
            p = PAPER_TABLE1.get((s, load), (math.nan,) * 3)
            rows.append(
                {
                    "scheme": s,
                    "load": f"{load}%",
                    "loss % (paper)": p[0],
                    "loss % (ecnlab)": round(float(o["loss_pct"]), 2),
                    "completed M/90 min (paper)": p[1],
                    "completed M/90 min (ecnlab)": round(float(o["completed_per_90min_m"]), 2),
                    "Mb/s (paper)": p[2],
                    "Mb/s (ecnlab)": round(float(o["mbps_down"]), 1),
                    "tail drops (ecnlab)": int(o["overflow_down"]),
                }
            )
    return pd.DataFrame(rows).set_index(["scheme", "load"])


def table2(d: Data) -> pd.DataFrame:
    """ecnlab's Table 2 (means over seeds) beside the seed's."""
    ours = _run_table(d)
    rows = []
    for s in d.schemes():
        o = ours.loc[(s, 0)]
        p = PAPER_TABLE2.get(s, (math.nan,) * 5)
        rows.append(
            {
                "scheme": s,
                "completed M/90 min (paper)": p[0],
                "completed M/90 min (ecnlab)": round(float(o["completed_per_90min_m"]), 3),
                "fwd loss % (paper)": p[1],
                "fwd loss % (ecnlab)": round(float(o["loss_pct"]), 2),
                "rev loss % (paper)": p[2],
                "rev loss % (ecnlab)": round(float(o["loss_up_pct"]), 2),
                "fwd Mb/s (paper)": p[3],
                "fwd Mb/s (ecnlab)": round(float(o["mbps_down"]), 1),
                "rev Mb/s (paper)": p[4],
                "rev Mb/s (ecnlab)": round(float(o["mbps_up"]), 1),
            }
        )
    return pd.DataFrame(rows).set_index("scheme")


_STYLE = {
    UNCONGESTED: {"color": "black", "linestyle": "--"},
    "drop-tail": {"color": "tab:gray"},
    "PI": {"color": "tab:blue", "linestyle": ":"},
    "PI/ECN": {"color": "tab:blue"},
    "DCN": {"color": "tab:red", "linewidth": 2},
    "AFD": {"color": "tab:green", "linestyle": ":"},
    "AFD/ECN": {"color": "tab:green"},
    "RIO-PS": {"color": "tab:purple", "linestyle": ":"},
    "RIO-PS/ECN": {"color": "tab:purple"},
}


def _cdf_axes(ax: Any, title: str) -> None:
    ax.set_xlim(0, T_CAP_S * 1000)
    ax.set_ylim(0, 1)
    ax.set_xlabel("response time (ms)")
    ax.set_ylabel("cumulative probability")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")


def _plot_cdfs(grid: pd.DataFrame, keys: list[tuple[str, Any, str]], title: str) -> Figure:
    fig = Figure(figsize=(6, 4.2))
    ax = fig.add_subplot()
    x = np.array(grid.columns, dtype=float) * 1000
    for scheme, load, label in keys:
        if (scheme, load) in grid.index:
            style = dict(_STYLE.get(scheme, {}))
            ax.plot(x, grid.loc[(scheme, load)].to_numpy(), label=label, **style)
    _cdf_axes(ax, title)
    fig.tight_layout()
    return fig


def _http_outputs(f: Findings, d: Data) -> None:
    grid = cdf_grid(d)
    per_aqm = {
        "fig5-dcn": ("DCN", ("DCN",)),
        "fig6-pi": ("PI", ("PI", "PI/ECN")),
        "fig7-afd": ("AFD", ("AFD", "AFD/ECN")),
        "fig8-rio-ps": ("RIO-PS", ("RIO-PS", "RIO-PS/ECN")),
    }
    for key, (name, schemes) in per_aqm.items():
        fig = Figure(figsize=(6, 4.2))
        ax = fig.add_subplot()
        x = np.array(grid.columns, dtype=float) * 1000
        colors = {90: "tab:blue", 98: "tab:orange", 105: "tab:red"}
        for load in LOADS:
            if (UNCONGESTED, load) in grid.index:
                ax.plot(
                    x,
                    grid.loc[(UNCONGESTED, load)],
                    color=colors[load],
                    linestyle="--",
                    linewidth=0.8,
                    label=f"uncongested {load}%",
                )
            for s in schemes:
                if (s, load) in grid.index:
                    ax.plot(
                        x,
                        grid.loc[(s, load)],
                        color=colors[load],
                        linestyle=":" if "/ECN" not in s and len(schemes) > 1 else "-",
                        label=f"{s} {load}%",
                    )
        _cdf_axes(ax, f"{name}: response-time CDF by offered load")
        fig.tight_layout()
        f.figure(key, f"Figure {key[3]}: {name} response times for each load", fig)
    for fig_no, load in ((9, 90), (11, 98), (13, 105)):
        keys = [(s, load, s) for s in d.schemes()]
        f.figure(
            f"fig{fig_no}-all-{load}",
            f"Figure {fig_no}: all schemes at {load}% load",
            _plot_cdfs(grid, keys, f"All schemes, {load}% load"),
        )
    for fig_no, load in ((10, 90), (12, 98), (14, 105)):
        f.figure(
            f"fig{fig_no}-bytes-{load}",
            f"Figure {fig_no}: fraction of bytes by response size, {load}% load",
            _bytes_figure(d, load),
        )
    small = cdf_grid(d, small=True)
    for fig_no, load in ((15, 90), (17, 98)):
        keys = [(s, load, s) for s in d.schemes()]
        f.figure(
            f"fig{fig_no}-small-{load}",
            f"Figure {fig_no}: responses up to 100 kB, {load}% load",
            _plot_cdfs(small, keys, f"Responses <= 100 kB, {load}% load"),
        )
    for fig_no, load in ((16, 90), (18, 98)):
        f.figure(
            f"fig{fig_no}-large-{load}",
            f"Figure {fig_no}: responses over 100 kB, {load}% load",
            _large_figure(d, load),
        )
    f.table("table1", "Table 1: loss, completed exchanges, throughput (HTTP)", table1(d))


def _bytes_figure(d: Data, load: Any) -> Figure:
    fig = Figure(figsize=(6, 4.2))
    ax = fig.add_subplot()
    b = d.bytes[d.bytes["load"] == load]
    for s in d.schemes():
        h = b[b["scheme"] == s].groupby("bin")["bytes"].sum().sort_index()
        if h.empty:
            continue
        ax.plot(10 ** ((h.index + 1) / 10), h.cumsum() / h.sum(), label=s, **_STYLE.get(s, {}))
    ax.set_xscale("log")
    ax.set_xlabel("response size (bytes)")
    ax.set_ylabel("fraction of bytes in responses of at most this size")
    ax.set_title(f"Fraction of bytes by response size, {load}% load")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def _large_figure(d: Data, load: Any) -> Figure:
    fig = Figure(figsize=(6, 4.2))
    ax = fig.add_subplot()
    big = d.big[d.big["load"] == load]
    for s in d.schemes():
        x = np.sort(big[big["scheme"] == s]["rt"].to_numpy(dtype=float))
        x = x[np.isfinite(x)]
        if len(x):
            ax.plot(x * 1000, np.arange(1, len(x) + 1) / len(x), label=s, **_STYLE.get(s, {}))
    ax.set_xscale("log")
    ax.set_xlabel("response time (ms)")
    ax.set_ylabel("cumulative probability")
    ax.set_title(f"Responses > 100 kB, {load}% load (completed)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def _mix_outputs(f: Findings, d: Data) -> None:
    grid = cdf_grid(d)
    keys = [(s, 0, s) for s in d.schemes()]
    f.figure(
        "fig19-tcp-mix-cdf",
        "Figure 19: response times, general TCP workload",
        _plot_cdfs(grid, keys, "General TCP workload: response-time CDF"),
    )
    fig = Figure(figsize=(6, 4.2))
    ax = fig.add_subplot()
    # The CCDF over the whole range comes from the histogram up to 2 s plus the > 100 kB tail.
    x = np.array(grid.columns, dtype=float) * 1000
    for s in d.schemes():
        if (s, 0) in grid.index:
            ax.plot(x, 1 - grid.loc[(s, 0)].to_numpy(), label=s, **_STYLE.get(s, {}))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("response time (ms)")
    ax.set_ylabel("complementary cumulative probability")
    ax.set_title("General TCP workload: response-time CCDF (up to 2 s)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    f.figure("fig20-tcp-mix-ccdf", "Figure 20: CCDF of response times, general TCP workload", fig)
    f.table("table2", "Table 2: general TCP workload", table2(d))
