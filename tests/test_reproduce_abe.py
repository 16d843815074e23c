"""Seed 002 (ABE) reproduction: the grids, the setup and the analysis helpers (no long runs)."""

from __future__ import annotations

import math

import ecnlab
import pandas as pd
from ecnlab.reproduce import abe, get_study, part_sweeps


def _parts(mode: str) -> dict[str, object]:
    return dict(part_sweeps(get_study("abe"), mode))


def test_quick_is_a_subset_of_full_that_keeps_every_point_a_claim_reads() -> None:
    quick, full = abe.grids("quick"), abe.grids("full")
    assert quick.keys() == full.keys()
    for key, values in quick.items():
        if isinstance(values, list):
            assert set(values) <= set(full[key]), key
    # Points the claims read: RTT 100 and 400 ms, beta_ecn 0.5, 0.8, 0.85 (NewReno), 0.7 and
    # 0.85 (CUBIC), 0.7-0.9 in the mix.
    assert {100, 400} <= set(quick["one_flow_rtts"])
    assert {0.5, 0.8, 0.85} <= set(quick["newreno_betas"])
    assert {0.7, 0.85} <= set(quick["cubic_betas"])
    assert {0.7, 0.85, 0.9} <= set(quick["mix_betas"])
    assert quick["conv_cubic_betas"][0] == 0.7 and quick["conv_newreno_betas"][0] == 0.5
    assert min(v for k, v in quick.items() if k.endswith("seeds")) >= 3
    assert full["single_seeds"] == 10  # the seed averages ten runs in Figures 4-8
    assert len(full["conv_rates"]) * len(full["conv_rtts"]) == 48  # the seed's 48 combinations


def test_every_part_is_valid_and_full_is_the_seed_grid() -> None:
    quick, full = _parts("quick"), _parts("full")
    assert quick.keys() == full.keys()
    n_quick = sum(len(s.runs()) for s in quick.values())
    n_full = sum(len(s.runs()) for s in full.values())
    assert n_quick < 600
    assert n_full > 4000
    # Figures 9 and 10: the seed's 384 and 576 experiments, times our 3 seeds.
    assert len(full["fig9-cubic"].runs()) == 384 * 3
    assert len(full["fig10-newreno"].runs()) == 576 * 3


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


def test_gains_pair_each_run_with_the_baseline_of_its_seed() -> None:
    frame = pd.DataFrame(
        {
            "seed": [1, 1, 2, 2],
            "rtt": [100, 100, 100, 100],
            "beta_ecn": [0.5, 0.8, 0.5, 0.8],
            "throughput": [0.5, 0.6, 0.4, 0.6],
        }
    )
    g = abe.gains(frame, "throughput", ["rtt"], 0.5).sort_values(["seed", "beta_ecn"])
    assert g["gain"].round(6).tolist() == [0.0, 0.2, 0.0, 0.5]


def test_quantiles_of_a_sojourn_histogram() -> None:
    hist = pd.DataFrame({"bin_end_ms": [1.0, 2.0, 3.0, 4.0], "packets": [10, 40, 40, 10]})
    assert abe.quantile_from_hist(hist, 0.5) == 2.0
    assert abe.quantile_from_hist(hist, 0.9) == 3.0
    assert abe.quantile_from_hist(hist, 0.91) == 4.0
    assert math.isnan(abe.quantile_from_hist(hist.iloc[:0], 0.5))


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


def test_group_ratio_is_per_flow_means() -> None:
    flows = pd.DataFrame({"workload": [0, 0, 1, 1, 1], "goodput_bytes": [4, 2, 1, 1, 1]})
    assert abe.group_ratio(flows) == 3.0
