"""From a scenario to a testbed plan: what ``ecnlab testbed run`` builds and starts.

The scenario is read and validated as the simulator reads it (:func:`ecnlab.load_scenario`,
then the core's ``normalize``), then mapped onto the testbed (docs/testbed.md, "What a scenario
becomes"). A field the testbed cannot honour is refused by name with the rule; every refusal
of a scenario is reported at once (:class:`TestbedUnsupported`). Nothing here needs root.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from . import _core, _testbed_bpf
from ._scenario import ScenarioSource, load_scenario, scenario_json
from ._testbed_web import DEFAULTS as TPCW_DEFAULTS
from ._testbed_web import draw

__all__ = ["Plan", "TestbedUnsupported", "draw", "plan"]

MAX_HOSTS = 250
"""Client (server) hosts per side: the addresses are 10.77.1.x and 10.77.2.x."""
MAX_RATE_BPS = 200e6
"""The fastest bottleneck accepted: the router's measured ceiling on a 2-core machine is 400 to
500 Mb/s with the senders on the same cores (docs/testbed.md, "Limits")."""
WORKLOAD_KINDS = ("bulk", "exchanges", "web_sessions", "packmime_http", "tpcw_browsers")
"""Workload kinds the testbed runs (docs/testbed.md)."""
REQUEST_HEADER_BYTES = 16
"""Every request carries the response size and server delay in its first 16 bytes."""
FLOW_BASE = 1 << 40
"""Emulated browsers number their sessions' connections from here (``FLOW_BASE + browser x
SESSIONS_PER_BROWSER + session``), web sessions their objects' from ``WEB_FLOW_BASE`` (one
number per object, consecutive over the sessions); the run renumbers them after the planned
flows, in order of opening, as the simulator numbers flows."""
SESSIONS_PER_BROWSER = 1 << 20
WEB_FLOW_BASE = 1 << 56
LOCAL_PORTS = 60999 - 32768 + 1
"""A client host's ephemeral ports (Linux's ``ip_local_port_range``): the connections from one
client host to one server host within a TIME_WAIT (60 s) must fit them."""
TIME_WAIT_S = 60.0

# TCP fields the testbed sets in each host namespace (sysctls, route attributes, the router's
# ECN+ emulation); every other field must be what the `linux` profile says Linux does.
SETTABLE_TCP = (
    "congestion_control",
    "ecn",
    "ecn_plus",
    "min_rto_s",
    "initial_window_segments",
    "syn_retries",
    "restart_after_idle",
    "mss_bytes",
    "header_bytes",
)
# Linux congestion control modules for the scenario's controllers.
LINUX_CC = {"newreno": "reno", "cubic": "cubic", "dctcp": "dctcp", "prague": "prague"}
# TCP fields that ecnlab's BPF congestion controls take (compiled in), by controller: they are
# settable when the host runs the BPF program (docs/testbed.md, "BPF congestion controls").
BPF_TCP = {"dctcp": ("dctcp_g", "dctcp_alpha_init"), "abe": ("abe", "beta_ecn")}
# Why a TCP field is fixed on Linux (default: not settable per namespace).
_FIXED_WHY = {
    "initial_rto_s": "Linux's initial RTO is fixed at 1 s (TCP_TIMEOUT_INIT)",
    "max_rto_s": "Linux's largest RTO is fixed at 120 s (TCP_RTO_MAX)",
    "delayed_ack_ms": "Linux's delayed-ACK timer adapts from 40 ms (TCP_ATO_MIN), not settable",
    "delayed_ack_policy": "Linux's receiver is Linux's (quick ACKs, adaptive timer)",
    "ack_every_segments": "Linux acknowledges every second full segment",
    "rto_estimator": "Linux's RTO estimator is Linux's",
    "timeout_ssthresh": "Linux keeps a reduction made in the window at a timeout",
    "ecn_min_window": "Linux's window after an echo at one segment is ssthresh",
    "sack": "the testbed keeps Linux's SACK, PRR and RACK-TLP together",
    "prr": "Linux always recovers with PRR",
    "rack_tlp": "the testbed keeps Linux's SACK, PRR and RACK-TLP together",
    "abc": "Linux's window growth is Linux's",
    "limited_transmit": "Linux's window growth is Linux's",
    "hystart": "HyStart is a global parameter of Linux's tcp_cubic module, not of a namespace",
    "hystart_detect": "HyStart is a global parameter of Linux's tcp_cubic module",
    "beta": "Linux's decrease factors are the modules' own",
    "cubic_c": "a global parameter of Linux's tcp_cubic module",
    "pacing": "the kernel has no fq qdisc and Reno and CUBIC do not pace on their own",
    "ecn_feedback": "Linux negotiates AccECN with net.ipv4.tcp_ecn = 3, which Linux 6.18 "
    "refuses (Invalid argument; only its option sysctl is there)",
}


class TestbedUnsupported(ValueError):
    """Scenario fields the testbed cannot honour; ``problems`` lists each by name."""

    __test__ = False  # not a pytest test class

    def __init__(self, problems: list[str]) -> None:
        super().__init__("the testbed cannot honour: " + "; ".join(problems))
        self.problems = problems


@dataclass
class Host:
    """One host's TCP: sysctls of its namespace and attributes of its route."""

    sysctls: dict[str, Any]
    route: dict[str, Any]
    ecn: bool
    ecn_plus: bool
    bpf: dict[str, Any] | None = None  # the BPF congestion control the host runs, if any


@dataclass
class Plan:
    """What the testbed builds and runs for a scenario and seed."""

    scenario: dict[str, Any]
    seed: int
    testbed: dict[str, Any]  # keyword arguments of ecnlab.testbed.Testbed
    hosts: dict[str, Host]  # "c0", "s0"... -> its TCP settings
    pair_rtt_ms: dict[tuple[int, int], float]  # (client, server) -> propagation RTT
    bulk: list[dict[str, Any]] = field(default_factory=list)
    connections: list[dict[str, Any]] = field(default_factory=list)
    browsers: list[dict[str, Any]] = field(default_factory=list)  # tpcw_browsers, one each
    sessions: list[dict[str, Any]] = field(default_factory=list)  # web_sessions, one each
    tpcw: dict[str, dict[str, Any]] = field(default_factory=dict)  # workload -> parameters
    notes: list[str] = field(default_factory=list)  # approximations, for the manifest

    @property
    def duration_s(self) -> float:
        return float(self.scenario["duration_s"])

    @property
    def warmup_s(self) -> float:
        return float(self.scenario.get("warmup_s", 0.0))


def normalize(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The scenario with every default, checked by the core (ValueError names the field)."""
    out: dict[str, Any] = json.loads(_core.normalize(scenario_json(scenario)))
    return out


def plan(source: ScenarioSource, seed: int = 1, overrides: tuple[str, ...] = ()) -> Plan:
    """The testbed plan of a scenario (a TOML path or a dict) and seed.

    Raises:
        ValueError: the scenario is invalid (the simulator's message).
        TestbedUnsupported: fields the testbed cannot honour, each named with its rule.
    """
    raw = load_scenario(source, overrides)
    scenario = normalize(raw)
    problems: list[str] = []
    notes: list[str] = []
    topo = scenario["topology"]
    _check_topology(topo, raw.get("topology", {}), problems, notes)
    hosts = _hosts(raw, scenario, seed, problems)
    _check_workloads(scenario, problems)
    metrics = scenario.get("metrics", {})
    if metrics.get("flow_sample_ms", 0) > 0:
        problems.append("metrics.flow_sample_ms: per-flow samples are not recorded on the testbed "
                        "yet; set it to 0")
    if problems:
        raise TestbedUnsupported(list(dict.fromkeys(problems)))  # each once, in order

    rng_rtt = random.Random(f"{seed}/rtt")
    path_rtt_ms = 2 * (2 * topo.get("access_delay_ms", 0.0) + topo["bottleneck"]["delay_ms"])
    pair_rtt: dict[tuple[int, int], float] = {}
    pair_owner: dict[tuple[int, int], int] = {}
    clients, servers = topo.get("clients", 1), topo.get("servers", 1)
    resolution_ms = topo.get("delay_resolution_us", 100.0) / 1e3
    bulk: list[dict[str, Any]] = []
    connections: list[dict[str, Any]] = []
    browsers: list[dict[str, Any]] = []
    sessions: list[dict[str, Any]] = []
    tpcw: dict[str, dict[str, Any]] = {}
    flow_id, web_flow = 0, WEB_FLOW_BASE

    def rtt_of(i: int, w: dict[str, Any], pair: tuple[int, int],
               drawn_ns: int | None = None) -> float:
        """The host pair's RTT: the first workload (and connection) on the pair draws it,
        from ``rtt_ms`` (``drawn_ns``: the simulator's draw for that connection), or the path
        RTT; later ones get it (the router keys delays on host pairs)."""
        if pair in pair_owner:
            j = pair_owner[pair]
            if scenario["workloads"][j].get("rtt_ms") != w.get("rtt_ms"):
                raise TestbedUnsupported([(
                    f"workloads[{i}].rtt_ms: differs from workloads[{j}].rtt_ms on host pair "
                    f"c{pair[0]}-s{pair[1]}; the router sets one delay per host pair")])
            return pair_rtt[pair]
        pair_owner[pair] = i
        if drawn_ns is not None:
            rtt = drawn_ns / 1e6
        elif w.get("rtt_ms") is not None:
            rtt = draw(w["rtt_ms"], rng_rtt)
        else:
            rtt = path_rtt_ms
        if rtt < path_rtt_ms - 1e-9:
            raise TestbedUnsupported([(
                f"workloads[{i}].rtt_ms: drew {rtt:g} ms, below the path RTT "
                f"{path_rtt_ms:g} ms")])
        # The extra delay, half each way, on the scenario's delay grid (as the simulator).
        extra = round((rtt - path_rtt_ms) / 2 / resolution_ms) * resolution_ms
        pair_rtt[pair] = path_rtt_ms + 2 * extra
        return pair_rtt[pair]

    for i, w in enumerate(scenario["workloads"]):
        rng = random.Random(f"{seed}/workload/{i}")
        if w["kind"] == "bulk":
            for k in range(int(w["flows"])):
                c = (w.get("host_offset", 0) + k) % clients
                s = (w.get("host_offset", 0) + k) % servers
                start = w.get("start_s", 0.0) + rng.random() * w.get("start_jitter_s", 0.0)
                bulk.append({
                    "flow": flow_id, "workload": i, "client": c, "server": s,
                    "start_s": start, "direction": w.get("direction", "down"),
                    "bytes": int(w["bytes"]) if w.get("bytes") is not None else None,
                    "rwnd_bytes": _size(w.get("rwnd_bytes"), rng, 4194304),
                    "rtt_ms": rtt_of(i, w, (c, s)),
                })
                flow_id += 1
        elif w["kind"] == "tpcw_browsers":
            tpcw[str(i)] = {k: w.get(k) for k in TPCW_DEFAULTS}
            for b in range(int(w["browsers"])):
                # The simulator's per-browser draws at set-up: start (the RBE's stagger),
                # RTT, receiver window, server; the client is b mod clients.
                r = random.Random(f"{seed}/workload/{i}/browser/{b}")
                start = 0.1 + 20.0 * r.random()
                c = b % clients
                rwnd = _size(w.get("rwnd_bytes"), r, 65536)
                s = r.randrange(servers)
                browsers.append({
                    "browser": len(browsers), "workload": i, "client": c, "server": s,
                    "start_s": start, "rwnd_bytes": rwnd, "rtt_ms": rtt_of(i, w, (c, s)),
                    "seed": f"{seed}/workload/{i}/browser/{b}/walk",
                    "flow_base": FLOW_BASE + len(browsers) * SESSIONS_PER_BROWSER,
                })
        elif w["kind"] == "packmime_http":
            for conn in workload_plan(scenario, i, seed)["connections"]:
                c, s = conn["client"], conn["server"]
                connections.append({
                    "flow": flow_id, "workload": i, "client": c, "server": s,
                    "start_s": conn["arrival_ns"] / 1e9, "rwnd_bytes": conn["rwnd_bytes"],
                    "rtt_ms": rtt_of(i, w, (c, s), conn["rtt_ns"]),
                    "exchanges": _exchanges(i, conn["exchanges"], notes),
                })
                flow_id += 1
        elif w["kind"] == "web_sessions":
            export = workload_plan(scenario, i, seed)
            for k, sess in enumerate(export["sessions"]):
                c = sess["client"]
                pages = [{
                    "server": page["server"], "gap_s": page["gap_ns"] / 1e9,
                    "objects": [{
                        "at_s": o["at_ns"] / 1e9, "rwnd_bytes": o["rwnd_bytes"],
                        "rtt_ms": rtt_of(i, w, (c, page["server"]), o["rtt_ns"]),
                        "exchanges": _exchanges(i, o["exchanges"], notes),
                    } for o in page["objects"]],
                } for page in sess["pages"]]
                sessions.append({
                    "session": k, "workload": i, "client": c,
                    "start_s": sess["arrival_ns"] / 1e9,
                    "inter_page_from": export["inter_page_from"], "pages": pages,
                    "flow_base": web_flow,
                })
                web_flow += sum(len(page["objects"]) for page in pages)
        else:  # exchanges
            t = w.get("start_s", 0.0)
            stop = min(w.get("stop_s", scenario["duration_s"]), scenario["duration_s"])
            rate = w["arrival_rate_per_s"]
            while rate > 0:
                t += rng.expovariate(rate)
                if t >= stop:
                    break
                c, s = rng.randrange(clients), rng.randrange(servers)
                n = max(1, round(draw(w.get("exchanges_per_connection",
                                            {"dist": "constant", "value": 1}), rng)))
                exchanges = []
                for _ in range(n):
                    exchanges.append([
                        _request(i, _size(w.get("request_bytes"), rng, 300), notes),
                        _size(w["response_bytes"], rng, 0),
                        draw(w.get("server_delay_ms", {"dist": "constant", "value": 0}), rng),
                        draw(w.get("think_time_s", {"dist": "constant", "value": 0}), rng),
                    ])
                connections.append({
                    "flow": flow_id, "workload": i, "client": c, "server": s, "start_s": t,
                    "rwnd_bytes": _size(w.get("rwnd_bytes"), rng, 4194304),
                    "rtt_ms": rtt_of(i, w, (c, s)), "exchanges": exchanges,
                })
                flow_id += 1
    _check_ports(connections, sessions)
    bottleneck = topo["bottleneck"]
    one_way_ms = bottleneck["delay_ms"] + 2 * topo.get("access_delay_ms", 0.0)
    testbed = {
        "clients": clients,
        "servers": servers,
        "rate_bps": bottleneck["rate_bps"],
        "delay_ms": one_way_ms,
        "queue": bottleneck.get("queue", {}),
        "random_loss": bottleneck.get("random_loss", 0.0),
        "pair_delays": {p: (rtt - path_rtt_ms) / 2 for p, rtt in pair_rtt.items()
                        if rtt - path_rtt_ms > 1e-9},
        "seed": seed,
        "sample_interval_ms": metrics.get("queue_sample_ms", 10.0) or 10.0,
        "ecn_plus_servers": [int(h[1:]) for h, v in hosts.items() if h[0] == "s" and v.ecn_plus],
    }
    if "up_queue" in bottleneck:
        testbed["up_queue"] = bottleneck["up_queue"]
    programs = {h.bpf["name"]: h.bpf for h in hosts.values() if h.bpf is not None}
    if programs:
        testbed["bpf_congestion_controls"] = list(programs.values())
    for name, program in programs.items():
        notes.append(f"congestion control {name}: ecnlab's BPF program "
                     f"python/ecnlab/bpf/{program['source']} ("
                     + ", ".join(f"{k} = {v}" for k, v in program["defines"].items())
                     + "), built for this kernel and registered for the run "
                     "(docs/testbed.md, BPF congestion controls)")
    notes.append("access links are veths without a rate limit or queue of their own "
                 f"(topology.access_rate_bps {topo.get('access_rate_bps', 1e9):g} is at least "
                 "the bottleneck's rate); access_delay_ms is added to the router's delay")
    notes.append("propagation delays are set per host pair (the router keys them on addresses), "
                 "not per connection")
    if browsers:
        notes.append("tpcw_browsers: a browser's RTT is its host pair's (the simulator draws one "
                     "per browser); requests and responses are HTTP/1.1 messages whose sizes "
                     "include their headers (a request smaller than its headers, about 150 "
                     "bytes, is sent whole)")
    kinds = {w["kind"] for w in scenario["workloads"]}
    if kinds & {"web_sessions", "packmime_http"}:
        notes.append("web_sessions, packmime_http: the simulator's draws (its generator run "
                     "alone, ecnlab._core.workload_plan); a connection's RTT is its host pair's, "
                     "set by the first connection on the pair (the simulator draws one per "
                     "connection)")
    return Plan(scenario=scenario, seed=seed, testbed=testbed, hosts=hosts, pair_rtt_ms=pair_rtt,
                bulk=bulk, connections=connections, browsers=browsers, sessions=sessions,
                tpcw=tpcw, notes=notes)


def workload_plan(scenario: dict[str, Any], index: int, seed: int) -> dict[str, Any]:
    """Workload ``index``'s offered traffic as the simulator's generator draws it
    (``_core.workload_plan``: its sessions or connections, times in ns)."""
    out: dict[str, Any] = json.loads(_core.workload_plan(scenario_json(scenario), index, seed))
    return out


def _request(i: int, request: int, notes: list[str]) -> int:
    """A request's size on the testbed: at least the 16 bytes that carry the response size
    and server delay (noted once per workload)."""
    if request < REQUEST_HEADER_BYTES:
        note = (f"workloads[{i}].request_bytes: requests below {REQUEST_HEADER_BYTES} bytes are "
                f"sent as {REQUEST_HEADER_BYTES} (they carry the response size and server delay)")
        if note not in notes:
            notes.append(note)
    return max(REQUEST_HEADER_BYTES, request)


def _exchanges(i: int, exchanges: list[dict[str, int]], notes: list[str]) -> list[list[Any]]:
    """An exported connection's exchanges as the client agent runs them: [request bytes,
    response bytes, server delay (ms), think time after the response (s)]."""
    return [[_request(i, e["request_bytes"], notes), e["response_bytes"],
             e["server_delay_ns"] / 1e6, e["think_ns"] / 1e9] for e in exchanges]


def _check_ports(connections: list[dict[str, Any]], sessions: list[dict[str, Any]]) -> None:
    """Refuses a plan whose connections from one client host to one server host within a
    TIME_WAIT outnumber the client's ephemeral ports (each client closes first, so each of its
    connections holds its port for 60 s). A web session's objects count at its arrival (the
    earliest they can open)."""
    starts: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for c in connections:
        starts.setdefault((c["client"], c["server"]), []).append((c["start_s"], c["workload"]))
    for sess in sessions:
        for page in sess["pages"]:
            starts.setdefault((sess["client"], page["server"]), []).extend(
                (sess["start_s"], sess["workload"]) for _ in page["objects"])
    for (c, s), times in sorted(starts.items()):
        times.sort()
        lo = 0
        for hi, (t, w) in enumerate(times):
            while times[lo][0] <= t - TIME_WAIT_S:
                lo += 1
            if hi - lo + 1 > LOCAL_PORTS:
                raise TestbedUnsupported([(
                    f"workloads[{w}]: more than {LOCAL_PORTS} connections from c{c} to s{s} "
                    f"within {TIME_WAIT_S:g} s (at {t:.1f} s); each holds one of the client "
                    "host's ephemeral ports until its TIME_WAIT ends: add client hosts or lower "
                    "the rate")])


def _check_topology(topo: dict[str, Any], raw: dict[str, Any], problems: list[str],
                    notes: list[str]) -> None:
    kind = topo.get("kind", "dumbbell")
    if kind != "dumbbell":
        problems.append(f"topology.kind ({kind}): the testbed builds a dumbbell (one router)")
        return
    for side in ("clients", "servers"):
        if topo.get(side, 1) > MAX_HOSTS:
            problems.append(f"topology.{side} ({topo[side]}): at most {MAX_HOSTS} hosts per side "
                            "(one namespace each, addresses 10.77.1-2.x)")
    rate = topo["bottleneck"]["rate_bps"]
    if rate > MAX_RATE_BPS:
        problems.append(f"topology.bottleneck.rate_bps ({rate:g}): at most {MAX_RATE_BPS:g}; the "
                        "router's measured ceiling is 400 to 500 Mb/s on 2 cores shared with the "
                        "senders (docs/testbed.md, Limits)")
    access = topo.get("access_rate_bps", 1e9)
    if access < rate:
        problems.append(f"topology.access_rate_bps ({access:g}): below the bottleneck's rate; the "
                        "access links are veths without a rate limit, so they cannot be the "
                        "bottleneck")
    if "access_queue" in raw:
        problems.append("topology.access_queue: the access links are veths; they have no queue "
                        "discipline of ecnlab's")
    record = topo.get("record")
    if record is not None and not set(record) <= {"bottleneck_up", "bottleneck_down"}:
        problems.append(f"topology.record ({record}): the testbed records bottleneck_up and "
                        "bottleneck_down")


def _hosts(raw: dict[str, Any], scenario: dict[str, Any], seed: int,
           problems: list[str]) -> dict[str, Host]:
    """Each host's TCP settings, refusing what Linux cannot be made to do."""
    raw_tcp = dict(raw.get("tcp", {}))
    sides = {side: raw_tcp.pop(side, {}) for side in ("clients", "servers")}
    topo = scenario["topology"]
    hosts: dict[str, Host] = {}
    for side, letter in (("clients", "c"), ("servers", "s")):
        side_raw = dict(sides[side])
        fraction = side_raw.pop("ecn_fraction", None)
        tcp = _effective_tcp(scenario, {**raw_tcp, **side_raw})
        where = {k: f"tcp.{side}.{k}" if k in side_raw else f"tcp.{k}" for k in tcp}
        before = len(problems)
        bpf = _check_tcp(tcp, where, raw_tcp, problems)
        if len(problems) > before:
            continue  # refused: no hosts to set up
        n = topo.get(side, 1)
        with_ecn = set(range(n)) if tcp.get("ecn") else set()
        if fraction is not None:
            with_ecn = set(random.Random(f"{seed}/ecn_fraction/{side}").sample(
                range(n), round(fraction * n)))
        if bpf is not None and tcp.get("congestion_control") == "dctcp" \
                and len(with_ecn) < n:
            problems.append(f"tcp.{side}.ecn_fraction ({fraction}): ecnlab's BPF DCTCP always "
                            "negotiates ECN (TCP_CONG_NEEDS_ECN), so every host of the side "
                            "would use it")
            continue
        for i in range(n):
            ecn = i in with_ecn
            hosts[f"{letter}{i}"] = _host(tcp, side, ecn, bpf)
    return hosts


def _effective_tcp(scenario: dict[str, Any], tcp: dict[str, Any]) -> dict[str, Any]:
    """A side's TCP table with every profile default, as the core fills it in."""
    probe = {**scenario, "tcp": tcp}
    out: dict[str, Any] = normalize(probe)["tcp"]
    return out


def _check_tcp(tcp: dict[str, Any], where: dict[str, str], raw_tcp: dict[str, Any],
               problems: list[str]) -> dict[str, Any] | None:
    """Refuses what Linux cannot do; returns the BPF congestion control the side needs."""
    cc = tcp.get("congestion_control", "newreno")
    if cc not in LINUX_CC:
        why = ("Linux recovers as NewReno (with SACK); RFC 5681's Reno is not available"
               if cc == "reno" else "no such Linux module")
        problems.append(f"{where['congestion_control']} ({cc}): {why}")
        return None
    before = len(problems)
    bpf = _bpf_program(tcp, where, problems)
    # Compiled into the BPF program, or refused by name just now: not compared with Linux's.
    compiled_in = () if bpf is None and len(problems) == before \
        else BPF_TCP["abe" if tcp.get("abe") else "dctcp"]
    available = _testbed_bpf.available()  # empty: not readable, not checked
    if bpf is None and available and LINUX_CC[cc] not in available \
            and not (cc == "dctcp" or tcp.get("abe")):
        problems.append(f"{where['congestion_control']} ({cc}): this kernel has no tcp_"
                        f"{LINUX_CC[cc]} (net.ipv4.tcp_available_congestion_control: "
                        f"{' '.join(sorted(available))})")
    if tcp.get("ecn_plus", "off") not in ("off", "seed"):
        problems.append(f"{where['ecn_plus']} ({tcp['ecn_plus']}): Linux clients do not answer a "
                        "marked SYN-ACK as RFC 5562 says; the router emulates ECN+ servers "
                        "(ecn_plus = \"seed\")")
    if tcp.get("header_bytes") not in (40, 52):
        problems.append(f"{where['header_bytes']} ({tcp.get('header_bytes')}): Linux's IPv4 and "
                        "TCP headers are 40 bytes without timestamps or 52 with them")
    elif tcp["mss_bytes"] + tcp["header_bytes"] > 1500:
        problems.append(f"{where['mss_bytes']} ({tcp['mss_bytes']}): mss_bytes + header_bytes "
                        "must fit the veths' 1500-byte MTU")
    linux = _effective_tcp({"topology": {"bottleneck": {"rate_bps": 1e7}},
                            "workloads": [{"kind": "bulk", "flows": 1}]},
                           {"profile": "linux", **{k: tcp[k] for k in SETTABLE_TCP if k in tcp}})
    profile = raw_tcp.get("profile", "rfc6298")
    from_profile = False
    for key in sorted(set(tcp) | set(linux)):
        if key in SETTABLE_TCP or key in compiled_in or key == "profile":
            continue
        mine, theirs = tcp.get(key), linux.get(key)
        if mine != theirs:
            why = _FIXED_WHY.get(key, "not settable on Linux per namespace")
            named = key in raw_tcp or where.get(key, "").count(".") > 1  # tcp.clients.X
            origin = "" if named else f", profile {profile!r}"
            problems.append(f"{where.get(key, 'tcp.' + key)} ({_show(key, mine)}{origin}): {why} "
                            f"(Linux: {_show(key, theirs)})")
            if not named:
                from_profile = True
    if from_profile and profile != "linux":
        problems.append(f"tcp.profile ({profile}): the values above are the profile's; "
                        "profile = \"linux\" gives Linux's own")
    return bpf


def _bpf_program(tcp: dict[str, Any], where: dict[str, str],
                 problems: list[str]) -> dict[str, Any] | None:
    """ecnlab's BPF program for DCTCP (when the kernel has no tcp_dctcp) or ABE NewReno (Linux
    has no ABE); a refusal by name for what it cannot do."""
    cc = tcp.get("congestion_control", "newreno")
    program: dict[str, Any] | str | None = None
    if tcp.get("abe"):
        if cc != "newreno":
            problems.append(f"{where['abe']} (true, {where['congestion_control']} {cc}): Linux has "
                            "no ABE; ecnlab's BPF ABE (ecnlab_abe) is built on NewReno only")
            return None
        program = _testbed_bpf.abe_program(tcp.get("beta_ecn", 0.8))
        field = where.get("beta_ecn", "tcp.beta_ecn")
        value = tcp.get("beta_ecn")
    elif cc == "dctcp":
        if "dctcp" in _testbed_bpf.available():
            return None  # the kernel's own module
        if not tcp.get("ecn"):
            problems.append(f"{where['congestion_control']} (dctcp) with {where['ecn']} false: "
                            "ecnlab's BPF DCTCP, like Linux's, always negotiates ECN "
                            "(TCP_CONG_NEEDS_ECN); set ecn = true")
            return None
        program = _testbed_bpf.dctcp_program(tcp.get("dctcp_g", 1 / 16),
                                             tcp.get("dctcp_alpha_init", 1.0))
        field = where.get("dctcp_g", "tcp.dctcp_g")
        value = tcp.get("dctcp_g")
    if isinstance(program, str):
        problems.append(f"{field} ({value}): {program}")
        return None
    if program is not None and not _testbed_bpf.BTF.is_file():
        problems.append(f"{where['congestion_control']} ({cc}): ecnlab's BPF program needs the "
                        f"kernel's BTF ({_testbed_bpf.BTF}), which this kernel lacks")
        return None
    return program


# The values the core leaves out of a normalized tcp table when they are the default.
_OMITTED = {"delayed_ack_policy": "rfc5681", "ecn_min_window": "rfc3168_timer", "prr": False,
            "rack_tlp": False, "rto_estimator": "rfc6298", "sack": False, "hystart": "off",
            "timeout_ssthresh": "half_flight_size", "pacing": False, "limited_transmit": False}


def _show(key: str, value: Any) -> str:
    if value is None:
        return json.dumps(_OMITTED[key]) if key in _OMITTED else "unset"
    return json.dumps(value)


def _host(tcp: dict[str, Any], side: str, ecn: bool, bpf: dict[str, Any] | None) -> Host:
    timestamps = tcp["header_bytes"] == 52
    if bpf is not None and tcp.get("abe") and not ecn:
        bpf = None  # an ecn_fraction side's host without ECN: ABE changes nothing, plain Reno
    sysctls: dict[str, Any] = {
        "net.ipv4.tcp_congestion_control":
            bpf["name"] if bpf is not None else LINUX_CC[tcp["congestion_control"]],
        "net.ipv4.tcp_ecn": 1 if ecn else 0,
        "net.ipv4.tcp_timestamps": int(timestamps),
        "net.ipv4.tcp_slow_start_after_idle": int(bool(tcp.get("restart_after_idle"))),
        "net.ipv4.tcp_syn_retries" if side == "clients" else "net.ipv4.tcp_synack_retries":
            tcp["syn_retries"],
        # Room for the largest receiver window a workload asks for (clamped per socket).
        "net.ipv4.tcp_rmem": "4096 131072 33554432",
        "net.ipv4.tcp_wmem": "4096 16384 33554432",
    }
    route = {
        "rto_min": f"{round(tcp['min_rto_s'] * 1000)}ms",
        "initcwnd": tcp["initial_window_segments"],
        # Linux's MSS is advmss less the options every segment carries (timestamps: 12).
        "advmss": tcp["mss_bytes"] + (12 if timestamps else 0),
    }
    return Host(sysctls=sysctls, route=route, ecn=ecn,
                ecn_plus=ecn and side == "servers" and tcp.get("ecn_plus") == "seed", bpf=bpf)


def _check_workloads(scenario: dict[str, Any], problems: list[str]) -> None:
    for i, w in enumerate(scenario["workloads"]):
        kind = w["kind"]
        if kind not in WORKLOAD_KINDS:
            problems.append(f"workloads[{i}].kind ({kind}): not implemented on the testbed yet "
                            f"({', '.join(WORKLOAD_KINDS[:-1])} and {WORKLOAD_KINDS[-1]} are)")
            continue
        if "tcp" in w:
            problems.append(f"workloads[{i}].tcp: the testbed sets TCP per host namespace, not per "
                            "workload; use tcp.clients and tcp.servers")
        for key, default in (("client_group", "clients"), ("server_group", "servers")):
            if w.get(key, default) != default:
                problems.append(f"workloads[{i}].{key} ({w[key]}): the dumbbell's group is "
                                f"{default!r}")


def _size(dist: Mapping[str, Any] | None, rng: random.Random, default: int) -> int:
    """A size in whole bytes (rounded up) from a distribution, or ``default``."""
    if dist is None:
        return default
    return math.ceil(draw(dist, rng))
