"""Seed 002 (ABE) reproduction: the grids, the setup, the claims on synthetic runs, the
operating point and the analysis helpers (no long runs)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import duckdb
import ecnlab
import numpy as np
import pandas as pd
import pytest
from ecnlab.models import buffer_sizing
from ecnlab.reproduce import abe, get_study, part_sweeps
from ecnlab.reproduce import verdict as V


def _parts(mode: str) -> dict[str, Any]:
    return dict(part_sweeps(get_study("abe"), mode))


# ----- setup ------------------------------------------------------------------------------------


def test_quick_is_a_subset_of_full_that_keeps_every_point_a_claim_reads() -> None:
    quick, full = abe.grids("quick"), abe.grids("full")
    assert quick.keys() == full.keys()
    for key, values in quick.items():
        if isinstance(values, list):
            assert set(values) <= set(full[key]), key
    # Points the claims read (CLAIMS): RTT 100 and 400 ms, the beta_ecn the paper quotes.
    assert {100, 400} <= set(quick["one_flow_rtts"])
    assert {0.5, 0.8, 0.85, 0.95} <= set(quick["newreno_betas"])
    assert {0.7, 0.85, 0.95} <= set(quick["cubic_betas"])
    assert {40, 160, 320} <= set(quick["fig8_rtts"])
    assert {20, 80, 160, 240} <= set(quick["fig2_rtts"])
    assert quick["mix_rtts"] == full["mix_rtts"] == [20, 80, 160, 320]  # the paper's average
    assert quick["mix_betas"] == full["mix_betas"]
    assert abe.FIG1_SMALL_BUFFER in quick["fig1_buffers"]
    assert quick["conv_cubic_betas"][0] == 0.7 and quick["conv_newreno_betas"][0] == 0.5
    assert len(full["conv_rates"]) * len(full["conv_rtts"]) == 48  # the seed's 48 combinations


def test_every_part_is_valid_and_full_is_the_seed_grid() -> None:
    study = get_study("abe")
    quick, full = _parts("quick"), _parts("full")
    assert quick.keys() == full.keys() == abe.SEEDS["quick"].keys() == abe.SEEDS["full"].keys()
    # Figures 9 and 10: the seed's 384 and 576 experiments per seed.
    per_seed = {n: len(s.runs()) // study.seed_plan("full", n).start for n, s in full.items()}
    assert per_seed["fig9-cubic"] == 384 and per_seed["fig10-newreno"] == 576
    assert study.seed_plan("full", "fig4-7-newreno").start == 10  # ten runs in Figs. 4-8
    # Every part may be looked at twice: one Bonferroni divisor for the study.
    for mode in ("quick", "full"):
        assert {p.looks for p in abe.SEEDS[mode].values()} == {2}


def test_the_setup_follows_section_iv() -> None:
    runs = _parts("quick")["fig4-7-newreno"].runs()
    queues = {r.labels["aqm"]: r.scenario["topology"]["bottleneck"]["queue"] for r in runs}
    assert queues["CoDel"]["limit_pkts"] == queues["PIE"]["limit_pkts"] == 1000
    codel, pie = queues["CoDel"]["aqm"], queues["PIE"]["aqm"]
    assert (codel["target_ms"], codel["interval_ms"], codel["ecn"]) == (5.0, 100.0, True)
    assert pie["variant"] == "linux_early" and pie["drop_above_mark_ecnth"] is False
    assert (pie["target_ms"], pie["tupdate_ms"], pie["alpha"], pie["beta"]) == (20, 30, 0.125, 1.25)
    assert (pie["max_burst_ms"], pie["byte_mode"]) == (100, False)
    run = next(r for r in runs if r.labels["rtt"] == "400 ms" and r.axes["beta_ecn"] == 0.8)
    tcp = run.scenario["tcp"]
    assert (tcp["abe"], tcp["beta"], tcp["beta_ecn"], tcp["ecn"]) == (True, 0.5, 0.8, True)
    assert run.scenario["topology"]["bottleneck"]["delay_ms"] == 200.0
    cubic = _parts("quick")["fig4-7-cubic"].runs()[0].scenario["tcp"]
    assert (cubic["congestion_control"], cubic["beta"], cubic["cubic_fast_convergence"]) == (
        "cubic",
        0.7,
        False,
    )
    fig1 = _parts("quick")["fig1-buffer"].runs()
    limits = {
        r.axes["buffer"]: r.scenario["topology"]["bottleneck"]["queue"]["limit_pkts"] for r in fig1
    }
    assert limits == {b: abe.fig1_limit_pkts(b) for b in abe.grids("quick")["fig1_buffers"]}


def test_the_mix_pits_ecn_cubic_with_abe_against_non_ecn_newreno() -> None:
    run = _parts("quick")["fig11-12-mix"].runs()[0]
    cubic, newreno = run.scenario["workloads"]
    assert cubic["tcp"]["congestion_control"] == "cubic" and cubic["tcp"]["ecn"]
    assert cubic["tcp"]["beta_ecn"] == run.axes["beta_ecn"]
    assert "tcp" not in newreno and newreno["host_offset"] == 10
    assert run.scenario["tcp"]["ecn"] is False
    assert run.scenario["tcp"]["congestion_control"] == "newreno"


def test_the_mix_runs_each_group_with_its_own_tcp() -> None:
    # A shortened run of the mix: only the CUBIC group negotiates ECN and is marked.
    run = _parts("quick")["fig11-12-mix"].runs()[0]
    scenario = {**run.scenario, "duration_s": 5.0, "warmup_s": 1.0}
    flows = ecnlab.run(scenario, seed=1, progress=False).flows.to_pandas()
    by = flows.groupby("workload")
    assert by["ecn"].all()[0] and not by["ecn"].any()[1]
    assert by["marks"].sum()[1] == 0
    assert 0 < abe.group_ratio(flows)


# ----- the claims on synthetic runs -------------------------------------------------------------
#
# One generic helper builds a part's per-run frame from per-configuration means plus noise per
# seed; a parametric "paper world" gives every part the paper's effects, and for every claim a
# variant of it lacks (or reverses) that claim's effect. Each claim must hold in the paper's
# world and must not hold in its variant.

SEEDS = 8


def synth(
    labels: list[str],
    means: Mapping[tuple[Any, ...], Mapping[str, float]],
    *,
    sd: float,
    seed: int,
    seeds: int = SEEDS,
) -> pd.DataFrame:
    """One row per configuration and seed: the labels, and each measure's mean plus
    independent normal noise of ``sd``."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(1, seeds + 1):
        for key, cols in means.items():
            row: dict[str, Any] = {"seed": s, **dict(zip(labels, key))}
            for col, mean in cols.items():
                row[col] = mean + rng.normal(0.0, sd)
            rows.append(row)
    return pd.DataFrame(rows)


PAPER: dict[str, Any] = {
    "fig1_error": 0.0,  # simulated minus model utilisation
    "fig1_beta_scale": 1.0,  # share of the model's beta effect
    "fig2_loss": 0.4,  # relative loss of throughput from 20 to 240 ms
    "fig2_ecn_help": 0.0,  # throughput ECN adds
    "fig3_gain": 0.2,  # goodput over 30 s, 0.9 over 0.5
    "nr_gain": {"CoDel": 0.24, "PIE": 0.23},  # at 400 ms, beta_ecn 0.8
    "nr_gain_100_share": 0.4,  # the gain at 100 ms as a share of that at 400 ms
    "nr_growth": 1.0,  # gain grows linearly with beta_ecn: 1; flat above 0.8: 0
    "nr_delay": abe._FIG5,
    "codel_p50_ms": 5.0,
    "cu_gain": {"CoDel": (0.15, 0.25), "PIE": (0.10, 0.15)},
    "cu_delay": abe._FIG7,
    "fig8_gain": {40: 0.2, 160: 0.5, 320: 0.7},
    "fig8_p50_rise_ms": 0.0,
    "rho": {"fig9-cubic": {"CoDel": 1.1, "PIE": 1.1}, "fig10-newreno": {"CoDel": 1.1, "PIE": 0.8}},
    "mix_base": 1.5,  # average ratio at beta_ecn 0.7
    "mix_slope": 1.0,  # average ratio per unit of beta_ecn
    "mix_top": None,  # the ratio at 0.9, if not on the slope
    "mix_pie_offset": 0.0,
}


def _delay_rises(
    table: Mapping[float, tuple[Any, Any]], scale: float
) -> dict[float, tuple[float, float]]:
    """The paper's rises of the median and p90 (a '<x' figure taken as half of x)."""
    out = {}
    for beta, (p50, p90) in table.items():
        p90v = float(p90[1:]) / 2 if isinstance(p90, str) else p90
        out[beta] = (scale * p50, scale * p90v)
    return out


def world(**changes: Any) -> dict[str, pd.DataFrame]:
    """Every part's per-run measures in a world with the paper's effects (``PAPER``),
    ``changes`` applied."""
    p = {**PAPER, **changes}
    frames: dict[str, pd.DataFrame] = {}
    bdp = abe.fig1_bdp_pkts()
    fig1, model = {}, {}
    for beta in (0.5, 0.7, 0.9):
        for b in (0.1, 0.3, 0.5, 1.0):
            model[(beta, b)] = buffer_sizing.utilization(abe.fig1_limit_pkts(b), bdp, beta)
            base = buffer_sizing.utilization(abe.fig1_limit_pkts(b), bdp, 0.5)
            u = base + p["fig1_beta_scale"] * (model[(beta, b)] - base) + p["fig1_error"]
            fig1[(beta, b)] = {"utilization": u}
    frame = synth(["beta", "buffer_bdp"], fig1, sd=0.004, seed=1)
    frame["model"] = [model[k] for k in zip(frame["beta"], frame["buffer_bdp"])]
    frames["fig1-buffer"] = frame
    fig2 = {}
    for aqm in abe.AQMS:
        for ecn in ("no", "yes"):
            for rtt in (20, 80, 160, 240):
                t = 0.95 * (1 - p["fig2_loss"] * (rtt - 20) / 220)
                fig2[(aqm, ecn, rtt)] = {
                    "throughput": t + (p["fig2_ecn_help"] if ecn == "yes" else 0)
                }
    frames["fig2-rtt"] = synth(["aqm", "ecn", "rtt_ms"], fig2, sd=0.01, seed=2)
    fig3 = {
        (rtt, beta): {"goodput_30s": 0.5 + (p["fig3_gain"] if beta == 0.9 else 0.0)}
        for rtt in (160, 240)
        for beta in (0.5, 0.9)
    }
    frames["fig3-cwnd"] = synth(["rtt_ms", "beta_ecn"], fig3, sd=0.01, seed=3)
    frames[abe.NR] = _one_flow_world(p, "nr", 0.5, (0.5, 0.8, 0.85, 0.95), seed=4)
    frames[abe.CU] = _one_flow_world(p, "cu", 0.7, (0.7, 0.85, 0.95), seed=5)
    fig8 = {}
    for rtt, g in p["fig8_gain"].items():
        for beta in (0.5, 0.8, 0.95):
            gain = g * (beta - 0.5) / 0.45
            rise = p["fig8_p50_rise_ms"] * (beta - 0.5) / 0.45
            fig8[(rtt, beta)] = {"throughput": 0.5 * (1 + gain), "p50_ms": 3.0 + rise}
    frames["fig8-newreno-20m"] = synth(["rtt_ms", "beta_ecn"], fig8, sd=0.003, seed=6)
    for part, betas in (("fig9-cubic", (0.7, 0.8, 0.85, 0.9)), ("fig10-newreno", (0.5, 0.7, 0.85))):
        frames[part] = _conv_world(p["rho"][part], betas, seed=7)
    mix = {}
    factors = {20: 1.6, 80: 0.6, 160: 1.0, 320: 0.8}  # mean 1: the average is the base line
    for aqm in abe.AQMS:
        for beta in (0.7, 0.75, 0.8, 0.85, 0.9):
            avg = p["mix_base"] + p["mix_slope"] * (beta - 0.7)
            if beta == 0.9 and p["mix_top"] is not None:
                avg = p["mix_top"]
            avg += p["mix_pie_offset"] if aqm == "PIE" else 0.0
            for rtt, f in factors.items():
                mix[(aqm, rtt, beta)] = {"ratio": avg * f}
    frames["fig11-12-mix"] = synth(["aqm", "rtt_ms", "beta_ecn"], mix, sd=0.03, seed=8)
    return frames


def _one_flow_world(p: dict[str, Any], cc: str, base: float, betas: tuple[float, ...], seed: int):
    means = {}
    for aqm in abe.AQMS:
        rises = _delay_rises(p[f"{cc}_delay"][aqm], 1.0)
        for rtt in (100, 400):
            for beta in betas:
                if cc == "nr":
                    g400 = (
                        p["nr_gain"][aqm]
                        / 0.3
                        * min(beta - 0.5, 0.3 + p["nr_growth"] * max(beta - 0.8, 0))
                    )
                    gain = g400 * (1.0 if rtt == 400 else p["nr_gain_100_share"])
                else:
                    g85, g95 = p["cu_gain"][aqm]
                    gain = {0.7: 0.0, 0.85: g85, 0.95: g95}[beta] * (1.0 if rtt == 400 else 0.5)
                r50, r90 = rises.get(beta, (0.0, 0.0))
                p50 = (p["codel_p50_ms"] if aqm == "CoDel" else 8.0) + r50
                means[(aqm, rtt, beta)] = {
                    "throughput": 0.6 * (1 + gain),
                    "p50_ms": p50,
                    "p90_ms": p50 + 3.0 + r90 - r50,
                }
    return synth(["aqm", "rtt_ms", "beta_ecn"], means, sd=0.002, seed=seed)


def _conv_world(rho: Mapping[str, float], betas: tuple[float, ...], seed: int) -> pd.DataFrame:
    """Per seed, 48 (capacity, RTT) cells; rho around each AQM's value (noise 0.2)."""
    means = {
        (aqm, rate, rtt, beta): {"rho_bound": rho[aqm]}
        for aqm in abe.AQMS
        for rate in (1, 5, 10, 20, 40, 100)
        for rtt in (10, 20, 40, 60, 80, 160, 240, 320)
        for beta in betas[1:]
    }
    frame = synth(["aqm", "rate_mbps", "rtt_ms", "beta_ecn"], means, sd=0.2, seed=seed)
    frame["base"] = False
    frame["faster_lo"] = frame["faster_hi"] = (frame["rho_bound"] < 1).astype(float)
    return frame


def _nr_gain(aqm: str, g: float) -> dict[str, float]:
    return {**PAPER["nr_gain"], aqm: g}


def _zero_delay(table: Mapping[float, tuple[Any, Any]]) -> dict[float, tuple[float, float]]:
    return {b: (0.0, 0.0) for b in table}


def _cu_delay(aqm: str) -> dict[str, Any]:
    return {**abe._FIG7, aqm: _zero_delay(abe._FIG7[aqm])}


def _nr_delay(aqm: str) -> dict[str, Any]:
    return {**abe._FIG5, aqm: _zero_delay(abe._FIG5[aqm])}


WITHOUT: dict[str, dict[str, Any]] = {
    "fig1-model": {"fig1_error": -0.1},
    "fig1-beta": {"fig1_beta_scale": 0.0},
    "fig2-rtt": {"fig2_loss": 0.0},
    "fig2-ecn": {"fig2_ecn_help": 0.3},
    "fig3-slowstart": {"fig3_gain": 0.0},
    "fig4-gain-codel": {"nr_gain": _nr_gain("CoDel", 0.0)},
    "fig4-gain-pie": {"nr_gain": _nr_gain("PIE", 0.6)},
    "fig4-rtt": {"nr_gain_100_share": 1.0},
    "fig4-grows": {"nr_growth": 0.0},
    "fig5-delay-codel": {"nr_delay": _nr_delay("CoDel")},
    "fig5-delay-pie": {"nr_delay": _nr_delay("PIE")},
    "fig5-codel-target": {"codel_p50_ms": 1.2},
    "fig6-cubic-less": {"nr_gain": {"CoDel": 0.05, "PIE": 0.05}},
    "fig6-gain-codel": {"cu_gain": {**PAPER["cu_gain"], "CoDel": (0.45, 1.4)}},
    "fig6-gain-pie": {"cu_gain": {**PAPER["cu_gain"], "PIE": (0.0, 0.0)}},
    "fig7-delay-codel": {"cu_delay": _cu_delay("CoDel")},
    "fig7-delay-pie": {"cu_delay": _cu_delay("PIE")},
    "fig8-rtt": {"fig8_gain": {40: 0.4, 160: 0.4, 320: 0.4}},
    "fig8-median-rtt": {"fig8_p50_rise_ms": 20.0},
    "fig9-convergence": {"rho": {**PAPER["rho"], "fig9-cubic": {"CoDel": 2.0, "PIE": 2.0}}},
    "fig9-not-faster": {"rho": {**PAPER["rho"], "fig9-cubic": {"CoDel": 0.8, "PIE": 0.8}}},
    "fig10-convergence": {"rho": {**PAPER["rho"], "fig10-newreno": {"CoDel": 2.0, "PIE": 2.0}}},
    "fig10-pie-faster": {"rho": {**PAPER["rho"], "fig10-newreno": {"CoDel": 1.1, "PIE": 1.1}}},
    "fig11-12-top": {"mix_top": 3.0},
    "fig11-12-mid": {"mix_base": 2.3},
    "fig11-12-near-default": {"mix_slope": 4.0},
    "fig11-12-grows": {"mix_slope": 0.0},
    "fig11-12-aqm-alike": {"mix_pie_offset": 0.6},
}


def test_every_claim_has_a_world_without_its_effect() -> None:
    assert set(WITHOUT) == {c.id for c in abe.CLAIMS}
    assert all(c.origin == "paper" for c in abe.CLAIMS)


CLAIM_BY_ID = {c.id: c for c in abe.CLAIMS}
PAPER_WORLD = world()


@pytest.mark.parametrize("claim_id", sorted(WITHOUT))
def test_a_claim_holds_with_the_papers_effect_and_not_without(claim_id: str) -> None:
    claim = CLAIM_BY_ID[claim_id]
    with_effect = claim.evaluate(PAPER_WORLD)
    assert with_effect["verdict"] == "holds", with_effect["tests"]
    assert with_effect["n_seeds"] == SEEDS
    without = claim.evaluate(world(**WITHOUT[claim_id]))
    assert without["verdict"] != "holds", without["tests"]


def test_a_missing_run_shows_as_a_seed_without_a_value() -> None:
    frames = dict(PAPER_WORLD)
    mix = frames["fig11-12-mix"]
    gone = (mix["seed"] == 3) & (mix["aqm"] == "CoDel") & (mix["beta_ecn"] == 0.9)
    frames["fig11-12-mix"] = mix.drop(mix.index[gone][:1])
    rec = CLAIM_BY_ID["fig11-12-top"].evaluate(frames)
    codel = rec["tests"][0]
    assert codel["n_seeds"] == SEEDS - 1 and "3" in codel["not_finite"]


def test_bands_are_a_third_of_the_papers_figure_or_the_floor() -> None:
    assert abe.band(0.24) == V.near(0.24, 0.08)
    assert abe.band(1.0, 1.0) == V.between(0.0, 2.0)
    assert abe.band(15.0, 1.0) == V.between(10.0, 20.0)


def test_over_cells_needs_every_cell_of_the_grid() -> None:
    frame = pd.DataFrame(
        {"seed": [1, 1, 2, 2, 3], "x": [1, 2, 1, 2, 1], "v": [1.0, 3.0, 2.0, 4.0, 5.0]}
    )
    q = abe.over_cells("p", ["x"], lambda g: g["v"].mean(), "mean of v")
    values = q.values({"p": frame})
    assert values[1] == 2.0 and values[2] == 3.0 and math.isnan(values[3])
    twice = pd.concat([frame, frame.iloc[[0]]])
    assert math.isnan(q.values({"p": twice})[1])


# ----- convergence ------------------------------------------------------------------------------


def _conv_runs(rows: list[tuple[float, float | None]]) -> pd.DataFrame:
    """Cells of one seed: (beta_ecn, T or None when the index never reached 0.95)."""
    return pd.DataFrame(
        [
            {
                "seed": 1,
                "aqm": "PIE",
                "rate_mbps": 10,
                "rtt_ms": rtt,
                "beta_ecn": beta,
                "T_s": math.nan if t is None else t,
                "t0_s": 30.5,
                "duration_s": 300.0,
            }
            for rtt, cell in enumerate(rows)
            for beta, t in cell
        ]
    )


def test_samples_by_run_gives_each_runs_samples_in_time_and_flow_order() -> None:
    """Read in batches smaller than a run (DuckDB 2's batch reader or 1.x's), regrouped by
    run, ordered within each, and only the seeds asked for."""
    con = duckdb.connect()
    con.register("runs", pd.DataFrame({"run_id": ["a", "b", "c"], "seed": [1, 2, 3]}))
    rows = [
        (rid, t, flow, int(1000 * t) + flow)
        for t in (3.0, 1.0, 2.0, 0.5)
        for rid in ("c", "b", "a")
        for flow in (1, 0)
    ]
    con.register(
        "flow_samples",
        pd.DataFrame(rows, columns=["run_id", "t_s", "flow", "delivered_bytes"]),
    )
    got = dict(abe._samples_by_run(con, 2, batch_rows=3))
    assert sorted(got) == ["a", "b"]
    for frame in got.values():
        assert list(frame.columns) == ["t_s", "flow", "delivered_bytes"]
        expected = [(t, f, int(1000 * t) + f) for t in (0.5, 1.0, 2.0, 3.0) for f in (0, 1)]
        assert list(frame.itertuples(index=False, name=None)) == expected


def test_convergence_pairs_bound_rho_and_never_guess_a_censored_order() -> None:
    runs = _conv_runs(
        [
            [(0.5, 10.0), (0.85, 5.0)],  # faster
            [(0.5, 10.0), (0.85, 20.0)],  # slower
            [(0.5, 10.0), (0.85, None)],  # ABE never converged: slower, rho unbounded
            [(0.5, None), (0.85, 100.0)],  # the base never did: ABE faster
            [(0.5, None), (0.85, None)],  # neither: unknown
        ]
    )
    out = abe.convergence_pairs(runs, 0.5)
    abe_runs = out[~out["base"]].sort_values("rtt_ms")
    assert abe_runs["rho"].round(4).tolist()[:2] == [0.5, 2.0]
    assert abe_runs["rho_bound"].tolist()[2] == math.inf
    assert abe_runs["rho"].tolist()[3] == pytest.approx(100.0 / 269.5)
    assert abe_runs["faster"].tolist()[:4] == [1.0, 0.0, 0.0, 1.0]
    assert math.isnan(abe_runs["faster"].tolist()[4])
    assert abe_runs["faster_lo"].tolist() == [1.0, 0.0, 0.0, 1.0, 0.0]
    assert abe_runs["faster_hi"].tolist() == [1.0, 0.0, 0.0, 1.0, 1.0]
    assert out[out["base"]]["rho"].isna().all()
    # A run whose base run is missing has no rho and no order.
    lonely = abe.convergence_pairs(runs[~((runs["rtt_ms"] == 0) & (runs["beta_ecn"] == 0.5))], 0.5)
    first = lonely[(lonely["rtt_ms"] == 0)]
    assert first["rho"].isna().all() and first["faster_lo"].isna().all()


def _two_flows(rate_new: float, t_end: float = 60.0) -> pd.DataFrame:
    """Flow 0 sends 1 MB/s from 0; flow 1 starts at 30 s (first sample at 30.5) at
    ``rate_new`` MB/s while flow 0 keeps 2 - rate_new."""
    rows = []
    t = 0.0
    while t <= t_end + 1e-9:
        before = min(t, 30.0)
        after = max(0.0, t - 30.0)
        rows.append(
            {"t_s": t, "flow": 0, "delivered_bytes": 1e6 * before + 1e6 * (2 - rate_new) * after}
        )
        if t >= 30.5:
            rows.append({"t_s": t, "flow": 1, "delivered_bytes": 1e6 * rate_new * after})
        t = round(t + 0.5, 6)
    return pd.DataFrame(rows)


def test_convergence_time_counts_from_the_new_flow_and_ignores_its_absence() -> None:
    # Equal rates after the start: x = [1, 1] at once, so T is the first sample with both.
    assert abe.convergence_time(_two_flows(1.0), 30.0) == 0.5
    # The newcomer gets 0.5 MB/s against 1.5 MB/s: x1/x0 = 1/3 forever, F = 0.8 < 0.95.
    assert math.isnan(abe.convergence_time(_two_flows(0.5), 30.0))
    # 0.8 against 1.2: x1/x0 = 2/3, F = 25/26 = 0.9615 >= 0.95 from the first joint sample.
    assert abe.convergence_time(_two_flows(0.8), 30.0) == 0.5


def test_convergence_time_waits_for_the_index_to_reach_theta() -> None:
    # The newcomer sends nothing for 10 s, then 1.5 MB/s against 0.5 MB/s.
    rows = []
    for i in range(241):
        t = i * 0.25
        after = max(0.0, t - 30.0)
        x1 = 1.5e6 * max(0.0, after - 10.0)
        x0 = 1e6 * min(t, 30.0) + 1e6 * min(after, 10.0) + 0.5e6 * max(0.0, after - 10.0)
        rows.append({"t_s": t, "flow": 0, "delivered_bytes": x0})
        if t >= 30.0:
            rows.append({"t_s": t, "flow": 1, "delivered_bytes": x1})
    samples = pd.DataFrame(rows)
    T = abe.convergence_time(samples, 30.0)
    # Bytes since 30 s: x0 = 10 + 0.5 s', x1 = 1.5 s' (MB, s' = t - 40); F >= 0.95 when
    # x1 / x0 >= 0.6268 (the root of (1 + r)^2 = 1.9 (1 + r^2)): s' >= 5.28 s, so T is the
    # first sample after 15.28 s.
    assert T == 15.5


# ----- operating point and helpers --------------------------------------------------------------


def _op_frame(**changes: Any) -> dict[str, pd.DataFrame]:
    base = {
        "seed": [1, 2],
        "aqm": ["CoDel", "CoDel"],
        "rtt_ms": [100, 100],
        "beta_ecn": [0.8, 0.8],
        "rtt_path_ms": [100.0, 100.0],
        "base_rtt_ms": [101.5, 102.0],
        "link_rate_mbps": [10.0, 10.0],
        "utilization": [0.9, 0.91],
        "flows": [1, 1],
        "flows_active": [1, 1],
        "max_queue_pkts": [5.0, 6.0],
        "overflow_drops": [0, 0],
        "rtos": [0, 0],
    }
    return {abe.NR: pd.DataFrame({**base, **changes})}


def test_the_operating_point_reports_and_checks_what_the_runs_measured() -> None:
    op = abe.operating_point(_op_frame())
    assert op.ok, op.checks
    row = op.rows.iloc[0]
    assert row["bdp_pkts"] == pytest.approx(10e6 * 0.1 / 12000)
    assert row["buffer_bdp"] == pytest.approx(1000 / row["bdp_pkts"])
    assert row["base_rtt_ms"] == pytest.approx(101.75) and row["seeds"] == 2
    for change, failing in (
        ({"rtt_path_ms": [100.0, 200.0]}, "path RTT"),
        ({"link_rate_mbps": [10.0, 5.0]}, "link rate"),
        ({"flows": [1, 0]}, "flows differ"),
        ({"base_rtt_ms": [101.5, 130.0]}, "smoothed RTT"),
        ({"base_rtt_ms": [98.5, 101.0]}, "smoothed RTT"),
    ):
        bad = abe.operating_point(_op_frame(**change))
        assert [c["check"] for c in bad.checks if not c["ok"]] == [
            c["check"] for c in bad.checks if failing in c["check"]
        ], change


def test_fig1_checks_the_droptail_limit_the_runs_found() -> None:
    frame = pd.DataFrame(
        {
            "seed": [1],
            "beta": [0.5],
            "buffer_bdp": [0.5],
            "limit_pkts": [abe.fig1_limit_pkts(0.5)],
            "rtt_path_ms": [100.0],
            "base_rtt_ms": [130.0],
            "link_rate_mbps": [10.0],
            "utilization": [0.96],
            "flows": [1],
            "flows_active": [1],
            "max_queue_pkts": [abe.fig1_limit_pkts(0.5) - 0.3],
            "overflow_drops": [12],
            "rtos": [0],
        }
    )
    assert abe.operating_point({"fig1-buffer": frame}).ok
    frame["max_queue_pkts"] = 10.0
    assert not abe.operating_point({"fig1-buffer": frame}).ok


def test_gains_pair_each_run_with_the_baseline_of_its_seed() -> None:
    frame = pd.DataFrame(
        {
            "seed": [1, 1, 2, 2],
            "rtt_ms": [100, 100, 100, 100],
            "beta_ecn": [0.5, 0.8, 0.5, 0.8],
            "throughput": [0.5, 0.6, 0.4, 0.6],
        }
    )
    g = abe.gains(frame, ["rtt_ms"], 0.5).sort_values(["seed", "beta_ecn"])
    assert g["gain"].round(6).tolist() == [0.0, 0.2, 0.0, 0.5]


def test_delay_quantiles_are_the_upper_edge_of_the_bin_that_reaches_q() -> None:
    con = duckdb.connect()
    hist = pd.DataFrame(  # noqa: F841 (read by DuckDB by name)
        {
            "run_id": ["a"] * 4 + ["b"] * 2,
            "link": ["bottleneck_down"] * 6,
            "bin_end_ms": [1.0, 2.0, 3.0, 4.0, 0.1, math.inf],
            "packets": [10, 40, 40, 10, 1, 1],
        }
    )
    con.execute("CREATE TABLE sojourn AS SELECT * FROM hist")
    q = abe._delay_quantiles(con).set_index("run_id")
    assert (q.loc["a", "p50_ms"], q.loc["a", "p90_ms"]) == (2.0, 3.0)
    assert q.loc["b", "p50_ms"] == 0.1 and q.loc["b", "p90_ms"] == math.inf


def test_samples_come_one_run_at_a_time_in_order_of_time_and_flow() -> None:
    # Rows of three runs interleaved in no order, read in batches of 4 rows: each run's frame
    # is the one ordering every row at once gives, and seeds above n are left out.
    rng = np.random.default_rng(3)
    rows = [
        (rid, t, flow, int(rng.integers(0, 10**9)))
        for rid in ("r1", "r2", "r3")
        for t in (0.0, 0.1, 0.2, 0.3, 0.4)
        for flow in (0, 1)
    ]
    order = rng.permutation(len(rows))
    samples = pd.DataFrame(  # noqa: F841 (read by DuckDB by name)
        [rows[i] for i in order], columns=["run_id", "t_s", "flow", "delivered_bytes"]
    )
    runs = pd.DataFrame({"run_id": ["r1", "r2", "r3"], "seed": [1, 2, 3]})  # noqa: F841
    con = duckdb.connect()
    con.execute("CREATE TABLE flow_samples AS SELECT * FROM samples")
    con.execute("CREATE TABLE runs AS SELECT * FROM runs")
    got = list(abe._samples_by_run(con, 2, batch_rows=4))
    assert [rid for rid, _ in got] == ["r1", "r2"]
    for rid, frame in got:
        want = con.execute(
            "SELECT t_s, flow, delivered_bytes FROM flow_samples WHERE run_id = ? "
            "ORDER BY t_s, flow",
            [rid],
        ).df()
        pd.testing.assert_frame_equal(frame, want)


def test_group_ratio_is_per_flow_means() -> None:
    flows = pd.DataFrame({"workload": [0, 0, 1, 1, 1], "goodput_bytes": [4, 2, 1, 1, 1]})
    assert abe.group_ratio(flows) == 3.0


def test_the_mix_checks_its_path_and_warm_up_not_a_queue_it_cannot_drain() -> None:
    frame = _op_frame(base_rtt_ms=[140.0, 150.0], flows=[20, 20], flows_active=[20, 19])[abe.NR]
    frame["in_ca_share"] = [1.0, 1.0]
    op = abe.operating_point({"fig11-12-mix": frame})
    assert op.ok, op.checks
    assert not any("smoothed RTT" in c["check"] or "DropTail" in c["check"] for c in op.checks)
    frame["in_ca_share"] = [1.0, 0.95]
    assert not abe.operating_point({"fig11-12-mix": frame}).ok
