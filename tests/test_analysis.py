"""Analysis functions on small hand-made tables with known answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from ecnlab import analysis


def test_cdf_and_ccdf() -> None:
    c = analysis.cdf([3.0, 1.0, 2.0, 2.0, math.nan])
    assert c["x"].tolist() == [1.0, 2.0, 3.0]
    assert c["p"].tolist() == [0.25, 0.75, 1.0]
    cc = analysis.ccdf([1.0, 2.0, 3.0, 4.0])
    assert cc["x"].tolist() == [1.0, 2.0, 3.0]  # P(X > 4) = 0 is dropped for log axes
    assert cc["p"].tolist() == [0.75, 0.5, 0.25]


def test_response_time_cdf_counts_unfinished_exchanges_as_censored() -> None:
    ex = pd.DataFrame(
        {
            "aqm": ["a", "a", "a", "b", "b"],
            "response_time_s": [0.1, 0.3, math.nan, 0.2, 0.2],
            "elapsed_s": [0.1, 0.3, 0.2, 0.2, 0.2],
            "completed": [True, True, False, True, True],
        }
    )
    out = analysis.response_time_cdf(ex, "aqm")
    # a: 0.1 done (1 of 3 at risk), unfinished after 0.2 s, 0.3 done (1 of 1 at risk): the
    # unfinished exchange is neither dropped (which would give 0.5 at 0.1 s) nor done.
    assert out.to_dict("list") == {
        "aqm": ["a", "a", "b"],
        "response_time_s": [0.1, 0.3, 0.2],
        "p": [pytest.approx(1 / 3), 1.0, 1.0],
        "at_risk": [3, 1, 2],
    }
    tail = analysis.response_time_cdf(ex, "aqm", complementary=True)
    assert tail["p"].tolist() == [pytest.approx(2 / 3)]


def test_kaplan_meier_against_a_worked_example() -> None:
    # n = 6; completions at 1, 2, 3, 5; censored at 2 (after the completion at 2) and 4.
    km = analysis.kaplan_meier([1, 2, 2, 3, 4, 5], [True, True, False, True, False, True])
    s = [5 / 6, 5 / 6 * 4 / 5, 5 / 6 * 4 / 5 * 2 / 3, 0.0]
    assert km["x"].tolist() == [1, 2, 3, 5]
    assert km["p"].tolist() == pytest.approx([1 - v for v in s])
    assert km["at_risk"].tolist() == [6, 5, 3, 1]
    # Without censoring it is the empirical CDF.
    x = [0.3, 0.1, 0.2, 0.2]
    assert analysis.kaplan_meier(x, [True] * 4)["p"].tolist() == analysis.cdf(x)["p"].tolist()
    # Nothing completed: no step.
    none = analysis.kaplan_meier([1.0, 2.0], [False, False])
    assert len(none) == 0 and none["at_risk"].dtype == np.int64
    with pytest.raises(ValueError, match="no time"):
        analysis.kaplan_meier([1.0, math.nan], [True, False])


def test_kaplan_meier_is_the_product_limit_at_every_tie_in_any_order() -> None:
    rng = np.random.default_rng(5)
    t = rng.integers(0, 12, 400) / 4  # many ties, completions and censorings mixed
    d = rng.random(400) < 0.6
    km = analysis.kaplan_meier(t, d)
    # By definition: at each completion time x, S *= 1 - completions at x / (t >= x).
    s, p, risk = 1.0, [], []
    xs = np.unique(t[d])
    for x in xs:
        n = int((t >= x).sum())
        s *= 1 - int(((t == x) & d).sum()) / n
        p.append(1 - s)
        risk.append(n)
    assert km["x"].tolist() == xs.tolist()
    assert km["p"].tolist() == pytest.approx(p, abs=1e-12)
    assert km["at_risk"].tolist() == risk
    shuffled = rng.permutation(len(t))
    pd.testing.assert_frame_equal(analysis.kaplan_meier(t[shuffled], d[shuffled]), km)


def test_restricted_mean_is_the_area_under_the_survival_curve() -> None:
    assert analysis.restricted_mean([1, 2, 3], [True] * 3, 10) == pytest.approx(2.0)
    assert analysis.restricted_mean([1, 2, 30], [True] * 3, 10) == pytest.approx(13 / 3)
    # S = 5/6 on [1, 2), 4/6 on [2, 3), 4/9 on [3, 5), 0 after: area 1 + 5/6 + 4/6 + 8/9.
    t, d = [1, 2, 2, 3, 4, 5], [True, True, False, True, False, True]
    assert analysis.restricted_mean(t, d, 10) == pytest.approx(1 + 5 / 6 + 4 / 6 + 8 / 9)
    # Censored observations at their elapsed time give a lower bound.
    assert analysis.restricted_mean(t, d, 10) > np.mean(t)


def test_response_time_summary_reports_unfinished_and_both_means() -> None:
    ex = pd.DataFrame(
        {
            "elapsed_s": [0.2, 0.4, 0.6, 5.0],
            "completed": [True, True, True, False],
        }
    )
    row = analysis.response_time_summary(ex, at_s=(0.5,), horizon_s=10.0).iloc[0]
    assert (row["exchanges"], row["completed"], row["unfinished"]) == (4, 3, 1)
    assert row["F_0.5"] == pytest.approx(0.5)
    assert row["mean_lower_s"] == pytest.approx((0.2 + 0.4 + 0.6 + 5.0) / 4)
    # The unfinished one stays at risk to the horizon: 0.25 * 10 s instead of 0.25 * 5 s.
    assert row["mean_s"] == pytest.approx((0.2 + 0.4 + 0.6) / 4 + 0.25 * 10)


def test_queueing_delay_cdf_from_histogram() -> None:
    sojourn = pd.DataFrame(
        {"bin_start_ms": [0, 1, 3], "bin_end_ms": [1, 2, 4], "packets": [6, 2, 2]}
    )
    out = analysis.queueing_delay_cdf(sojourn)
    assert out["delay_ms"].tolist() == [1, 2, 4]
    assert out["p"].tolist() == pytest.approx([0.6, 0.8, 1.0])


def test_normalized_throughput() -> None:
    links = pd.DataFrame(
        {
            "run": [1, 1, 1, 2],
            "link": ["bottleneck_down", "bottleneck_down", "bottleneck_up", "bottleneck_down"],
            "t_start_s": [0.0, 1.0, 0.0, 0.0],
            "t_end_s": [1.0, 2.0, 1.0, 1.0],
            "delivered_bytes": [1000, 500, 9999, 250],
            "rate": [8000, 8000, 8000, 8000],
        }
    )
    out = analysis.normalized_throughput(links, 8000, "run")
    # Run 1: 1500 of 2 s x 1000 bytes/s; run 2: 250 of 1000. The up link is not counted.
    assert out["normalized_throughput"].tolist() == [0.75, 0.25]
    assert analysis.normalized_throughput(links, "rate", "run").equals(out)


def test_goodput_vs_throughput() -> None:
    flows = pd.DataFrame(
        {
            "group": ["x", "x", "y"],
            "bytes_sent": [1000, 1000, 500],
            "retx_bytes": [100, 100, 0],
            "delivered_bytes": [900, 900, 500],
        }
    )
    out = analysis.goodput_vs_throughput(flows, duration_s=2.0, by="group")
    assert out.to_dict("list") == {
        "group": ["x", "y"],
        "flows": [2, 1],
        "throughput_bps": [8000.0, 2000.0],
        "goodput_bps": [7200.0, 2000.0],
        "retx_share": [0.1, 0.0],
    }


def test_loss_and_mark_rates_by_kind() -> None:
    counts = pd.DataFrame(
        {
            "link": ["d"] * 5,
            "kind": ["data", "data", "data", "syn", "syn"],
            "outcome": ["enqueued", "marked", "dropped", "enqueued", "dropped"],
            "reason": ["none", "early", "overflow", "none", "early"],
            "packets": [70, 20, 10, 3, 1],
        }
    )
    out = analysis.loss_mark_rates(counts).set_index("kind")
    assert out.loc["data", "arrivals"] == 100
    assert out.loc["data", "loss_rate"] == pytest.approx(0.1)
    assert out.loc["data", "mark_rate"] == pytest.approx(0.2)
    assert out.loc["syn", "loss_rate"] == pytest.approx(0.25)
    assert out.loc["syn", "mark_rate"] == 0


def test_jain_and_fairness() -> None:
    assert analysis.jain([5, 5, 5, 5]) == 1.0
    assert analysis.jain([1, 0, 0, 0]) == 0.25
    assert analysis.jain([1, 2, 3]) == pytest.approx(36 / (3 * 14))
    assert math.isnan(analysis.jain([]))
    assert math.isnan(analysis.jain([0, 0]))
    flows = pd.DataFrame(
        {
            "run": [1, 1, 1, 1],
            "workload": [0, 0, 1, 1],
            "goodput_bytes": [10, 10, 0, 30],
        }
    )
    overall = analysis.fairness(flows, "run")
    assert overall["jain"].tolist() == pytest.approx([50**2 / (4 * 1100)])
    per_group = analysis.fairness(flows, "run", group="workload")
    assert per_group["jain"].tolist() == pytest.approx([1.0, 0.5])
    assert per_group["flows"].tolist() == [2, 2]


def test_running_jain_and_convergence() -> None:
    # Flow 1 runs alone until 10 s (1000 bytes); flow 2 joins. From 10 s on, flow 1 gets
    # 100 bytes/s and flow 2 ramps 0, 50, 100, 100, 150 bytes/s.
    samples = pd.DataFrame(
        {
            "t_s": [10, 11, 12, 13, 14, 15, 10, 11, 12, 13, 14, 15],
            "flow": [1] * 6 + [2] * 6,
            "bytes": [1000, 1100, 1200, 1300, 1400, 1500, 0, 0, 50, 150, 250, 400],
        }
    )
    running = analysis.running_jain(samples, start_s=10)
    x1 = [100, 200, 300, 400, 500]
    x2 = [0, 50, 150, 250, 400]
    expected = [(a + b) ** 2 / (2 * (a * a + b * b)) for a, b in zip(x1, x2)]
    assert running["t_s"].tolist() == [10, 11, 12, 13, 14, 15]
    assert math.isnan(running["jain"][0])  # nothing transferred yet
    assert running["jain"][1:].tolist() == pytest.approx(expected)
    # 0.5, 0.735, 0.9, 0.949, then 0.988 >= 0.95 at 15 s.
    assert analysis.convergence_time(running, start_s=10) == 5.0
    assert math.isnan(analysis.convergence_time(running, start_s=10, threshold=0.999))


def test_goodput_gap_and_lockouts() -> None:
    flows = pd.DataFrame(
        {
            "workload": [0, 0, 1, 1, 2, 2],
            "goodput_bytes": [100, 300, 50, 50, 0, 20],
        }
    )
    gap = analysis.goodput_gap(flows).iloc[0]
    assert (gap["best"], gap["worst"]) == (0, 2)
    assert (gap["best_mean"], gap["worst_mean"], gap["gap"]) == (200, 10, 190)
    assert gap["ratio"] == pytest.approx(0.05)
    locked = analysis.lockouts(flows, "workload")
    assert locked["locked_out"].tolist() == [0, 0, 1]
    assert locked["share"].tolist() == [0, 0, 0.5]


def test_mean_ci_student_t() -> None:
    runs = pd.DataFrame({"aqm": ["a"] * 3 + ["b"], "u": [1.0, 2.0, 3.0, 5.0]})
    out = analysis.mean_ci(runs, "u", "aqm").set_index("aqm")
    # mean 2, s = 1, n = 3: t(0.975, 2) = 4.302653 -> half-width 4.302653 / sqrt(3)
    assert out.loc["a", "u_mean"] == 2.0
    assert out.loc["a", "u_ci"] == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert out.loc["a", "u_n"] == 3
    assert math.isnan(out.loc["b", "u_ci"])
    with pytest.raises(ValueError, match="confidence"):
        analysis.mean_ci(runs, "u", confidence=1.5)


@pytest.mark.parametrize(
    ("q", "df", "expected"),
    [(0.975, 1, 12.706205), (0.975, 4, 2.776445), (0.975, 10, 2.228139), (0.95, 30, 1.697261)],
)
def test_t_quantile_matches_tables(q: float, df: int, expected: float) -> None:
    assert analysis.t_quantile(q, df) == pytest.approx(expected, rel=1e-6)
    assert analysis.t_quantile(1 - q, df) == pytest.approx(-expected, rel=1e-6)
