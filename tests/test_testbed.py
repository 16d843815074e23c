"""The emulation testbed on real Linux TCP: the router's rate, buffer, marking, delay and
teardown (docs/testbed.md). Needs root (network namespaces); skipped otherwise.

Each test builds one client and one server namespace joined through ``ecnlab-router`` and runs
a bulk transfer from the server to the client (the download direction, "down") with
tests/testbed_bulk.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import interruptible_process
from ecnlab.testbed import Testbed, TestbedError, leftover_namespaces

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                       reason="the testbed needs root (network namespaces, AF_PACKET)"),
    pytest.mark.skipif(shutil.which("ip") is None, reason="the testbed needs iproute2's ip"),
]

TOOL = str(Path(__file__).with_name("testbed_bulk.py"))
RATE_BPS = 10e6
# Linux's defaults: a 1500-byte MTU and TCP timestamps, so 1448 payload bytes per 1500-byte
# IPv4 packet (the size the router's rate counts).
PAYLOAD_FRACTION = 1448 / 1500


def bulk(t: Testbed, seconds: float, port: int = 5001) -> list[list[float]]:
    """A bulk transfer from s0 to c0 for ``seconds``: the receiver's (time, bytes) points."""
    recv = t.popen("c0", [sys.executable, TOOL, "recv", str(port)], stdout=subprocess.PIPE, text=True)
    assert recv.stdout.readline().strip() == "ready"
    t.run("s0", [sys.executable, TOOL, "send", t.address("c0"), str(port), str(seconds)],
          timeout=seconds + 30)
    out, _ = recv.communicate(timeout=30)
    return json.loads(out)["points"]


def goodput_bps(points: list[list[float]], skip_s: float = 1.0) -> float:
    """Receiver goodput after the first ``skip_s`` seconds (slow start left out)."""
    a = next(p for p in points if p[0] >= skip_s)
    b = points[-1]
    return (b[1] - a[1]) * 8 / (b[0] - a[0])


def test_a_10_mbps_bottleneck_holds_its_rate_within_2_percent(tmp_path):
    with Testbed(rate_bps=RATE_BPS, queue={"limit_pkts": 100}, out_dir=tmp_path) as t:
        points = bulk(t, 6.0)
        samples = t.samples("down")
    want = RATE_BPS * PAYLOAD_FRACTION
    got = goodput_bps(points)
    assert abs(got / want - 1) < 0.02, f"goodput {got / 1e6:.3f} Mb/s, expected {want / 1e6:.3f}"
    # The router's own count: IPv4 bytes sent per second while the link is saturated.
    busy = [s for s in samples if 2e9 <= s["t_ns"] <= 5e9]
    rate = (busy[-1]["delivered_bytes"] - busy[0]["delivered_bytes"]) * 8 / ((busy[-1]["t_ns"] - busy[0]["t_ns"]) / 1e9)
    assert abs(rate / RATE_BPS - 1) < 0.01, f"router rate {rate / 1e6:.3f} Mb/s"


def test_one_flow_through_drop_tail_fills_a_small_buffer(tmp_path):
    limit = 20
    with Testbed(rate_bps=RATE_BPS, delay_ms=5, queue={"limit_pkts": limit}, out_dir=tmp_path) as t:
        bulk(t, 4.0)
    final = t.final("down")
    lens = [s["len_pkts"] for s in t.samples("down")]
    assert max(lens) >= limit - 1, f"queue samples peak at {max(lens)} of {limit}"
    assert final["dropped_overflow"] > 0 and final["marked"] == 0, final
    assert final["oversize"] == 0 and final["malformed"] == 0, "offloads off: MTU-sized frames only"


def test_red_with_ecn_marks_ce_instead_of_dropping(tmp_path):
    red = {"kind": "red", "ecn": True, "min_th_pkts": 5, "max_th_pkts": 15}
    with Testbed(rate_bps=RATE_BPS, delay_ms=5, queue={"limit_pkts": 100, "aqm": red},
                 tcp_ecn=1, out_dir=tmp_path) as t:
        points = bulk(t, 4.0)
    final = t.final("down")
    # Marks were written into the packets the receiver got (its kernel then echoes ECE).
    assert final["marked"] > 10 and final["ce_rewrites"] > 10, final
    assert final["ce_rewrites"] <= final["marked"]
    assert final["dropped_overflow"] == 0, "the marks keep the queue below its hard limit"
    assert goodput_bps(points) > 0.9 * RATE_BPS * PAYLOAD_FRACTION


def test_not_ect_traffic_is_dropped_by_the_same_red(tmp_path):
    red = {"kind": "red", "ecn": True, "min_th_pkts": 5, "max_th_pkts": 15}
    with Testbed(rate_bps=RATE_BPS, delay_ms=5, queue={"limit_pkts": 100, "aqm": red},
                 tcp_ecn=0, out_dir=tmp_path) as t:
        bulk(t, 3.0)
    final = t.final("down")
    assert final["marked"] == 0 and final["dropped_early"] + final["dropped_forced"] > 0, final


@pytest.mark.parametrize("tcp_ecn", [1, 0])
def test_codel_holds_the_queue_near_its_target(tmp_path, tcp_ecn):
    # CoDel (target 5 ms) in front of a 1000-packet buffer: one CUBIC flow's standing queue
    # stays near 5 ms (drop-tail would fill the buffer: 1.2 s), by marks with ECN, drops without.
    codel = {"kind": "codel", "ecn": True, "target_ms": 5, "interval_ms": 100}
    with Testbed(rate_bps=RATE_BPS, delay_ms=10, queue={"limit_pkts": 1000, "aqm": codel},
                 tcp_ecn=tcp_ecn, out_dir=tmp_path) as t:
        points = bulk(t, 5.0)
        samples = [s for s in t.samples("down") if s["t_ns"] >= 2e9]
    final = t.final("down")
    a, b = samples[0], samples[-1]
    delay_ms = (b["area_bytes_ns"] - a["area_bytes_ns"]) / (b["t_ns"] - a["t_ns"]) * 8 / RATE_BPS * 1e3
    assert 1.0 < delay_ms < 10.0, f"mean queueing delay {delay_ms:.2f} ms"
    signals = final["marked"] if tcp_ecn else final["dropped_early"] + final["dropped_forced"]
    assert signals > 0 and final["dropped_overflow"] == 0, final
    assert (final["dropped"] == 0) == bool(tcp_ecn), final
    assert "sojourn_ms" in b["aqm"], "the discipline's variables are sampled"
    assert goodput_bps(points) > 0.9 * RATE_BPS * PAYLOAD_FRACTION


def test_pair_delays_set_the_round_trip_time(tmp_path):
    # 20 ms extra each way between c0 and s0: connect() takes one RTT, 40 ms plus a little.
    with Testbed(rate_bps=RATE_BPS, pair_delays={(0, 0): 20.0}, out_dir=tmp_path) as t:
        acc = t.popen("s0", [sys.executable, TOOL, "accept", "5002"], stdout=subprocess.PIPE, text=True)
        assert acc.stdout.readline().strip() == "ready"
        r = t.run("c0", [sys.executable, TOOL, "connect", t.address("s0"), "5002", "10"], timeout=30)
    rtt_ms = min(json.loads(r.stdout)) * 1e3  # the floor: load only adds scheduling time
    assert 40.0 <= rtt_ms < 44.0, f"connect took {rtt_ms:.2f} ms"


def test_ecn_plus_makes_the_servers_syn_acks_ect(tmp_path):
    with Testbed(rate_bps=RATE_BPS, tcp_ecn=1, ecn_plus_servers=[0], out_dir=tmp_path) as t:
        acc = t.popen("s0", [sys.executable, TOOL, "accept", "5003"], stdout=subprocess.PIPE, text=True)
        assert acc.stdout.readline().strip() == "ready"
        t.run("c0", [sys.executable, TOOL, "connect", t.address("s0"), "5003", "3"], timeout=30)
    assert t.final("down")["ect_synacks"] == 3
    assert t.final("up")["ect_synacks"] == 0, "clients are not ECN+ servers"


def test_a_bad_queue_table_is_refused_by_name_and_nothing_is_left(tmp_path):
    t = Testbed(rate_bps=RATE_BPS, queue={"limit_pkt": 5}, out_dir=tmp_path)
    with pytest.raises(TestbedError, match="limit_pkt"), t:
        pass
    assert leftover_namespaces(t.prefix) == []


def test_several_hosts_get_each_pair_its_own_delay(tmp_path):
    # Two clients, two servers, bridged on each side: extra one-way delays of 30 ms for c0-s1
    # and 10 ms for c1-s1, none for the pairs with s0. connect() takes one RTT.
    with Testbed(clients=2, servers=2, pair_delays={(0, 1): 30.0, (1, 1): 10.0}, out_dir=tmp_path) as t:
        for s in t.servers:
            acc = t.popen(s, [sys.executable, TOOL, "accept", "5004"], stdout=subprocess.PIPE, text=True)
            assert acc.stdout.readline().strip() == "ready"
        rtt_ms = {}
        for c in t.clients:
            for s in t.servers:
                r = t.run(c, [sys.executable, TOOL, "connect", t.address(s), "5004", "5"], timeout=30)
                # The least of five: scheduling on a loaded machine only ever adds time, and
                # the path's delay is the floor (a median of three once read 25.3 ms for 20).
                rtt_ms[c, s] = min(json.loads(r.stdout)) * 1e3
    for (c, s), want in {("c0", "s0"): 0, ("c1", "s0"): 0, ("c0", "s1"): 60, ("c1", "s1"): 20}.items():
        assert want <= rtt_ms[c, s] < want + 4, f"{c}-{s}: {rtt_ms[c, s]:.2f} ms, want {want}"


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie child of ours still answers: reap it.
    try:
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    except ChildProcessError:
        return False


@pytest.mark.parametrize("error", [None, RuntimeError, KeyboardInterrupt])
def test_teardown_leaves_no_namespace_interface_or_process(tmp_path, error):
    links_before = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    allowed = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control").read_text()
    t = Testbed(rate_bps=RATE_BPS, out_dir=tmp_path)
    try:
        with t:
            router = t.router.pid
            sleeper = t.popen("c0", ["sleep", "1000"]).pid
            orphan = subprocess.Popen(["ip", "netns", "exec", t.ns("s0"), "sleep", "1000"]).pid
            assert set(leftover_namespaces(t.prefix)) == {t.ns(h) for h in ("r", "c0", "s0")}
            if error is not None:
                raise error("inside the block")
    except (RuntimeError, KeyboardInterrupt) as e:
        assert error is not None and isinstance(e, error)
    assert leftover_namespaces(t.prefix) == []
    assert all(_gone(p) for p in (router, sleeper, orphan))
    assert subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout == links_before
    assert Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control").read_text() == allowed
    # The router stopped on SIGTERM and wrote its final counters.
    assert t.final("down")["type"] == "final"


def test_every_host_may_use_an_algorithm_the_initial_namespace_restricts(tmp_path):
    # A namespace may only make an algorithm its default if the initial namespace allows it:
    # the testbed allows the ones its hosts use while it is up. Here the clients and servers
    # use reno and only the database host the testbed's default (as in a testbed run with
    # --database mariadb, whose database host has no settings of its own).
    allowed_file = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
    original = allowed_file.read_text()
    default = Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    restricted = next((a for a in available if a not in (default, "reno")), None)
    if restricted is None:
        pytest.skip(f"no algorithm besides {default} and reno is available ({available})")
    before = " ".join(a for a in original.split() if a != restricted)
    reno = {"net.ipv4.tcp_congestion_control": "reno"}
    try:
        allowed_file.write_text(before)
        with Testbed(rate_bps=RATE_BPS, out_dir=tmp_path, database_host=True,
                     congestion_control=restricted, host_sysctls={"c0": reno, "s0": reno}) as t:
            for host, want in (("c0", "reno"), ("db", restricted)):
                got = t.run(host, ["sysctl", "-n", "net.ipv4.tcp_congestion_control"]).stdout
                assert got.strip() == want, host
        assert allowed_file.read_text().split() == before.split()
    finally:
        allowed_file.write_text(original)


HOLDER = """
import sys, time
from ecnlab.testbed import Testbed
with Testbed(rate_bps=10e6, out_dir=sys.argv[1]) as t:
    t.popen("c0", ["sleep", "1000"])
    print(t.prefix, t.router.pid, flush=True)
    time.sleep(1000)
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_python_process_tears_everything_down(tmp_path, sig):
    # Ctrl-C (SIGINT) or a kill (SIGTERM) to the process holding a testbed, as a user would.
    p = interruptible_process([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    prefix, router = p.stdout.readline().split()
    assert len(leftover_namespaces(prefix)) == 3
    p.send_signal(sig)
    p.wait(timeout=30)
    assert p.returncode != 0
    assert leftover_namespaces(prefix) == []
    assert _gone(int(router))


def test_the_router_exits_cleanly_on_sigint(tmp_path):
    with Testbed(rate_bps=RATE_BPS, out_dir=tmp_path) as t:
        t.router.send_signal(signal.SIGINT)
        assert t.router.wait(timeout=5) == 0
        assert {r["dir"] for r in t.records(["final"])} == {"up", "down"}
    assert leftover_namespaces(t.prefix) == []
