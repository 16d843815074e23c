"""Seed 004 (DCN) reproduction: the sweeps it defines, the per-run measures, and every claim
decided on synthetic runs with and without the paper's effect."""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from ecnlab.analysis import response_time_summary
from ecnlab.calibration import load_calibration
from ecnlab.reproduce import dcn, get_study, part_sweeps

U = dcn.UNCONGESTED
MIX = dcn.MIX_LOAD


def _runs(mode: str) -> dict[str, list]:
    return {k: s.runs() for k, s in part_sweeps(get_study("dcn"), mode).items()}


# --------------------------------------------------------------------------- the setup


@pytest.mark.parametrize("mode", ["quick", "full"])
def test_parts_have_the_seed_setup(mode: str) -> None:
    runs = _runs(mode)
    n = get_study("dcn").seeds[mode].start
    if mode == "full":
        # 3 loads x (5 schemes + uncongested); ECN: 3 x 3; the mix: 2 schemes + uncongested, 3.
        sizes = {"http": 18, "http-ecn": 9, "tcp-mix": 3, "tcp-mix-ecn": 3}
    else:
        # The headline schemes only: drop-tail, DCN (+ uncongested), PI/ECN; the mix's
        # drop-tail, DCN (+ uncongested) and RIO-PS/ECN.
        sizes = {"http": 9, "http-ecn": 3, "tcp-mix": 3, "tcp-mix-ecn": 1}
    assert {k: len(v) for k, v in runs.items()} == {k: v * n for k, v in sizes.items()}
    http_cal = load_calibration(dcn.DATA / dcn.CALIBRATION[mode]["http"])
    for name, rs in runs.items():
        workload = name.replace("-ecn", "")
        for r in rs:
            sc = r.scenario
            assert sc["warmup_s"] == dcn.WARMUP_S[workload]
            assert sc["duration_s"] == dcn.WARMUP_S[workload] + dcn.WINDOW_S[mode][workload]
            assert sc["tcp"]["min_rto_s"] == 1
            w = sc["workloads"][0]
            assert w["rwnd_bytes"] == {"dist": "constant", "value": 16384}
            assert w["rtt_ms"]["values"] == list(range(10, 151))
            assert len(set(w["rtt_ms"]["weights"])) == 1
            rate = sc["topology"]["bottleneck"]["rate_bps"]
            queue = sc["topology"]["bottleneck"]["queue"]
            aqm = queue.get("aqm", {"kind": "droptail"})
            assert rate == (1e9 if r.reference else 100e6)
            # ECN at the endpoints exactly in the ECN parts, and then every AQM marks.
            assert sc["tcp"]["ecn"] is name.endswith("-ecn")
            assert aqm.get("ecn", False) is name.endswith("-ecn")
            if aqm["kind"] == "droptail":
                assert queue["limit_pkts"] == 240
            else:
                assert queue["limit_pkts"] == dcn.AQM_LIMIT_PKTS
            if name.startswith("http"):
                load = r.axes["load"]
                assert w["rate_per_s"] == pytest.approx(
                    http_cal.knob_values(load)["workloads.0.rate_per_s"]
                )
    q_refs = {
        (r.labels["scheme"], r.scenario["topology"]["bottleneck"]["queue"]["aqm"].get("q_ref_pkts"))
        for r in runs["tcp-mix-ecn"]
    }
    if mode == "full":
        assert ("PI/ECN", 240) in q_refs  # Table 2: PI/ECN with q_ref 240


@pytest.mark.parametrize("mode", ["quick", "full"])
def test_each_calibration_was_measured_after_the_warm_up_over_the_modes_window(mode: str) -> None:
    # PackMime's load grows with the age of a run, so a calibration holds for its own window.
    cal = load_calibration(dcn.DATA / dcn.CALIBRATION[mode]["http"])
    assert cal.warmup_s == dcn.WARMUP_S["http"]
    assert cal.duration_s - cal.warmup_s == dcn.WINDOW_S[mode]["http"]
    # The mix is stationary after its warm-up: measured after it, over at least the window.
    mix = load_calibration(dcn.DATA / dcn.CALIBRATION[mode]["tcp-mix"])
    assert mix.warmup_s == dcn.WARMUP_S["tcp-mix"]
    assert mix.duration_s - mix.warmup_s >= dcn.WINDOW_S[mode]["tcp-mix"]


def test_mix_offers_the_asymmetric_loads_per_direction() -> None:
    cal = load_calibration(dcn.DATA / "tcp-mix.calibration.json")
    knobs = cal.knob_values(dcn.MIX_TARGET_MBPS)
    for r in _runs("quick")["tcp-mix"]:
        rates = [w["arrival_rate_per_s"] for w in r.scenario["workloads"]]
        assert rates == pytest.approx(
            [knobs["workloads.0.arrival_rate_per_s"], knobs["workloads.1.arrival_rate_per_s"]]
        )


def test_warmups_and_windows_are_set_and_the_full_mode_keeps_its_budget() -> None:
    for workload in ("http", "tcp-mix"):
        assert dcn.WARMUP_S[workload] > 0
        for mode in ("quick", "full"):
            assert dcn.WINDOW_S[mode][workload] > 0
    # Simulated seconds of the full mode at its seed cap (every part grown to the cap).
    study = get_study("dcn")
    cap = study.seeds["full"].cap
    total = sum(
        len(s.runs()) * s.runs()[0].scenario["duration_s"]
        for s in part_sweeps(study, "full", at="cap").values()
    )
    assert total == pytest.approx(cap * dcn.full_simulated_s_per_seed())
    assert study.seeds["full"].start >= 3


# --------------------------------------------------------------------------- per-run measures


def test_run_measures_are_the_kaplan_meier_estimates() -> None:
    rng = np.random.default_rng(3)
    n = 4000
    t = rng.exponential(0.3, n)
    size = np.where(rng.random(n) < 0.05, 2e5, 2e3)
    # Unfinished exchanges: censored at their elapsed time (shorter than their response).
    done = rng.random(n) > 0.1
    elapsed = np.where(done, t, t * rng.random(n))
    ex = pd.DataFrame({"elapsed_s": elapsed, "completed": done, "response_bytes": size})
    got = dcn.run_measures(ex, sizes=True)
    ref = response_time_summary(ex.assign(g=1), "g", at_s=(0.5, 1.0, 2.0), horizon_s=2.0)
    assert got["rm2_s"] == pytest.approx(ref["mean_s"].iloc[0])
    assert got["f_0.5"] == pytest.approx(ref["F_0.5"].iloc[0])
    assert got["f_2"] == pytest.approx(ref["F_2"].iloc[0])
    assert got["unfinished"] == int((~done).sum()) and got["exchanges"] == n
    assert got["unfinished_large"] == int((~done & (size > 1e5)).sum())
    # Censoring raises the estimate above the completed-only one, never hides it.
    assert got["rm2_s"] > np.minimum(t[done], 2.0).mean() * 0.99
    # Counting the unfinished at their elapsed time is a lower bound.
    assert got["rm2_s"] >= ref["mean_lower_s"].iloc[0]
    # The CDF is monotone, read every millisecond.
    assert len(got["cdf"]) == 2000 and np.all(np.diff(got["cdf"]) >= 0)
    # Quantiles of the large responses: the estimate never reaches 99% when a tenth of them are
    # censored early? It may; wherever it does not, the quantile is infinite, not dropped.
    q = got["large_q"]
    assert np.all(np.diff(q[np.isfinite(q)]) >= 0)
    # Sizes: shares over every response that started; bytes of the completed ones.
    assert got["n_gt_1e5"] == pytest.approx(np.mean(size > 1e5))
    share = size[done & (size <= 1e5)].sum() / size[done].sum()
    assert got["done_le_1e5"] == pytest.approx(share)


def test_km_quantiles_are_infinite_beyond_the_estimate() -> None:
    t = np.array([1.0, 2.0, 3.0, 4.0])
    done = np.array([True, True, False, False])
    q = dcn.km_quantiles(t, done, np.array([0.25, 0.5, 0.75]))
    assert q[0] == 1.0 and q[1] == 2.0 and math.isinf(q[2])
    assert dcn.km_curve(t, done, np.array([0.5, 1.0, 2.5]))[2] == pytest.approx(0.5)


# --------------------------------------------------------------------------- synthetic runs


def _exp_curve(tau: float) -> np.ndarray:
    return 1 - np.exp(-dcn.GRID_S / tau)


def _configs() -> list[tuple[str, int, str]]:
    """(part, load, scheme) of every configuration the study runs."""
    out = []
    for load in dcn.LOADS:
        for s in (U, *dcn.HTTP_SCHEMES):
            out.append((dcn._part_of(s, "http"), load, s))
    for s in (U, *dcn.MIX_SCHEMES):
        out.append((dcn._part_of(s, "tcp-mix"), MIX, s))
    return out


def paper_world() -> dict[tuple[int, str], dict[str, Any]]:
    """Per configuration, measures in which every claim of the paper holds: Tables 1 and 2 as
    printed, the workload of Figures 1-2, and response-time scales (exponential, s) ordered as
    the paper's figures."""
    tau = {
        90: {
            U: 0.2,
            "DCN": 0.205,
            "PI/ECN": 0.206,
            "PI": 0.21,
            "AFD": 0.212,
            "AFD/ECN": 0.212,
            "RIO-PS": 0.209,
            "RIO-PS/ECN": 0.208,
            "drop-tail": 0.26,
        },
        98: {
            U: 0.2,
            "DCN": 0.215,
            "PI/ECN": 0.218,
            "PI": 0.3,
            "AFD": 0.26,
            "AFD/ECN": 0.25,
            "RIO-PS": 0.24,
            "RIO-PS/ECN": 0.235,
            "drop-tail": 0.32,
        },
        105: {
            U: 0.2,
            "DCN": 0.22,
            "PI/ECN": 0.224,
            "PI": 0.36,
            "AFD": 0.29,
            "AFD/ECN": 0.28,
            "RIO-PS": 0.255,
            "RIO-PS/ECN": 0.25,
            "drop-tail": 0.35,
        },
        MIX: {
            U: 0.2,
            "DCN": 0.21,
            "RIO-PS/ECN": 0.212,
            "PI/ECN": 0.24,
            "AFD/ECN": 0.25,
            "drop-tail": 0.26,
        },
    }
    world: dict[tuple[int, str], dict[str, Any]] = {}
    for _, load, s in _configs():
        w: dict[str, Any] = {
            "tau": tau[load][s],
            "tau_small": tau[load][s] * (0.95 if s == "DCN" else 1.0),
        }
        if load == MIX:
            p = dcn.PAPER_TABLE2[s]
            w.update(
                completed=p[0],
                loss_down_pct=p[1],
                loss_up_pct=p[2],
                delivered_down_mbps=p[3],
                delivered_up_mbps=p[4],
            )
        else:
            p = dcn.PAPER_TABLE1[(s, load)]
            w.update(
                loss_down_pct=p[0],
                loss_up_pct=p[0] / 4,
                completed=p[1],
                delivered_down_mbps=p[2],
                delivered_up_mbps=p[2] / 10,
            )
            w.update(n_le_1e4=0.9, b_le_1e4=0.2, n_gt_1e5=0.006, n_gt_1e6=0.004, b_gt_1e6=0.25)
            w.update(
                done_le_1e5=0.6 if s == "DCN" else 0.55, done_le_1e6=0.8 if s == "DCN" else 0.75
            )
            w["cross"] = {90: 0.75, 98: 0.40}.get(load, 0.5) if s == "DCN" else None
        world[(load, s)] = w
    return world


SCALED = ("completed", "delivered_down_mbps", "delivered_up_mbps", "tau", "tau_small")
"""Measures that move together across the configurations of a seed (the seed's traffic)."""


def frames_of(
    world: dict[tuple[int, str], dict[str, Any]], seeds: int = 5, seed: int = 1
) -> dict[str, pd.DataFrame]:
    """Per-run frames from per-configuration means: each seed scales the traffic-driven
    measures of all its configurations by one common factor (common random numbers), and each
    run adds its own small noise."""
    rng = np.random.default_rng(seed)
    rows: dict[str, list[dict[str, Any]]] = {}
    common = {k: np.exp(rng.normal(0, 0.04, seeds)) for k in SCALED}
    for part, load, s in _configs():
        w = world[(load, s)]
        for i in range(seeds):

            def v(k: str, i: int = i, w: dict = w) -> float:
                x = w[k] * (common[k][i] if k in SCALED else 1.0)
                return float(x * np.exp(rng.normal(0, 0.004)))

            tau, tau_s = v("tau"), v("tau_small")
            r: dict[str, Any] = {"seed": i + 1, "load": load, "scheme": s}
            for k in (
                "completed",
                "loss_down_pct",
                "loss_up_pct",
                "delivered_down_mbps",
                "delivered_up_mbps",
            ):
                r[k] = v(k)
            r["cdf"] = _exp_curve(tau)
            r["rm2_s"] = tau * (1 - math.exp(-dcn.HORIZON_S / tau))
            r["rm2_small_s"] = tau_s * (1 - math.exp(-dcn.HORIZON_S / tau_s))
            if load != MIX:
                for k in (
                    "n_le_1e4",
                    "b_le_1e4",
                    "n_gt_1e5",
                    "n_gt_1e6",
                    "b_gt_1e6",
                    "done_le_1e5",
                    "done_le_1e6",
                ):
                    r[k] = v(k)
                base = 5.0 * -np.log1p(-dcn.QUANTILES) * common["tau"][i]
                g = (
                    np.ones_like(base)
                    if w["cross"] is None
                    else np.where(dcn.QUANTILES < w["cross"], 0.8, 1.25)
                )
                r["large_q"] = base * g * np.exp(rng.normal(0, 0.004))
            rows.setdefault(part, []).append(r)
    return {p: pd.DataFrame(rs) for p, rs in rows.items()}


def _set(world: dict, loads: Any, schemes: Any, **values: Any) -> None:
    loads = loads if isinstance(loads, (list, tuple)) else [loads]
    schemes = schemes if isinstance(schemes, (list, tuple)) else [schemes]
    for load in loads:
        for s in schemes:
            world[(load, s)].update(values)


def _scale(world: dict, key: str, factor: float, loads: Any, schemes: Any) -> None:
    for load in loads:
        for s in schemes:
            world[(load, s)][key] *= factor


HIGH = (98, 105)
W = dict[tuple[int, str], dict[str, Any]]

WITHOUT: dict[str, Callable[[W], None]] = {
    "workload-response-sizes": lambda w: _set(w, 90, U, n_le_1e4=0.8, n_gt_1e5=0.02),
    "fig5-dcn-near-uncongested": lambda w: _set(w, 105, "DCN", tau=0.3),
    "all-but-droptail-good-at-90": lambda w: _set(w, 90, "drop-tail", tau=0.2),
    "dcn-vs-pi-ecn": lambda w: _set(w, HIGH, "PI/ECN", tau=0.2) or _set(w, HIGH, "DCN", tau=0.24),
    "dcn-pi-ecn-superior": lambda w: _set(w, HIGH, "RIO-PS/ECN", tau=0.205),
    "best-aqm-beat-droptail": lambda w: _set(w, dcn.LOADS, "drop-tail", tau=0.2),
    "pi-ecn-vs-differential": lambda w: _set(w, 90, "AFD", tau=0.15),
    "differential-order": lambda w: _set(w, dcn.LOADS, ("RIO-PS", "RIO-PS/ECN"), tau=0.4),
    "pi-needs-ecn": lambda w: _set(w, HIGH, "PI", tau=0.218),
    "afd-90-no-ecn-gain": lambda w: _set(w, 90, "AFD/ECN", tau=0.16),
    "afd-degrades": lambda w: _set(w, HIGH, ("AFD", "AFD/ECN"), tau=0.205),
    "afd-ecn-small-gain": lambda w: _set(w, HIGH, "AFD/ECN", tau=0.30),
    "rio-ps-ecn-little": lambda w: _set(w, dcn.LOADS, "RIO-PS", tau=0.35),
    "table1-loss": lambda w: _scale(w, "loss_down_pct", 0.25, dcn.LOADS, dcn.HTTP_SCHEMES),
    "table1-completed": lambda w: [
        _set(w, load, dcn.HTTP_SCHEMES, completed=w[(load, U)]["completed"]) for load in dcn.LOADS
    ],
    "table1-utilization": lambda w: [
        _set(
            w,
            load,
            dcn.HTTP_SCHEMES,
            delivered_down_mbps=w[(load, U)]["delivered_down_mbps"] * 0.99,
        )
        for load in dcn.LOADS
    ],
    "loss-growth": lambda w: _set(w, 105, "DCN", loss_down_pct=12.0),
    "bytes-from-short": lambda w: _set(w, dcn.LOADS, "DCN", done_le_1e5=0.5, done_le_1e6=0.7),
    "small-responses-dcn-best": lambda w: _set(w, (90, 98), "DCN", tau_small=0.25),
    "large-responses-dcn-share": lambda w: _set(w, (90, 98), "DCN", cross=0.05),
    "tcp-mix-dcn-rio-best": lambda w: _set(w, MIX, ("DCN", "RIO-PS/ECN"), tau=0.3),
    "tcp-mix-near-uncongested": lambda w: _set(w, MIX, "DCN", tau=0.35),
    "table2-loss": lambda w: _scale(w, "loss_down_pct", 0.25, [MIX], dcn.MIX_SCHEMES),
    "table2-throughput": lambda w: _set(
        w, MIX, dcn.MIX_SCHEMES, delivered_down_mbps=105.3, delivered_up_mbps=91.2
    ),
    "table2-completed": lambda w: _set(w, MIX, dcn.MIX_SCHEMES, completed=2.75 * 0.85),
}
"""For every claim, a change of the paper's world that removes the paper's effect."""

CLAIMS = {c.id: c for c in dcn.CLAIMS}


def test_every_claim_has_a_world_without_its_effect() -> None:
    assert set(WITHOUT) == set(CLAIMS)


@pytest.fixture(scope="module")
def paper_frames() -> dict[str, pd.DataFrame]:
    return frames_of(paper_world())


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_claim_holds_with_the_papers_effect(claim_id: str, paper_frames: dict) -> None:
    rec = CLAIMS[claim_id].evaluate(paper_frames)
    failing = [t["name"] for t in rec["tests"] if t["verdict"] != "holds"]
    assert rec["verdict"] == "holds", failing
    assert rec["n_seeds"] == 5


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_claim_does_not_hold_without_the_papers_effect(claim_id: str) -> None:
    world = copy.deepcopy(paper_world())
    WITHOUT[claim_id](world)
    rec = CLAIMS[claim_id].evaluate(frames_of(world))
    assert rec["verdict"] != "holds"


def test_a_missing_run_is_reported_not_hidden(paper_frames: dict) -> None:
    frames = dict(paper_frames)
    http = frames["http"]
    frames["http"] = http[~((http["scheme"] == "DCN") & (http["seed"] == 2))]
    rec = CLAIMS["fig5-dcn-near-uncongested"].evaluate(frames)
    assert all("2" in t["not_finite"] for t in rec["tests"])
    assert rec["n_seeds"] == 4


def test_mean_curve_averages_the_seeds_defined_at_each_point() -> None:
    nan = float("nan")
    d = pd.DataFrame(
        {
            "scheme": ["DCN", "DCN", "PI"],
            "load": [90, 90, 90],
            "cdf": [[0.2, 0.6, nan], [0.4, nan, nan], [1.0, 1.0, 1.0]],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = dcn.mean_curve(d, "DCN", 90, "cdf")
    assert y is not None
    assert y[0] == pytest.approx(0.3)
    assert y[1] == pytest.approx(0.6)
    assert math.isnan(y[2])
    assert dcn.mean_curve(d, "DCN", 98, "cdf") is None


def test_the_analysis_draws_every_figure_and_table(paper_frames: dict) -> None:
    frames = {p: f.assign(**_table_columns(f)) for p, f in paper_frames.items()}
    found = dcn._findings(frames)
    for key in (
        "fig5-dcn",
        "fig9-all-90",
        "fig10-bytes-90",
        "fig16-large-90",
        "fig19-tcp-mix-cdf",
        "fig20-tcp-mix-ccdf",
    ):
        assert key in found.figures
    for claim in dcn.CLAIMS:
        assert claim.figure is None or claim.figure in found.figures, claim.id
    t1 = found.tables["table1"][1]
    assert t1.loc[("105%", "drop-tail"), "loss % (paper)"] == 8.8
    assert "unfinished exchanges (ecnlab)" in t1.columns
    assert found.tables["table2"][1].loc["DCN", "fwd loss % (paper)"] == 1.0


def _table_columns(f: pd.DataFrame) -> dict[str, Any]:
    """The columns the tables and figures read beyond what the claims need."""
    n = len(f)
    grid_log = [1 - np.exp(-dcn.LOG_GRID_S / 0.2)] * n
    return {
        "completed_per_90min_m": f["completed"],
        "overflow_down": [0] * n,
        "unfinished": [3] * n,
        "unfinished_large": [1] * n,
        "exchanges": [1000] * n,
        "f_0.5": [0.9] * n,
        "f_1": [0.95] * n,
        "f_2": [0.99] * n,
        "cdf_small": f["cdf"],
        "cdf_log": grid_log,
        "cdf_large_log": grid_log,
        "bytes_done": [np.linspace(0, 1, len(dcn.SIZE_GRID_B))] * n,
    }
