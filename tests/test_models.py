"""The analytical models (ecnlab.models) and their agreement with the simulator.

The model-only tests are exact arithmetic. The simulation tests run short real simulations
and check what the sources say should hold; each tolerance is stated with its reason.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_one_line_error, invoke
from ecnlab import models
from ecnlab.models import buffer_sizing as buf
from ecnlab.models import throughput as tput
from ecnlab.models.figures import BETAS
from ecnlab.models.mxm1 import (
    BurstModel,
    burst_pmf,
    flow_bursts,
    mean_queue,
    moments,
    queue_pmf,
)
from ecnlab.models.sizes import WEB, general_tcp_mix
from ecnlab.models.validate import (
    run_many,
    simulate_one_flow,
    simulate_queue,
    simulate_random_loss,
)

# --- M^[X]/M/1 arithmetic -------------------------------------------------------------------


def test_flow_bursts_double_from_two_and_cap_at_the_window() -> None:
    assert flow_bursts(1, 44) == [1]
    assert flow_bursts(2, 44) == [2]
    assert flow_bursts(7, 44) == [2, 4, 1]
    assert flow_bursts(14, 44) == [2, 4, 8]
    assert flow_bursts(30, 11) == [2, 4, 8, 11, 5]
    assert flow_bursts(23, 5) == [2, 4, 5, 5, 5, 2]
    assert sum(flow_bursts(12345, 44)) == 12345


def test_burst_pmf_of_equal_flows_matches_the_burst_lists() -> None:
    # Flows of 30 segments under the three windows (5, 11, 44 segments of 1460 B).
    pmf = np.zeros(31)
    pmf[30] = 1.0
    g, per_flow = burst_pmf(pmf)
    lists = {5: flow_bursts(30, 5), 11: flow_bursts(30, 11), 44: flow_bursts(30, 44)}
    weights = {5: 0.20, 11: 0.35, 44: 0.45}
    expect = np.zeros(len(g))
    for w, bursts in lists.items():
        for b in bursts:
            expect[b] += weights[w]
    assert per_flow == pytest.approx(sum(weights[w] * len(b) for w, b in lists.items()))
    np.testing.assert_allclose(g, expect / expect.sum(), rtol=1e-12)


@pytest.mark.parametrize("rho", [0.3, 0.8, 0.95])
@pytest.mark.parametrize("sizes", ["web", "general"])
def test_mean_queue_formula_equals_the_numerical_distribution_mean(sizes: str, rho: float) -> None:
    from ecnlab.models.sizes import size_distribution

    m = BurstModel.from_sizes(size_distribution(sizes), 100e6)
    p = m.queue_pmf(rho, 400_000)
    assert p.sum() == pytest.approx(1.0, abs=1e-10)  # the truncated tail is negligible
    n = np.arange(len(p))
    assert float((n * p).sum()) == pytest.approx(m.mean_queue_pkts(rho), rel=1e-9)


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.9, 0.99])
def test_distribution_reduces_to_mm1_for_single_packet_bursts(rho: float) -> None:
    g = np.array([0.0, 1.0])
    p = queue_pmf(g, rho, 250)  # 0.1^250 is still a normal double
    np.testing.assert_allclose(p, (1 - rho) * rho ** np.arange(251), rtol=1e-12)
    assert mean_queue(g, rho) == pytest.approx(rho / (1 - rho), rel=1e-15)


def test_constant_burst_pmf_matches_the_balance_equations() -> None:
    # Global balance of the chain, n >= 1: (lam + mu) p[n] = mu p[n+1] + lam sum_k p[n-k] g[k].
    g = np.array([0.0, 0.2, 0.0, 0.5, 0.3])
    rho = 0.7
    ex, _ = moments(g)
    lam, mu = rho / ex, 1.0
    p = queue_pmf(g, rho, 300)
    for n in range(1, 299):
        inflow = mu * p[n + 1] + lam * sum(p[n - k] * g[k] for k in range(1, min(n, 4) + 1))
        assert (lam + mu) * p[n] == pytest.approx(inflow, rel=1e-10)


def test_p_delay_grows_with_load_and_shrinks_with_capacity() -> None:
    for sizes in ("web", "general"):
        for c in (100, 155, 622):
            ps = [models.mx_m_1(c, r, sizes=sizes)["p_delay_gt_5ms"] for r in (0.5, 0.7, 0.9)]
            assert ps[0] < ps[1] < ps[2]
        at90 = [models.mx_m_1(c, 0.9, sizes=sizes)["p_delay_gt_5ms"] for c in (100, 155, 622)]
        assert at90[0] > at90[1] > at90[2]
    # Seed 000 5.3.1: general mix, 100 Mb/s at 90 % load: "larger than 0.5".
    assert models.mx_m_1(100, 0.9, sizes="general")["p_delay_gt_5ms"] > 0.5


# --- M^[X]/M/1 against the simulator --------------------------------------------------------


@pytest.fixture(scope="module")
def queue_sims() -> dict[tuple[float, float], dict[str, float]]:
    """Web flows on a FIFO link: (capacity, load) -> measured quantities. ~15 s wall."""
    cases = [(100e6, 0.7), (100e6, 0.9), (155e6, 0.9)]
    kw = {"warmup_s": 20.0, "duration_s": 45.0}
    sims = run_many([(simulate_queue, (WEB, c, r, 1), kw) for c, r in cases], workers=2)
    return dict(zip(cases, sims))


def test_model_bounds_simulated_queue_delay_from_above(queue_sims: dict) -> None:
    """Seed 000 Fig. 8: "the model behaves as an upper bound for the simulation results".

    The model is evaluated at the utilisation the run measured (the heavy tail makes the
    realised load differ from the aimed one)."""
    for (c, _), s in queue_sims.items():
        model = BurstModel.from_sizes(WEB, c).p_delay_gt(s["utilization"])
        assert 0.0 < s["p_delay_gt"] < model, (c, s)


def test_simulated_queue_delay_has_the_model_trend(queue_sims: dict) -> None:
    """More load, more delay; more capacity at the same load, less (seed 000 5.2.2)."""
    low, high, fast = queue_sims[(100e6, 0.7)], queue_sims[(100e6, 0.9)], queue_sims[(155e6, 0.9)]
    assert low["utilization"] < high["utilization"]
    assert low["p_delay_gt"] < high["p_delay_gt"]
    assert fast["p_delay_gt"] < high["p_delay_gt"]


def test_single_segment_flows_match_pollaczek_khinchine_below_the_model() -> None:
    """Seed 000 Fig. 7 at s = 1: each flow is one data segment, so the down link sees a
    Poisson stream (connection arrivals shifted by i.i.d. handshake delays stay Poisson) of
    1500-byte segments mixed with 40-byte SYN-ACKs, ACKs and FINs: an M/G/1 queue. Oracle:
    Pollaczek-Khinchine with the measured size mix, E[Wq] = lam E[S^2] / (2 (1 - rho)); the
    measured mean (waiting bytes in full packets plus the busy fraction) is then
    rho E[Wq] / T + rho, T one full packet time. Tolerance 5 %: about 10^5 packets per
    second of a correlated queue over 10 s. The M/M/1 model (X = 1) must lie above."""
    from ecnlab.models.sizes import Constant

    c = 100e6
    s = simulate_queue(Constant(1460.0), c, 0.8, 1, warmup_s=2.0, duration_s=12.0)
    n, nbytes = s["delivered_pkts"], s["delivered_bytes"]
    data = (nbytes - 40 * n) / 1460  # packets of 1500 B; the rest are 40 B
    ctrl = n - data
    lam = n / s["window_s"]
    es2 = (data * (1500 * 8 / c) ** 2 + ctrl * (40 * 8 / c) ** 2) / n
    rho = s["utilization"]
    wq = lam * es2 / (2 * (1 - rho))
    oracle = rho * wq / (1500 * 8 / c) + rho
    assert s["mean_queue_pkts"] == pytest.approx(oracle, rel=0.05), (s, oracle)
    assert s["mean_queue_pkts"] < BurstModel.from_flow_segments(1, c).mean_queue_pkts(rho)


# --- buffer sizing --------------------------------------------------------------------------


def test_buffer_formula_and_sawtooth() -> None:
    assert buf.min_buffer_pkts(100.0, 0.5) == pytest.approx(100.0)
    assert buf.min_buffer_pkts(100.0, 0.8) == pytest.approx(25.0)
    assert buf.utilization(0.0, 100.0, 0.5) == pytest.approx(0.75)  # the classic 3/4
    for beta in (0.5, 0.7, 0.9):
        b = buf.min_buffer_pkts(100.0, beta)
        assert buf.utilization(b, 100.0, beta) == pytest.approx(1.0)
        assert buf.utilization(0.9 * b, 100.0, beta) < 1.0
        assert buf.utilization(0.0, 100.0, beta) < buf.utilization(0.5 * b, 100.0, beta)
    out = json.loads(invoke("model", "buffer", "--beta", "0.8", "--json").stdout)
    assert out["min_buffer_pkts"] == pytest.approx(10e6 * 0.1 / 12000 * 0.25)


BDP_10M_100MS = buf.bdp_pkts(10e6, 0.1 + 1500 * 8 / 10e6)  # 84.3 packets


@pytest.fixture(scope="module")
def one_flow() -> dict[int, dict[str, float]]:
    sizes = [8, 42, 63, math.ceil(buf.min_buffer_pkts(BDP_10M_100MS, 0.5))]
    kw = {"warmup_s": 40.0, "duration_s": 240.0}
    sims = run_many([(simulate_one_flow, (b,), kw) for b in sizes], workers=2)
    return dict(zip(sizes, sims))


def test_one_flow_fills_the_link_at_the_formula_buffer(one_flow: dict) -> None:
    """Seed 002 eq. (1) with beta = 0.5 (the simulator's NewReno): b = delta suffices."""
    b = max(one_flow)
    assert one_flow[b]["utilization"] > 0.995, one_flow[b]


def test_one_flow_utilisation_falls_below_the_formula_buffer(one_flow: dict) -> None:
    """Smaller buffers idle the link, as much as the sawtooth model says: within 0.02
    (the model ignores slow start, delayed-ACK timing and the packet in transmission)."""
    small = sorted(one_flow)[:-1]
    utils = [one_flow[b]["utilization"] for b in small]
    # "Full" is > 0.995 above; the model itself gives 0.993 at 0.75 delta.
    assert utils == sorted(utils) and utils[-1] < 0.995
    for b in small:
        model = buf.utilization(b, BDP_10M_100MS, 0.5)
        assert one_flow[b]["utilization"] == pytest.approx(model, abs=0.02), (b, one_flow[b])


@pytest.mark.parametrize(("beta", "buffer_pkts"), [(0.5, 20), (0.8, 46)])
def test_one_flow_shallow_buffer_timeout_cycle_under_rfc5681_not_under_linux_rule(
    beta: float, buffer_pkts: int
) -> None:
    """The shallow-buffer timeout cycle (docs/models/analytic.md, "A timeout cycle"): RFC 5681
    eq. 4 halves a FlightSize that a long NewReno recovery has inflated, so every timeout
    restarts slow start towards an ssthresh several times the path's capacity; Linux's
    tcp_enter_loss keeps the ssthresh of the recovery in progress (tcp.timeout_ssthresh =
    "once_per_window") and the flow follows the sawtooth."""
    rfc = simulate_one_flow(buffer_pkts, beta=beta, warmup_s=40.0, duration_s=120.0)
    linux = simulate_one_flow(
        buffer_pkts,
        beta=beta,
        warmup_s=40.0,
        duration_s=120.0,
        timeout_ssthresh="once_per_window",
    )
    model = buf.utilization(buffer_pkts, BDP_10M_100MS, beta)
    # RFC rule: a timeout about every 2 s after the warm-up, the link a third to a half idle.
    assert rfc["rtos"] > 30, rfc
    assert rfc["utilization"] < model - 0.25, (rfc, model)
    # Linux's rule: only the timeouts of the first slow start (before the warm-up ends).
    assert linux["rtos"] <= 2, linux
    assert linux["utilization"] == pytest.approx(model, abs=0.02), (linux, model)


# --- TCP under random loss ------------------------------------------------------------------


def test_throughput_formulas() -> None:
    assert tput.mathis_constant(1) == pytest.approx(math.sqrt(1.5))
    assert tput.mathis(1460, 0.1, 0.01) == pytest.approx(1460 / 0.1 * math.sqrt(0.75) / 0.1)
    # PFTK without timeouts reduces to Mathis with the same b.
    assert tput.pftk(1460, 0.1, 1e-6, 1e-9) == pytest.approx(tput.mathis(1460, 0.1, 1e-6), 1e-3)
    assert tput.pftk(1460, 0.1, 0.05, 1.0) < tput.mathis(1460, 0.1, 0.05)
    assert tput.pftk(1460, 0.1, 1e-6, 1.0, wmax_pkts=10) == pytest.approx(1460 * 10 / 0.1)


@pytest.mark.parametrize("p", [1e-3, 3e-3])
def test_random_loss_goodput_within_mathis_accuracy(p: float) -> None:
    """Mathis et al. hold where the flow avoids timeouts and is not window-limited (here
    p <= 3e-3 at RTT 100 ms: at most one RTO per flow in 150 s). Tolerance 10 %: the
    formula's own constant varies by ~7 % between periodic and random loss, plus ~3 %
    sampling error of a 10-flow mean."""
    s = simulate_random_loss(p, duration_s=150.0)
    mathis = tput.mathis(1460, s["rtt_s"], s["loss_rate"])
    assert s["goodput_Bps"] == pytest.approx(mathis, rel=0.10), s


def test_timeouts_take_random_loss_outside_mathis_range() -> None:
    """At 3 % loss timeouts dominate: Mathis overestimates, PFTK (which models them) is
    closer."""
    s = simulate_random_loss(0.03, duration_s=150.0)
    mathis = tput.mathis(1460, s["rtt_s"], s["loss_rate"])
    pftk = tput.pftk(1460, s["rtt_s"], s["loss_rate"], 1.0)
    assert s["rtos_per_flow"] > 10
    assert s["goodput_Bps"] < 0.8 * mathis
    assert abs(s["goodput_Bps"] - pftk) < abs(s["goodput_Bps"] - mathis)


# --- the command line -----------------------------------------------------------------------


def test_cli_mx_m_1_json() -> None:
    result = invoke("model", "mx-m-1", "--capacity-mbps", "622", "--load", "0.95", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    m = BurstModel.from_sizes(WEB, 622e6)
    assert out["mean_queue_pkts"] == pytest.approx(m.mean_queue_pkts(0.95))
    assert out["p_delay_gt_5ms"] == pytest.approx(m.p_delay_gt(0.95))
    assert out["threshold_pkts"] == 259  # 5 ms of 622 Mb/s in 1500-byte packets
    general = invoke(
        "model", "mx-m-1", "--capacity-mbps", "100", "--load", "0.9", "--sizes", "general", "--json"
    )
    assert json.loads(general.stdout)["mean_flow_bytes"] == pytest.approx(
        general_tcp_mix().mean_bytes()
    )


def test_cli_tcp_throughput_and_table_output() -> None:
    out = json.loads(invoke("model", "tcp-throughput", "--loss", "0.01", "--json").stdout)
    assert out["mathis_bps"] == pytest.approx(8 * tput.mathis(1460, 0.1, 0.01))
    table = invoke("model", "mx-m-1", "--capacity-mbps", "100", "--load", "0.5")
    assert table.exit_code == 0 and "p_delay_gt_5ms" in table.stdout


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("mx-m-1", "--capacity-mbps", "100", "--load", "1.0"), "load (1.0) must be in (0, 1)"),
        (("mx-m-1", "--capacity-mbps", "-1", "--load", "0.5"), "capacity (-1.0 Mb/s)"),
        (("mx-m-1", "--capacity-mbps", "100", "--load", "0.5", "--sizes", "ftp"), "'ftp'"),
        (("buffer", "--beta", "1.5"), "beta (1.5) must be in (0, 1)"),
        (("tcp-throughput", "--loss", "0"), "loss probability (0.0)"),
        (("figures", "--out", "x", "--only", "nope"), "--only (nope)"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(args: tuple[str, ...], fragment: str) -> None:
    assert_one_line_error(invoke("model", *args), fragment)


def test_cli_figures_writes_data_and_plot(tmp_path: Path) -> None:
    """The quick buffer experiment end to end (nine 200-s runs at 10 Mb/s, ~3 s)."""
    result = invoke("model", "figures", "--out", str(tmp_path), "--quick", "--only", "buffer")
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "buffer.json").read_text())
    assert (tmp_path / "buffer.png").read_bytes()[:4] == b"\x89PNG"
    assert data["quick"] is True and data["simulated_betas"] == list(BETAS)
    for s in data["sim"]:
        assert s["utilization"] <= 1.0 + 1e-9
