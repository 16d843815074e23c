"""Translation of an ecnlab scenario into an ns-2.35 Tcl script.

The input is the normalized scenario (``ecnlab validate`` prints it: every default written
out). :func:`check` refuses, with one line naming the field, whatever ns-2.35 cannot express;
:func:`translate` writes the script. Every ns-2 variable the run depends on is set in the
script, with ns-2.35's default written beside it where the translation sets another value to
follow ecnlab's model (the sources: ``tcl/lib/ns-default.tcl``, ``tcp/tcp-full.cc``,
``queue/red.cc``, ``queue/rem.cc``, ``queue/pi.cc``, ``queue/drop-tail.cc``,
``webcache/webtraf.cc``, ``packmime/packmime_HTTP.cc``, ``delaybox/delaybox.cc`` of ns-2.35).

How the dumbbell maps:

* Every ecnlab host is an ns-2 node with its own duplex access link (rate, delay, drop-tail
  queue) to its router, R1 for clients and R2 for servers; the bottleneck is two simplex links
  R1 -> R2 (up) and R2 -> R1 (down), each with its queue.
* A bulk flow's RTT (drawn by ecnlab, passed in as :class:`BulkFlow`) is a leaf node between
  the flow's client agent and its client host, linked with half the extra delay each way and
  a rate far above anything else, so flows on one host still share its access link.
* Request/response connections (exchanges, web objects, PackMime) get their RTT from a
  DelayBox at R1 (``delaybox/delaybox.cc``): per connection it draws a one-way delay, half the
  extra RTT, and applies it in both directions, as ecnlab's delay lines do.

Randomness: ns-2's ``defaultRNG`` is seeded from the run seed first, so every RNG the script
or ns-2 creates afterwards (ns-2 derives each new stream from that seed) depends on it; the
same scenario and seed give the same script and the same ns-2 run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._core import __version__

__all__ = [
    "BulkFlow",
    "Translation",
    "Untranslatable",
    "check",
    "ns2_seed",
    "translate",
]

_LIB = Path(__file__).with_name("ns2lib.tcl")

# A link "much faster than anything else" for the per-flow delay links of bulk flows: 1 Tb/s
# serializes a 1500-byte packet in 12 ns.
_LEAF_RATE_BPS = 1e12

# ns-2.35 names of the FullTcp variants ecnlab can express.
_TCP_CLASS = {"newreno": "Agent/TCP/FullTcp/Newreno", "reno": "Agent/TCP/FullTcp"}
_PACKMIME_TCP = {"newreno": "Newreno", "reno": "Reno"}
_PACKMIME_MAX_NODES = 10

# A count-only script's output: one line per bottleneck link, its name and these counters of
# its QueueMonitor (queue-monitor.h): packets and bytes that arrived at the queue, left it into
# the link (start of serialization) and were dropped.
COUNTS_FILE = "counts.txt"
COUNTERS = ("parrivals_", "pdepartures_", "pdrops_", "barrivals_", "bdepartures_", "bdrops_")

# The only kinds of queue ns-2.35 has among ecnlab's.
_AQM_NS2 = {"droptail": "DropTail", "red": "RED", "ared": "RED", "rem": "REM", "pi": "PI"}
_AQM_MISSING = {
    "pie": "ns-2.35 has no PIE",
    "codel": "ns-2.35 has no CoDel",
    "threshold": "ns-2.35 has no instantaneous-queue threshold marker",
    "dcn": "ns-2.35 has no DCN",
    "afd": "ns-2.35 has no AFD",
    "rio_ps": "ns-2.35's RIO has no preferential treatment of short flows (RIO-PS)",
    "choke": "ns-2.35 has no CHOKe",
    "aecn": "ns-2.35 has no AECN",
    "fq_codel": "ns-2.35 has no FQ-CoDel",
    "pi2": "ns-2.35 has no PI2",
    "dualpi2": "ns-2.35 has no DualPI2",
}

# DelayBox recognizes a SYN as a 40-byte segment with sequence number 0
# (delaybox.cc, DelayBoxClassifier::recv), so per-connection delays need 40-byte headers.
_DELAYBOX_HEADER_BYTES = 40


class Untranslatable(ValueError):
    """A scenario field ns-2.35 cannot express: ``path = value: reason``."""

    def __init__(self, path: str, value: Any, reason: str) -> None:
        self.path = path
        self.value = value
        self.reason = reason
        super().__init__(f"{path} = {_show(value)}: {reason}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.value, self.reason))


def _show(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict) and "dist" in value:
        rest = ", ".join(f"{k} = {_show(v)}" for k, v in value.items() if k != "dist")
        return f'{{ dist = "{value["dist"]}"{", " if rest else ""}{rest} }}'
    return repr(value)


@dataclass(frozen=True)
class BulkFlow:
    """One bulk connection as ecnlab drew it (a row of its ``flows`` table)."""

    flow: int
    workload: int
    client: int
    server: int
    start_s: float
    rtt_ms: float
    rwnd_bytes: int


@dataclass
class Translation:
    """A generated ns-2 script and what the reader of its outputs needs to know."""

    script: str
    seed: int
    path_rtt_ms: float
    #: the first connection id of the request/response workloads (bulk flows keep
    #: ecnlab's flow id plus one, since ns-2 reserves flow id 0)
    first_exchange_cid: int
    #: PackMime connections get flow ids from this offset on (PackMime numbers them from 1)
    packmime_fid_offset: int
    #: approximations the translation makes, one line each (also written in the script)
    notes: list[str] = field(default_factory=list)


def ns2_seed(seed: int) -> int:
    """The value given to ``$defaultRNG seed``: ns-2 takes 1 .. 2^31 - 2 (0 asks for a seed
    from the clock)."""
    return 1 + seed % (2**31 - 2)


# --- checks -----------------------------------------------------------------------------------


def _side_table(tcp: Mapping[str, Any], side: str) -> dict[str, Any]:
    table = dict(tcp.get(side) or {})
    path = f"tcp.{side}"
    if "profile" in table:
        raise Untranslatable(
            f"{path}.profile",
            table["profile"],
            "a profile per side is not translated; write the side's fields out",
        )
    fraction = table.pop("ecn_fraction", None)
    if fraction is not None:
        if fraction not in (0, 1):
            raise Untranslatable(
                f"{path}.ecn_fraction",
                fraction,
                "which hosts get ECN is drawn by ecnlab's random streams; ns-2 translation "
                "takes 0 or 1",
            )
        table["ecn"] = bool(fraction)
    return table


def tcp_params(scenario: Mapping[str, Any], workload: int, side: str) -> dict[str, Any]:
    """The TCP settings of one side ("clients" or "servers") of one workload's connections."""
    tcp = scenario["tcp"]
    params = {k: v for k, v in tcp.items() if k not in ("clients", "servers")}
    params.update(_side_table(tcp, side))
    overlay = scenario["workloads"][workload].get("tcp")
    if overlay:
        params.update(overlay)
    return params


def _check_tcp(params: Mapping[str, Any], path: str) -> None:
    cc = params["congestion_control"]
    if cc in ("dctcp", "prague"):
        raise Untranslatable(
            f"{path}.congestion_control",
            cc,
            "ns-2.35 has no DCTCP (its DCTCP was an out-of-tree patch to TcpAgent, never "
            "released) and no TCP Prague",
        )
    if cc not in _TCP_CLASS:
        raise Untranslatable(
            f"{path}.congestion_control",
            cc,
            "ns-2.35's FullTcp is Reno, NewReno, Tahoe or SACK (ns-2 has CUBIC only in its "
            "one-way Linux TCP)",
        )
    if params.get("abe"):
        raise Untranslatable(f"{path}.abe", True, "ns-2.35 has no ABE (RFC 8511)")
    if params.get("ect_codepoint", "ect0") != "ect0":
        raise Untranslatable(
            f"{path}.ect_codepoint",
            params["ect_codepoint"],
            "ns-2.35's FullTcp sends ECT(0) only",
        )
    if params.get("abc"):
        raise Untranslatable(
            f"{path}.abc", True, "ns-2.35's FullTcp has no Appropriate Byte Counting"
        )
    for switch in ("limited_transmit", "restart_after_idle", "sack", "prr", "rack_tlp", "pacing"):
        if params.get(switch):
            raise Untranslatable(f"{path}.{switch}", True, "not translated to FullTcp")
    # The stacks' timers, recovery and slow start, and the one-segment ECN rule (the linux
    # and freebsd profiles set them).
    for name, default, why in (
        (
            "timeout_ssthresh",
            "half_flight_size",
            (
                "ns-2.35's FullTcp halves cwnd at every timeout (tcp-full.cc, timeout_action; "
                "tcp.cc, slowdown): not translated"
            ),
        ),
        (
            "hystart",
            "off",
            (
                "ns-2.35's FullTcp has no HyStart or HyStart++ (slow start ends only at a loss or "
                "an ECN echo)"
            ),
        ),
        ("rto_estimator", "rfc6298", "FullTcp computes its RTO its own way (tcp.cc, rtt_update)"),
        ("delayed_ack_policy", "rfc5681", "FullTcp's delayed ACK is a fixed interval_ timer"),
        ("ecn_min_window", "rfc3168_timer", "not translated to FullTcp"),
    ):
        if params.get(name, default) != default:
            raise Untranslatable(f"{path}.{name}", params[name], why)
    if params.get("beta", 0.5) != 0.5:
        raise Untranslatable(
            f"{path}.beta",
            params["beta"],
            "ns-2.35 halves the window on the first decrease whatever decrease_num_ says "
            "(tcp.cc, slowdown)",
        )
    if params.get("ecn_feedback", "rfc3168") != "rfc3168":
        raise Untranslatable(
            f"{path}.ecn_feedback",
            params["ecn_feedback"],
            "ns-2.35's FullTcp has RFC 3168's ECE/CWR feedback only: no AccECN (RFC 9768)",
        )
    for switch in ("ecn_plus_plus", "ect_syn", "ect_pure_acks", "ect_fins"):
        if params.get(switch):
            raise Untranslatable(
                f"{path}.{switch}",
                True,
                "ns-2.35's FullTcp sends SYNs, pure ACKs and FINs Not-ECT: no ECN++ "
                "(draft-ietf-tcpm-generalized-ecn)",
            )
    if params.get("ecn_plus", "off") == "seed":
        raise Untranslatable(
            f"{path}.ecn_plus",
            "seed",
            "ns-2.35's FullTcp client always echoes a CE-marked SYN-ACK (ecn_syn_wait_ 0, 1 "
            'and 2 all react to it); use "rfc5562", whose one-segment start is '
            "ecn_syn_wait_ 0",
        )


def _check_queue(queue: Mapping[str, Any], path: str) -> None:
    aqm = queue["aqm"]
    kind = aqm["kind"]
    if kind in _AQM_MISSING:
        raise Untranslatable(f"{path}.aqm.kind", kind, _AQM_MISSING[kind])
    if queue.get("limit_bytes") is not None:
        if kind != "droptail":
            raise Untranslatable(
                f"{path}.limit_bytes",
                queue["limit_bytes"],
                f"ns-2.35's {_AQM_NS2[kind]} limits bytes only in byte mode, as "
                "limit_ x mean_pktsize_ checked before the arrival is added",
            )
        if queue.get("limit_pkts") is not None:
            raise Untranslatable(
                f"{path}.limit_bytes",
                queue["limit_bytes"],
                "ns-2.35's DropTail limits packets or bytes, not both",
            )
    if aqm.get("byte_mode"):
        raise Untranslatable(
            f"{path}.aqm.byte_mode",
            True,
            "ns-2.35's byte mode also measures the hard limit in bytes (limit_ x "
            "mean_pktsize_), which ecnlab's packet limit cannot follow",
        )
    if kind in ("red", "ared"):
        above = aqm["above_max"]
        if above == "ecnm":
            raise Untranslatable(
                f"{path}.aqm.above_max",
                above,
                "ns-2.35's RED drops Not-ECT packets it signals beyond max_th (no ECNM)",
            )
        gentle = aqm.get("gentle", True)
        if kind == "ared" and aqm["ecn"] and above == "drop" and gentle:
            raise Untranslatable(
                f"{path}.aqm.above_max",
                above,
                "ns-2.35's gentle RED stops marking at a fixed probability (mark_p_), not at "
                "max_th, so it cannot follow Adaptive RED's moving max_p",
            )
    if kind == "rem":
        if aqm["alpha"] != 0.1:
            raise Untranslatable(
                f"{path}.aqm.alpha", aqm["alpha"], "ns-2.35's REM has alpha fixed at 0.1"
            )
        if aqm["ecn"] and not aqm["mark_on_dequeue"]:
            raise Untranslatable(
                f"{path}.aqm.mark_on_dequeue",
                False,
                "ns-2.35's REM marks only at departure (markpkts_ true) and otherwise drops "
                "every signalled packet; set mark_on_dequeue = true",
            )


def _dist_kinds(dist: Mapping[str, Any]) -> set[str]:
    kinds = {dist["dist"]}
    for part in dist.get("parts", ()):
        kinds |= _dist_kinds(part)
    return kinds


_RV_KINDS = {"constant", "uniform", "exponential", "pareto"}
_RTT_KINDS = {"constant", "uniform", "discrete"}


def _request_response(kind: str) -> bool:
    return kind in ("exchanges", "web_sessions", "packmime_http")


def check(scenario: Mapping[str, Any]) -> None:
    """Refuse what ns-2.35 cannot express.

    Raises:
        Untranslatable: naming the first such field (``path = value: reason``).
    """
    topo = scenario["topology"]
    if topo.get("kind", "dumbbell") != "dumbbell":
        raise Untranslatable("topology.kind", topo["kind"], "the translation builds the dumbbell only")
    b = topo["bottleneck"]
    if b["random_loss"] > 0:
        raise Untranslatable(
            "topology.bottleneck.random_loss",
            b["random_loss"],
            "not translated (ns-2's error models sit after the queue, ecnlab's loss before it)",
        )
    _check_queue(b["queue"], "topology.bottleneck.queue")
    if b.get("up_queue") is not None:
        _check_queue(b["up_queue"], "topology.bottleneck.up_queue")
    access = topo["access_queue"]
    if access["aqm"]["kind"] != "droptail" or access.get("limit_bytes") is not None:
        raise Untranslatable(
            "topology.access_queue",
            access,
            "access links are translated as packet-limited drop-tail queues only",
        )

    rtts = {}
    for i, w in enumerate(scenario["workloads"]):
        path = f"workloads.{i}"
        kind = w["kind"]
        if kind in ("tpcw_browsers", "packet_source"):
            raise Untranslatable(f"{path}.kind", kind, "not translated to ns-2")
        for side in ("clients", "servers"):
            _check_tcp(tcp_params(scenario, i, side), f"{path}.tcp" if w.get("tcp") else "tcp")
        servers = tcp_params(scenario, i, "servers")
        clients = tcp_params(scenario, i, "clients")
        if servers["ecn_plus"] != clients["ecn_plus"] and servers["ecn_plus"] != "off":
            raise Untranslatable(
                "tcp.clients.ecn_plus",
                clients["ecn_plus"],
                "ns-2.35's FullTcp client always echoes a CE-marked SYN-ACK, as RFC 5562 "
                "does: clients need the servers' ecn_plus",
            )
        if kind == "bulk":
            if servers["ecn_plus"] != "off":
                raise Untranslatable(
                    "tcp.ecn_plus",
                    servers["ecn_plus"],
                    "a bulk flow's sender opens the connection in ns-2 (see docs), so a "
                    "download's server sends no SYN-ACK",
                )
            continue
        rtts[i] = w.get("rtt_ms")
        if rtts[i] is not None and not _dist_kinds(rtts[i]) <= _RTT_KINDS:
            raise Untranslatable(
                f"{path}.rtt_ms",
                rtts[i],
                "DelayBox draws per-connection delays from an ns-2 random variable: "
                "constant, uniform or discrete RTTs only",
            )
        if rtts[i] is not None and clients["header_bytes"] != _DELAYBOX_HEADER_BYTES:
            raise Untranslatable(
                "tcp.header_bytes",
                clients["header_bytes"],
                "ns-2's DelayBox finds a connection's SYN by its 40-byte size",
            )
        if kind == "web_sessions":
            _check_web(w, path)
        if kind == "packmime_http":
            _check_packmime(w, path, clients, servers)
    distinct = {repr(r) for r in rtts.values()}
    if len(distinct) > 1:
        i = max(rtts)
        raise Untranslatable(
            f"workloads.{i}.rtt_ms",
            rtts[i],
            "ns-2's DelayBox keys per-connection delays by host pair: every request/response "
            "workload must have the same rtt_ms",
        )


def _check_web(w: Mapping[str, Any], path: str) -> None:
    site = w["pages_per_site"]
    if site["dist"] != "constant" or math.ceil(site["value"]) != 1:
        raise Untranslatable(
            f"{path}.pages_per_site",
            site,
            "ns-2's WebTraf picks a new server for every page: pages_per_site must be "
            '{ dist = "constant", value = 1 }',
        )
    if w["inter_page_from"] != "completion":
        raise Untranslatable(
            f"{path}.inter_page_from",
            w["inter_page_from"],
            "ns-2's WebTraf interPageOption 0 lets a page start before the previous one has "
            "sent its last request",
        )
    for name in ("inter_page_s", "objects_per_page", "inter_object_s"):
        if not _dist_kinds(w[name]) <= _RV_KINDS:
            raise Untranslatable(
                f"{path}.{name}",
                w[name],
                "WebTraf draws it from an ns-2 random variable: constant, uniform, "
                "exponential or pareto",
            )
    if w["objects_per_page"]["dist"] in ("uniform", "exponential"):
        # WebTraf takes (int) ceil of the draw, so a draw of exactly 0 would be a page with no
        # object, which never completes; ecnlab rounds up to at least 1.
        low = w["objects_per_page"].get("low", 0.0)
        if low <= 0:
            raise Untranslatable(
                f"{path}.objects_per_page",
                w["objects_per_page"],
                "WebTraf would make a page of no object from a draw of 0",
            )


def _check_packmime(
    w: Mapping[str, Any], path: str, clients: Mapping[str, Any], servers: Mapping[str, Any]
) -> None:
    if w["p_persistent"] != 0.09:
        raise Untranslatable(
            f"{path}.p_persistent",
            w["p_persistent"],
            "ns-2.35's PackMime has it fixed at 0.09 (P_PERSISTENT)",
        )
    if w["rwnd_bytes"]["dist"] != "constant":
        raise Untranslatable(
            f"{path}.rwnd_bytes",
            w["rwnd_bytes"],
            "PackMime's agents take the class defaults: one receiver window",
        )
    if clients != servers:
        differ = sorted(k for k in clients if clients.get(k) != servers.get(k))
        raise Untranslatable(
            f"tcp.clients.{differ[0]}",
            clients[differ[0]],
            "PackMime's agents take the class defaults: both sides need the same TCP",
        )


# --- the script -------------------------------------------------------------------------------


def _num(x: float) -> str:
    """A Tcl number: integers without a fraction, floats exactly (repr)."""
    if isinstance(x, bool):
        return "1" if x else "0"
    if isinstance(x, int):
        return str(x)
    if math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return str(int(x)) + ".0"
    return repr(float(x))


def _ms(x: float) -> str:
    return _num(x) + "ms"


def _bps(x: float) -> str:
    return _num(x)


class _Script:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def var(self, target: str, name: str, value: Any, why: str = "") -> None:
        """``target set name value``, with a comment."""
        line = f"{target} set {name} {value}"
        self.lines.append(f"{line:<60s};# {why}" if why else line)

    def section(self, title: str) -> None:
        self.lines.extend(["", f"# --- {title} " + "-" * max(3, 88 - len(title))])

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _sampler(dist: Mapping[str, Any], u: str) -> str:
    """A Tcl command drawing from ``dist`` with the uniform random variable ``$u``."""
    d = dist["dist"]
    if d == "constant":
        return f"ecnlab_constant ${u} {_num(dist['value'])}"
    if d == "uniform":
        return f"ecnlab_uniform ${u} {_num(dist['low'])} {_num(dist['high'])}"
    if d == "exponential":
        return f"ecnlab_exponential ${u} {_num(dist['mean'])}"
    if d == "lomax":
        return f"ecnlab_lomax ${u} {_num(dist['scale'])} {_num(dist['shape'])} {_num(dist['max'])}"
    if d == "pareto":
        return f"ecnlab_pareto ${u} {_num(dist['mean'])} {_num(dist['shape'])}"
    if d == "bounded_pareto":
        return (
            f"ecnlab_bounded_pareto ${u} {_num(dist['low'])} {_num(dist['high'])} "
            f"{_num(dist['shape'])}"
        )
    if d == "discrete":
        values = " ".join(_num(v) for v in dist["values"])
        return f"ecnlab_discrete ${u} {{{values}}} {{{_cumulative(dist['weights'])}}}"
    if d == "mixture":
        parts = " ".join("{" + _sampler(p, u) + "}" for p in dist["parts"])
        return f"ecnlab_mixture ${u} {{{_cumulative(dist['weights'])}}} {{{parts}}}"
    raise ValueError(f"unknown distribution {d!r}")  # pragma: no cover - validated by the core


def _cumulative(weights: Sequence[float]) -> str:
    total = float(sum(weights))
    acc = 0.0
    out = []
    for w in weights:
        acc += w
        out.append(_num(acc / total))
    return " ".join(out)


def _random_variable(
    s: _Script, name: str, dist: Mapping[str, Any], rng: str, scale: float = 1.0, shift: float = 0.0
) -> None:
    """An ns-2 RandomVariable ``$name`` for ``shift + scale X``, X from ``dist`` (constant,
    uniform, exponential, pareto; discrete as an Empirical table written beside the script)."""
    d = dist["dist"]
    if d == "constant":
        s.add(f"set {name} [new RandomVariable/Constant]")
        s.var(f"${name}", "val_", _num(shift + scale * dist["value"]))
    elif d == "uniform":
        s.add(f"set {name} [new RandomVariable/Uniform]")
        s.var(f"${name}", "min_", _num(shift + scale * dist["low"]))
        s.var(f"${name}", "max_", _num(shift + scale * dist["high"]))
    elif d == "exponential":
        assert shift == 0.0 and scale == 1.0
        s.add(f"set {name} [new RandomVariable/Exponential]")
        s.var(f"${name}", "avg_", _num(dist["mean"]))
    elif d == "pareto":
        assert shift == 0.0 and scale == 1.0
        s.add(f"set {name} [new RandomVariable/Pareto]")
        s.var(f"${name}", "avg_", _num(dist["mean"]), "ns-2's Pareto: mean avg_, shape shape_")
        s.var(f"${name}", "shape_", _num(dist["shape"]))
    elif d == "discrete":
        # Empirical reads "value - cdf" lines from a file; the script writes its own table.
        total = float(sum(dist["weights"]))
        acc = 0.0
        rows = []
        for v, w in sorted(zip(dist["values"], dist["weights"])):
            acc += w
            rows.append(f"{_num(shift + scale * v)} 0 {_num(acc / total)}")
        table = f"{name}.cdf"
        s.add(f"set f [open {table} w]")
        s.add(*(f'puts $f "{row}"' for row in rows))
        s.add("close $f")
        s.add(f"set {name} [new RandomVariable/Empirical]")
        s.var(f"${name}", "interpolation_", "0", "discrete: the smallest value whose cdf >= u")
        s.add(f"${name} loadCDF {table}")
    else:  # pragma: no cover - check() refuses the others
        raise ValueError(f"no ns-2 random variable for {d!r}")
    s.add(f"${name} use-rng ${rng}")


def _new_rng(s: _Script, name: str, purpose: str) -> str:
    s.add(f"set {name} [new RNG] ;# {purpose}")
    return name


def _uniform_rv(s: _Script, name: str, purpose: str) -> str:
    rng = _new_rng(s, f"{name}_rng", purpose)
    s.add(f"set {name} [new RandomVariable/Uniform]")
    s.add(f"${name} set min_ 0.0")
    s.add(f"${name} set max_ 1.0")
    s.add(f"${name} use-rng ${rng}")
    return name


def translate(
    scenario: Mapping[str, Any],
    seed: int,
    bulk_flows: Sequence[BulkFlow] = (),
    *,
    count_only: bool = False,
) -> Translation:
    """The ns-2.35 script of a normalized scenario.

    Args:
        scenario: the normalized scenario (every default written out).
        seed: the run seed; ns-2's RNG is seeded from it (:func:`ns2_seed`).
        bulk_flows: the bulk flows ecnlab drew for this scenario and seed (their RTTs, start
            times, windows and hosts), so both simulators run the same flows.
        count_only: a script for timing ns-2 (``ecnlab bench --peers``): no trace, no AQM
            samples and no per-packet Tcl upcall of the applications (flows.txt then has no
            delivered bytes); a queue monitor on each bottleneck link (ns-2's ``QueueMonitor``
            behind ``SnoopQueue``s, no integrators) writes its packet and byte counters to
            ``counts.txt`` at the end (:data:`COUNTS_FILE`, read by :func:`read_counts`).
            The same simulation as the full script: tracing and monitors only observe.
            Bulk workloads only (the request/response machinery needs the upcalls).

    Raises:
        Untranslatable: see :func:`check`.
        ValueError: ``count_only`` with a workload other than bulk.
    """
    check(scenario)
    if count_only:
        for i, w in enumerate(scenario["workloads"]):
            if w["kind"] != "bulk":
                raise ValueError(
                    f"workloads.{i}.kind = {_show(w['kind'])}: a count-only ns-2 script takes "
                    "bulk workloads only"
                )
    s = _Script()
    notes: list[str] = []
    topo = scenario["topology"]
    b = topo["bottleneck"]
    path_rtt_ms = 2 * (2 * topo["access_delay_ms"] + b["delay_ms"])
    duration = scenario["duration_s"]
    warmup = scenario["warmup_s"]

    outputs = (
        [
            "# Run it with `ns THIS_FILE` in an empty folder: a count-only script (for timing",
            f"# ns-2) writes the bottleneck queues' counters to {COUNTS_FILE} and flows.txt there",
            "# (no trace, no AQM samples, no delivered bytes).",
        ]
        if count_only
        else [
            "# Run it with `ns THIS_FILE` in an empty folder: it writes bottleneck.tr (the two",
            "# bottleneck queues' trace), flows.txt, exchanges.txt, aqm.txt and delays.txt there.",
        ]
    )
    s.add(
        f"# ns-2.35 script generated by ecnlab {__version__} (ecnlab crosscheck ns2) from "
        f'scenario "{scenario.get("name", "scenario")}", seed {seed}.',
        *outputs,
        "# Every ns-2 variable the run depends on is set below; where the value differs from",
        "# ns-2.35's default (tcl/lib/ns-default.tcl) the comment gives the default and why.",
        "",
        f"set ecnlab_duration {_num(duration)}",
        f"set ecnlab_warmup {_num(warmup)}",
        f"set ecnlab_count_only {1 if count_only else 0} ;# 1: no trace, no application upcalls",
        "remove-all-packet-headers",
        "add-packet-header IP TCP Flags ;# Flags: ECN bits (hdr_flags)",
        "set ns [new Simulator]",
        "$ns use-scheduler Heap",
        "global defaultRNG",
        f"$defaultRNG seed {ns2_seed(seed)} ;# seeds every RNG created after it",
    )

    _tcp_defaults(s, notes)
    nodes = _network(s, scenario, notes, count_only)
    s.section("ecnlab library (python/ecnlab/crosscheck/ns2lib.tcl)")
    s.add(_LIB.read_text().rstrip("\n"))

    profiles = _tcp_profiles(s, scenario)
    _tcp_notes(scenario, notes)
    first_cid = 1 + max((f.flow for f in bulk_flows), default=-1) + 1
    packmime_offset = 1_000_000_000
    _bulk(s, scenario, bulk_flows, profiles, path_rtt_ms, topo)
    _delaybox(s, scenario, path_rtt_ms, nodes, notes)
    s.add("set ecnlab_next_cid " + str(first_cid))
    for i, w in enumerate(scenario["workloads"]):
        if w["kind"] == "exchanges":
            _exchanges(s, scenario, i, w, profiles, topo)
        elif w["kind"] == "web_sessions":
            _web(s, scenario, i, w, profiles, topo, notes)
        elif w["kind"] == "packmime_http":
            _packmime(s, scenario, i, w, topo, packmime_offset, notes)
    if not count_only:
        _aqm_sampling(s, scenario)

    s.section("end of the run")
    if count_only:
        s.add(
            "proc ecnlab_end {} {",
            "\tglobal ecnlab_qmon",
            "\tecnlab_finish",
            f"\tset f [open {COUNTS_FILE} w]",
            "\tforeach name {bottleneck_up bottleneck_down} {",
            "\t\tset qm $ecnlab_qmon($name)",
            '\t\tputs -nonewline $f "$name"',
            f"\t\tforeach var {{{' '.join(COUNTERS)}}} {{",
            '\t\t\tputs -nonewline $f " [$qm set $var]"',
            "\t\t}",
            '\t\tputs $f ""',
            "\t}",
            "\tclose $f",
            "\texit 0",
            "}",
        )
    else:
        s.add(
            "proc ecnlab_end {} {",
            "\tglobal ns ecnlab_trace",
            "\tecnlab_finish",
            "\tecnlab_aqm_close",
            "\t$ns flush-trace",
            "\tclose $ecnlab_trace",
            "\texit 0",
            "}",
        )
    s.add(
        f"$ns at {_num(duration)} ecnlab_end",
        "ecnlab_fast_instvars",
        "$ns run",
    )
    if any(w["kind"] == "bulk" for w in scenario["workloads"]):
        notes.append(
            "bulk flows: the sending end opens the connection (FullTcp's listener gets no "
            "upcall when it is established); ecnlab's client always opens"
        )
    if any(_request_response(w["kind"]) for w in scenario["workloads"]):
        notes.append(
            "FullTcp's server answers the client's FIN with a pure ACK and sends its own FIN as "
            "a second segment at the same instant (the bottleneck trace); ecnlab's server sends "
            "one FIN that carries the ACK, so ns-2 has one more packet per connection from the "
            "servers"
        )
    header = [f"# note: {n}" for n in notes]
    script = s.text()
    first = script.index("\n\n")
    script = script[:first] + "\n" + "\n".join(header) + script[first:]
    return Translation(
        script=script,
        seed=seed,
        path_rtt_ms=path_rtt_ms,
        first_exchange_cid=first_cid,
        packmime_fid_offset=packmime_offset,
        notes=notes,
    )


# ns-2.35 variables the translation relies on, written out in every script: (class, variable,
# value, why). A value that differs from ns-2.35's default says so and why.
_TCP_DEFAULTS: tuple[tuple[str, str, str, str], ...] = (
    ("Agent/TCP", "syn_", "true", "FullTcp always models the SYN exchange"),
    ("Agent/TCP", "delay_growth_", "true", ""),
    ("Agent/TCP", "windowInitOption_", "1", "initial window: windowInit_ segments"),
    ("Agent/TCP", "windowOption_", "1", "congestion avoidance: cwnd += 1/cwnd per ACK"),
    ("Agent/TCP", "increase_num_", "1.0", ""),
    ("Agent/TCP", "decrease_num_", "0.5", ""),
    ("Agent/TCP", "maxcwnd_", "0", "no cap but window_"),
    ("Agent/TCP", "max_ssthresh_", "0", ""),
    ("Agent/TCP", "maxburst_", "0", ""),
    ("Agent/TCP", "overhead_", "0", ""),
    ("Agent/TCP", "timestamps_", "false", ""),
    ("Agent/TCP", "ts_resetRTO_", "false", ""),
    ("Agent/TCP", "rfc2988_", "true", "min RTO applied before the backoff"),
    ("Agent/TCP", "timerfix_", "true", ""),
    ("Agent/TCP", "srtt_init_", "0", ""),
    ("Agent/TCP", "rttvar_init_", "12", ""),
    ("Agent/TCP", "rttvar_exp_", "2", "RTO = srtt + 4 rttvar"),
    ("Agent/TCP", "T_SRTT_BITS", "3", ""),
    ("Agent/TCP", "T_RTTVAR_BITS", "2", ""),
    ("Agent/TCP", "tcpTick_", "0.001", "ns-2.35: 0.01; ecnlab's RTT clock granularity is 1 ms"),
    ("Agent/TCP", "bugFix_", "true", ""),
    (
        "Agent/TCP",
        "slow_start_restart_",
        "false",
        (
            "ns-2.35: true (FullTcp restarts from windowInit_ after an idle period longer than "
            "srtt + 4 rttvar); ecnlab has no restart after idle"
        ),
    ),
    ("Agent/TCP", "restart_bugfix_", "true", ""),
    ("Agent/TCP", "precisionReduce_", "true", ""),
    ("Agent/TCP", "SetCWRonRetransmit_", "true", ""),
    ("Agent/TCP", "old_ecn_", "0", ""),
    ("Agent/TCP", "frto_enabled_", "0", ""),
    ("Agent/TCP", "QOption_", "0", ""),
    ("Agent/TCP", "control_increase_", "0", ""),
    ("Agent/TCP", "useHeaders_", "true", ""),
    ("Agent/TCP/FullTcp", "spa_thresh_", "0", ""),
    ("Agent/TCP/FullTcp", "tcprexmtthresh_", "3", "three duplicate ACKs"),
    ("Agent/TCP/FullTcp", "iss_", "0", ""),
    (
        "Agent/TCP/FullTcp",
        "nodelay_",
        "true",
        "ns-2.35: false (Nagle); ecnlab sends a short last segment at once",
    ),
    ("Agent/TCP/FullTcp", "data_on_syn_", "false", ""),
    ("Agent/TCP/FullTcp", "dupseg_fix_", "true", ""),
    ("Agent/TCP/FullTcp", "dupack_reset_", "false", ""),
    ("Agent/TCP/FullTcp", "close_on_empty_", "false", ""),
    ("Agent/TCP/FullTcp", "signal_on_empty_", "false", ""),
    ("Agent/TCP/FullTcp", "ts_option_size_", "10", ""),
    ("Agent/TCP/FullTcp", "reno_fastrecov_", "true", ""),
    ("Agent/TCP/FullTcp", "pipectrl_", "false", ""),
    ("Agent/TCP/FullTcp", "open_cwnd_on_pack_", "true", "Newreno's init sets it false"),
    ("Agent/TCP/FullTcp", "halfclose_", "false", "an end closes once it has the peer's FIN"),
    ("Agent/TCP/FullTcp", "nopredict_", "false", ""),
    (
        "Agent/TCP/FullTcp",
        "ecn_syn_wait_",
        "0",
        "ECN+: one segment after a marked SYN-ACK (RFC 5562)",
    ),
    ("Agent/TCP/FullTcp", "debug_", "false", ""),
    ("Agent/TCP/FullTcp/Newreno", "recov_maxburst_", "2", ""),
)


def _tcp_defaults(s: _Script, notes: list[str]) -> None:
    s.section("TCP: ns-2.35 class defaults this translation relies on, written out")
    for target, name, value, why in _TCP_DEFAULTS:
        s.var(target, name, value, why)
    notes.append(
        "FullTcp's delayed ACK is a periodic timer (every interval_ from time 0, as BSD's "
        "fast timer): an ACK waits up to delayed_ack_ms, ecnlab's exactly delayed_ack_ms"
    )
    notes.append(
        "FullTcp sends retransmissions ECN-capable (tcp-full.cc, sendpacket: ECT on every "
        "segment with data); ecnlab sends them Not-ECT (RFC 3168 6.1.5) unless "
        "tcp.ect_retransmissions = true"
    )
    notes.append(
        "after a SYN or SYN-ACK timeout FullTcp starts with its initial window and ssthresh 2 "
        "(timeout_action halves a one-segment window); ecnlab with iw_one_after_syn_loss "
        "starts with one segment and keeps ssthresh"
    )
    notes.append("ns-2.35's FullTcp never gives up a handshake (ecnlab does after syn_retries)")


def _tcp_profile_lines(params: Mapping[str, Any], listener: bool) -> list[str]:
    """Tcl lines configuring agent ``$a`` for one side's TCP settings."""
    lines = [
        f"$a set segsize_ {params['mss_bytes']}",
        f"$a set tcpip_base_hdr_size_ {params['header_bytes']}",
        f"$a set windowInit_ {params['initial_window_segments']}",
        f"$a set rtxcur_init_ {_num(params['initial_rto_s'])}",
        f"$a set minrto_ {_num(params['min_rto_s'])}",
        f"$a set maxrto_ {_num(params['max_rto_s'])}",
        f"$a set segsperack_ {params['ack_every_segments']}",
        f"$a set interval_ {_num(params['delayed_ack_ms'] / 1000)}",
        f"$a set ecn_ {1 if params['ecn'] else 0}",
    ]
    ecn_syn = listener and params["ecn"] and params["ecn_plus"] == "rfc5562"
    lines.append(f"$a set ecn_syn_ {'true' if ecn_syn else 'false'}")
    return lines


def _tcp_notes(scenario: Mapping[str, Any], notes: list[str]) -> None:
    """FullTcp reacts to echoes and losses and ends timer backoffs its own way; say so where
    ecnlab's hosts do not."""
    hosts = [
        tcp_params(scenario, i, side)
        for i in range(len(scenario["workloads"]))
        for side in ("clients", "servers")
    ]
    if any(p["ecn"] and p.get("ecn_response", "rfc3168") == "rfc3168" for p in hosts):
        notes.append(
            "FullTcp halves its window on an ECN echo whatever its size and below one segment "
            "waits for its retransmission timer (tcp.cc, slowdown; tcp-full.cc, recv); "
            'ecnlab\'s ecn_response = "rfc3168" stops at two segments: "ns2" models FullTcp\'s'
        )
    if any(p.get("loss_response", "rfc5681") == "rfc5681" for p in hosts):
        notes.append(
            "FullTcp answers a loss as 4.4BSD's Reno: ssthresh is the whole segments of half of "
            "cwnd (tcp.cc, slowdown), nothing new goes at the third duplicate ACK and the ACK "
            "that ends recovery also opens cwnd (tcp-full.cc, recv); ecnlab's loss_response = "
            '"rfc5681" halves FlightSize in bytes: "ns2" models FullTcp\'s'
        )
    if any(p.get("rto_backoff_end", "rtt_sample") == "rtt_sample" for p in hosts):
        notes.append(
            "FullTcp ends a retransmission timer's backoff at every ACK of new data "
            '(tcp-full.cc, newack); ecnlab\'s rto_backoff_end = "rtt_sample" keeps it until an '
            'RTT sample: "new_ack" models FullTcp\'s'
        )


def _tcp_profiles(s: _Script, scenario: Mapping[str, Any]) -> dict[tuple[int, str], str]:
    """One Tcl proc per distinct (TCP settings, side) making a configured FullTcp agent;
    returns the proc name of every (workload, "c"/"s")."""
    s.section("TCP settings of each workload's clients and servers (from the scenario)")
    s.add(
        "# ns-2.35 defaults of these: segsize_ 536, tcpip_base_hdr_size_ 40, windowInit_ 2,",
        "# rtxcur_init_ 3.0, minrto_ 0.2, maxrto_ 60, segsperack_ 1, interval_ 0.1, ecn_ 0,",
        "# ecn_syn_ false, window_ 20 (set per connection from its receiver window)",
    )
    made: dict[str, str] = {}
    out: dict[tuple[int, str], str] = {}
    for i in range(len(scenario["workloads"])):
        for side, table in (("c", "clients"), ("s", "servers")):
            params = tcp_params(scenario, i, table)
            body = [f"set a [new {_TCP_CLASS[params['congestion_control']]}]"]
            body += _tcp_profile_lines(params, listener=side == "s")
            key = "\n".join(body)
            if key not in made:
                name = f"ecnlab_tcp{len(made)}"
                made[key] = name
                cls = _TCP_CLASS[params["congestion_control"]]
                s.add(f"proc {name} {{{{a {{}}}}}} {{")
                s.add(f'\tif {{$a == ""}} {{ set a [new {cls}] }}')
                s.add(*("\t" + line for line in body[1:]))
                s.add("\treturn $a", "}")
                s.add(f"set ecnlab_key({name}) {cls},{1 if params['ecn'] else 0}")
            out[(i, side)] = made[key]
    return out


def _queue(
    s: _Script, a: str, b: str, queue: Mapping[str, Any], rate_bps: float, notes: list[str]
) -> None:
    """Configure the queue of the simplex link $a -> $b."""
    aqm = queue["aqm"]
    kind = aqm["kind"]
    q = f"[[$ns link ${a} ${b}] queue]"
    s.add(f"set q {q}")
    limit = queue.get("limit_pkts")
    if kind == "droptail":
        s.var("$q", "drop_front_", "false")
        s.var("$q", "summarystats_", "false")
        if limit is None:
            s.var("$q", "queue_in_bytes_", "true")
            s.var("$q", "mean_pktsize_", "1", "so the byte limit is limit_ bytes")
            s.var(
                "$q",
                "limit_",
                queue["limit_bytes"] + 1,
                "drop-tail.cc drops when bytes + size >= limit_",
            )
        else:
            s.var("$q", "queue_in_bytes_", "false")
            s.var("$q", "mean_pktsize_", "500")
            s.var(
                "$q",
                "limit_",
                limit + 1,
                f"{limit} waiting: drop-tail.cc drops when queue + 1 >= limit_",
            )
        return
    s.var(
        "$q",
        "limit_",
        limit if kind != "rem" else limit + 1,
        "waiting packets"
        if kind != "rem"
        else f"{limit} waiting: rem.cc drops when the queue with the arrival >= limit_",
    )
    if kind in ("red", "ared"):
        _red(s, aqm, rate_bps, kind == "ared")
    elif kind == "rem":
        s.var("$q", "gamma_", _num(aqm["gamma"]))
        s.var("$q", "phi_", _num(aqm["phi"]))
        s.var("$q", "inw_", _num(aqm["in_weight"]))
        s.var("$q", "mean_pktsize_", aqm["mean_pkt_bytes"])
        s.var("$q", "pupdtime_", _num(aqm["update_ms"] / 1000), "update period (s)")
        s.var("$q", "pbo_", _num(aqm["b_star_pkts"]), "target backlog b*")
        s.var(
            "$q",
            "markpkts_",
            "true" if aqm["mark_on_dequeue"] else "false",
            "true: mark at departure; false: drop at arrival",
        )
        s.var("$q", "qib_", "false")
    elif kind == "pi":
        s.var("$q", "bytes_", "false")
        s.var("$q", "queue_in_bytes_", "false")
        s.var("$q", "a_", _num(aqm["a"]))
        s.var("$q", "b_", _num(aqm["b"]))
        s.var("$q", "w_", _num(aqm["sample_hz"]), "update frequency (Hz); ns-2.35: 170")
        s.var("$q", "qref_", _num(aqm["q_ref_pkts"]))
        s.var("$q", "mean_pktsize_", aqm["mean_pkt_bytes"])
        s.var("$q", "setbit_", "true" if aqm["ecn"] else "false")


def _red(s: _Script, aqm: Mapping[str, Any], rate_bps: float, adaptive: bool) -> None:
    mean = aqm["mean_pkt_bytes"]
    if adaptive:
        c = rate_bps / (8.0 * max(mean, 1))
        lo, hi = aqm.get("min_th_pkts"), aqm.get("max_th_pkts")
        if lo is not None and hi is None:
            hi = 3 * lo
        elif lo is None and hi is not None:
            lo = hi / 3
        elif lo is None:
            lo = max(aqm["target_delay_ms"] / 1e3 * c / 2, 5.0)
            hi = 3 * lo
        w_q = aqm.get("w_q")
        if w_q is None:
            w_q = 1.0 - math.exp(-1.0 / c)
        gentle = True
    else:
        lo, hi, w_q, gentle = aqm["min_th_pkts"], aqm["max_th_pkts"], aqm["w_q"], aqm["gentle"]
    s.var("$q", "bytes_", "false", "ns-2.35: true (since 2004/10/11)")
    s.var("$q", "queue_in_bytes_", "false", "ns-2.35: true (since 2004/10/11)")
    s.var("$q", "thresh_", _num(lo), "min_th (packets); ns-2.35: 0 (automatic)")
    s.var("$q", "maxthresh_", _num(hi), "max_th (packets); ns-2.35: 0 (automatic)")
    s.var("$q", "q_weight_", _num(w_q), "ns-2.35: -1 (automatic)")
    s.var("$q", "linterm_", _num(1.0 / aqm["max_p"]), "1 / max_p")
    s.var("$q", "mean_pktsize_", mean)
    s.var("$q", "idle_pktsize_", "100")
    s.var("$q", "wait_", "true" if aqm["wait"] else "false")
    s.var("$q", "gentle_", "true" if gentle else "false")
    s.var("$q", "setbit_", "true" if aqm["ecn"] else "false", "mark ECT packets")
    above = aqm["above_max"]
    if above == "mark":
        s.var("$q", "use_mark_p_", "true", "no forced drops from the average")
        s.var(
            "$q",
            "mark_p_",
            "2.0",
            "ns-2.35: 0.1; above 1 every signal to an ECT packet is a mark (RED*)",
        )
    elif gentle:
        s.var("$q", "use_mark_p_", "true", "no forced drops from the average")
        s.var(
            "$q",
            "mark_p_",
            _num(aqm["max_p"]),
            "ns-2.35: 0.1; = max_p: mark below max_th, drop from it (RFC 3168)",
        )
    else:
        s.var("$q", "use_mark_p_", "false", "forced drop at avg >= max_th (non-gentle)")
        s.var("$q", "mark_p_", "0.1")
    s.var("$q", "cautious_", "0")
    s.var("$q", "feng_adaptive_", "0")
    s.var("$q", "drop_tail_", "true", "a forced drop takes the arrival")
    s.var("$q", "drop_front_", "false")
    s.var("$q", "drop_rand_", "false")
    s.var("$q", "ns1_compat_", "false")
    s.var("$q", "summarystats_", "false")
    if adaptive:
        s.var("$q", "adaptive_", "1")
        s.var("$q", "targetdelay_", _num(aqm["target_delay_ms"] / 1000))
        s.var("$q", "interval_", _num(aqm["interval_ms"] / 1000))
        s.var("$q", "alpha_", _num(aqm["alpha_max"]))
        s.var("$q", "beta_", _num(aqm["beta"]))
        s.var("$q", "top_", _num(aqm["top"]))
        s.var("$q", "bottom_", _num(aqm["bottom"]), "ns-2.35: 0 (min(0.01, 80000 / rate))")
    else:
        s.var("$q", "adaptive_", "0")


def _network(
    s: _Script, scenario: Mapping[str, Any], notes: list[str], count_only: bool = False
) -> dict[str, Any]:
    topo = scenario["topology"]
    b = topo["bottleneck"]
    delaybox = any(
        _request_response(w["kind"]) and w.get("rtt_ms") is not None for w in scenario["workloads"]
    )
    s.section("network: client hosts -- R1 == bottleneck == R2 -- server hosts")
    s.var("DelayLink", "avoidReordering_", "false")
    s.add(
        "set R1 [$ns DelayBox] ;# per-connection delays (DelayBox)"
        if delaybox
        else "set R1 [$ns node]"
    )
    s.add("set R2 [$ns node]")
    rate = b["rate_bps"]
    down = b["queue"]
    up = b.get("up_queue") or down
    for a, z, queue in (("R1", "R2", up), ("R2", "R1", down)):
        s.add(
            f"$ns simplex-link ${a} ${z} {_bps(rate)} {_ms(b['delay_ms'])} "
            f"{_AQM_NS2[queue['aqm']['kind']]}"
        )
        _queue(s, a, z, queue, rate, notes)
    for queue in (down, up):
        kind = queue["aqm"]["kind"]
        if kind in ("red", "ared") and queue["aqm"].get("min_queue_pkts", 0) != 2:
            notes.append(
                "ns-2.35's RED never signals while the queue holds at most one packet "
                "(min_queue_pkts = 2 in ecnlab; this scenario has "
                f"{queue['aqm'].get('min_queue_pkts', 0)})"
            )
    for kind in {down["aqm"]["kind"], up["aqm"]["kind"]}:
        if kind in ("red", "ared"):
            notes.append(
                "ns-2.35's RED lets the first arrival after avg crosses min_th (or after the "
                "queue held one packet) pass (its 'old' flag); ecnlab does not"
            )
        if kind == "ared":
            notes.append(
                "ns-2.35's Adaptive RED adapts max_p at the first arrival at least interval_ "
                "after its last change; ecnlab on a fixed timer"
            )
        if kind == "pi":
            notes.append("ns-2.35's PI signals whatever the queue length (no minimum)")
    if count_only:
        s.add(
            "# count-only: a queue monitor on each bottleneck link instead of a trace (its",
            "# SnoopQueues count arrivals at the queue, departures into the link and drops)",
        )
        for name, a, z in (("bottleneck_up", "R1", "R2"), ("bottleneck_down", "R2", "R1")):
            s.add(
                f"set ecnlab_qmon({name}) [new QueueMonitor]",
                f"[$ns link ${a} ${z}] attach-monitors [new SnoopQueue/In] [new SnoopQueue/Out] "
                f"[new SnoopQueue/Drop] $ecnlab_qmon({name})",
            )
    else:
        s.add(
            "Trace set show_tcphdr_ 1 ;# trace lines carry ackno, TCP flags, header length",
            "set ecnlab_trace [open bottleneck.tr w]",
            "$ns trace-queue $R1 $R2 $ecnlab_trace",
            "$ns trace-queue $R2 $R1 $ecnlab_trace",
        )
    access = topo["access_queue"]["limit_pkts"]
    arate = topo["access_rate_bps"]
    adelay = topo["access_delay_ms"]
    for side, router, n in (("cnode", "R1", topo["clients"]), ("snode", "R2", topo["servers"])):
        s.add(
            f"for {{set i 0}} {{$i < {n}}} {{incr i}} {{",
            f"\tset {side}($i) [$ns node]",
            f"\t$ns duplex-link ${side}($i) ${router} {_bps(arate)} {_ms(adelay)} DropTail",
            f"\t$ns queue-limit ${side}($i) ${router} {access + 1} ;# {access} waiting",
            f"\t$ns queue-limit ${router} ${side}($i) {access + 1}",
            "}",
        )
    return {"delaybox": delaybox}


def _bulk(
    s: _Script,
    scenario: Mapping[str, Any],
    flows: Sequence[BulkFlow],
    profiles: Mapping[tuple[int, str], str],
    path_rtt_ms: float,
    topo: Mapping[str, Any],
) -> None:
    if not flows:
        return
    s.section("bulk flows, as ecnlab drew them (flow id + 1, client, server, start, RTT)")
    res_ms = topo["delay_resolution_us"] / 1000
    for f in sorted(flows, key=lambda f: f.flow):
        w = scenario["workloads"][f.workload]
        mss = tcp_params(scenario, f.workload, "servers")["mss_bytes"]
        window = max(1, f.rwnd_bytes // mss)
        cid = f.flow + 1
        # ecnlab adds the extra RTT as delay lines rounded to delay_resolution_us, half each way.
        extra = max(0.0, round((f.rtt_ms - path_rtt_ms) / res_ms) * res_ms)
        cnode = f"$cnode({f.client})"
        if extra > 0:
            s.add(
                f"set leaf({cid}) [$ns node]",
                f"$ns duplex-link $leaf({cid}) {cnode} {_bps(_LEAF_RATE_BPS)} "
                f"{_ms(extra / 2)} DropTail ;# RTT {_num(f.rtt_ms)} ms",
                f"$ns queue-limit $leaf({cid}) {cnode} 100000",
                f"$ns queue-limit {cnode} $leaf({cid}) 100000",
            )
            cnode = f"$leaf({cid})"
        bytes_ = w.get("bytes")
        s.add(
            f'$ns at {_num(f.start_s)} "ecnlab_bulk {cid} {f.workload} {f.client} {f.server} '
            f"{cnode} $snode({f.server}) {profiles[(f.workload, 'c')]} "
            f"{profiles[(f.workload, 's')]} {window} {w['direction']} "
            f'{-1 if bytes_ is None else int(bytes_)}"'
        )


def _delaybox(
    s: _Script,
    scenario: Mapping[str, Any],
    path_rtt_ms: float,
    nodes: Mapping[str, Any],
    notes: list[str],
) -> None:
    if not nodes["delaybox"]:
        return
    rtt = next(
        w["rtt_ms"]
        for w in scenario["workloads"]
        if _request_response(w["kind"]) and w.get("rtt_ms") is not None
    )
    topo = scenario["topology"]
    s.section("per-connection RTTs: DelayBox at R1 delays each connection both ways")
    s.add("# one-way delay (ms) = (RTT - path RTT) / 2, drawn once per connection at its SYN")
    rng = _new_rng(s, "rtt_rng", "per-connection RTTs")
    _random_variable(s, "rtt_delay", rtt, rng, scale=0.5, shift=-path_rtt_ms / 2)
    s.add(
        f"for {{set i 0}} {{$i < {topo['clients']}}} {{incr i}} {{",
        f"\tfor {{set j 0}} {{$j < {topo['servers']}}} {{incr j}} {{",
        "\t\t$R1 add-rule [$cnode($i) id] [$snode($j) id] $rtt_delay",
        "\t}",
        "}",
        "$R1 set-delay-file delays.txt",
    )
    notes.append(
        "per-connection RTTs: DelayBox draws a continuous delay; ecnlab rounds the extra "
        "delay to delay_resolution_us"
    )
    notes.append(
        "DelayBox forgets a connection once its FIN has passed R1, so a packet of that "
        "direction sent later (a retransmitted FIN) travels without the extra delay"
    )


def _exchange_list_proc(s: _Script, name: str, w: Mapping[str, Any], u: str, think: bool) -> None:
    """``proc name {}`` returning one connection's exchanges, drawn in ecnlab's order."""
    n = w.get("exchanges_per_connection", {"dist": "constant", "value": 1})
    server_delay = w.get("server_delay_ms", {"dist": "constant", "value": 0})
    think_time = w.get("think_time_s", {"dist": "constant", "value": 0}) if think else None
    request = w["request_bytes"]
    response = w.get("response_bytes", w.get("object_bytes"))
    s.add(
        f"proc {name} {{}} {{",
        f"\tglobal {u}",
        f"\tset n [ecnlab_count [{_sampler(n, u)}]]",
        "\tset ex {}",
        "\tfor {set k 0} {$k < $n} {incr k} {",
        f"\t\tset req [ecnlab_bytes [{_sampler(request, u)}]]",
        f"\t\tset resp [ecnlab_bytes [{_sampler(response, u)}]]",
        f"\t\tset d [expr {{max(0.0, [{_sampler(server_delay, u)}]) / 1000.0}}]",
        (
            f"\t\tset t [expr {{max(0.0, [{_sampler(think_time, u)}])}}]"
            if think_time
            else "\t\tset t 0.0"
        ),
        "\t\tlappend ex [list $req $resp $d $t]",
        "\t}",
        "\treturn $ex",
        "}",
    )


def _exchanges(
    s: _Script,
    scenario: Mapping[str, Any],
    i: int,
    w: Mapping[str, Any],
    profiles: Mapping[tuple[int, str], str],
    topo: Mapping[str, Any],
) -> None:
    s.section(f"workload {i}: Poisson connections carrying request/response exchanges")
    u = _uniform_rv(s, f"w{i}_u", f"workload {i}: hosts, windows, sizes, delays")
    arr = _new_rng(s, f"w{i}_arrivals", f"workload {i}: arrival gaps")
    mss = tcp_params(scenario, i, "servers")["mss_bytes"]
    _exchange_list_proc(s, f"w{i}_exchanges", w, u, think=True)
    rate = w["arrival_rate_per_s"]
    stop = w.get("stop_s")
    stop = scenario["duration_s"] if stop is None else stop
    s.add(
        f"proc w{i}_arrive {{}} {{",
        f"\tglobal ns cnode snode ecnlab_next_cid {u} w{i}_arrivals",
        f"\tset c [expr {{int([${u} value] * {topo['clients']})}}]",
        f"\tset s [expr {{int([${u} value] * {topo['servers']})}}]",
        f"\tset window [ecnlab_window [ecnlab_bytes [{_sampler(w['rwnd_bytes'], u)}]] {mss}]",
        f"\tset ex [w{i}_exchanges]",
        "\tset cid $ecnlab_next_cid",
        "\tincr ecnlab_next_cid",
        f"\tecnlab_exchanges $cid {i} $c $s $cnode($c) $snode($s) {profiles[(i, 'c')]} "
        f"{profiles[(i, 's')]} $window $ex {{}}",
        f"\tset next [expr {{[$ns now] + [${arr} exponential {_num(1.0 / rate)}]}}]",
        f"\tif {{$next <= {_num(stop)}}} {{ $ns at $next w{i}_arrive }}",
        "}",
        f"$ns at [expr {{{_num(w['start_s'])} + [${arr} exponential {_num(1.0 / rate)}]}}] "
        f"w{i}_arrive",
    )


def _web(
    s: _Script,
    scenario: Mapping[str, Any],
    i: int,
    w: Mapping[str, Any],
    profiles: Mapping[tuple[int, str], str],
    topo: Mapping[str, Any],
    notes: list[str],
) -> None:
    s.section(f"workload {i}: web sessions with ns-2's PagePool/WebTraf")
    s.add(
        "# WebTraf schedules sessions, pages and objects (webcache/webtraf.cc): a session keeps",
        "# the client WebTraf picked for it, every page draws its server, its object count",
        "# (ceil) and, once done, the gap to the next page (interPageOption 1); objects are",
        "# requested inter_object apart. launch-req is replaced so an object is one FullTcp",
        "# connection carrying its request and response, as in ecnlab (WebTraf's own request",
        "# connection, then response connection opened by the server, with sizes in 1000-byte",
        "# packets, is not used).",
    )
    u = _uniform_rv(s, f"w{i}_u", f"workload {i}: object sizes, windows, server delays")
    rv_rng = _new_rng(s, f"w{i}_rv_rng", f"workload {i}: WebTraf's page and object draws")
    arr = _new_rng(s, f"w{i}_arrivals", f"workload {i}: session arrivals")
    mss = tcp_params(scenario, i, "servers")["mss_bytes"]
    _exchange_list_proc(s, f"w{i}_object", w, u, think=False)
    s.var("PagePool/WebTraf", "recycle_page_", "0", "the random variables are shared by sessions")
    s.var("PagePool/WebTraf", "fulltcp_", "0", "agents WebTraf allocates are deleted unused")
    s.var("PagePool/WebTraf", "dont_recycle_", "0")
    s.var("PagePool/WebTraf", "enable_conn_timer_", "0")
    s.add(f"set w{i}_pool [new PagePool/WebTraf]")
    pool = f"$w{i}_pool"
    s.add(
        f"{pool} set-num-client {topo['clients']}",
        f"{pool} set-num-server {topo['servers']}",
        f"for {{set k 0}} {{$k < {topo['clients']}}} {{incr k}} {{ {pool} set-client $k $cnode($k);"
        " set client_index([$cnode($k) id]) $k }",
        f"for {{set k 0}} {{$k < {topo['servers']}}} {{incr k}} {{ {pool} set-server $k $snode($k);"
        " set server_index([$snode($k) id]) $k }",
    )
    _random_variable(s, f"w{i}_inter_page", w["inter_page_s"], rv_rng)
    _random_variable(s, f"w{i}_objects", w["objects_per_page"], rv_rng)
    _random_variable(s, f"w{i}_inter_object", w["inter_object_s"], rv_rng)
    s.add(f"set w{i}_size [new RandomVariable/Constant] ;# unused: launch-req draws the size")
    s.add(f"$w{i}_size set val_ 1")
    rate = w["session_rate_per_s"]
    stop = w.get("stop_s")
    stop = scenario["duration_s"] if stop is None else stop
    s.add(
        "# sessions arrive as a Poisson process until stop_s; each has ceil(pages) pages",
        "set launch {}",
        f"set t [expr {{{_num(w['start_s'])} + [${arr} exponential {_num(1.0 / rate)}]}}]",
        f"while {{$t <= {_num(stop)}}} {{",
        f"\tlappend launch $t [ecnlab_count_up [{_sampler(w['pages_per_session'], u)}]]",
        f"\tset t [expr {{$t + [${arr} exponential {_num(1.0 / rate)}]}}]",
        "}",
        f"{pool} set-num-session [expr {{[llength $launch] / 2}}]",
        "set k 0",
        "foreach {t pages} $launch {",
        f"\t{pool} create-session $k $pages $t $w{i}_inter_page $w{i}_objects "
        f"$w{i}_inter_object $w{i}_size",
        "\tincr k",
        "}",
        f"{pool} set-interPageOption 1 ;# the gap runs from the end of a page",
        "# WebTraf allocates a TCP agent and a sink per object before calling launch-req; the",
        "# replacement does not use them, so the allocation hands out one unused pair",
        "set ecnlab_unused_tcp [new Agent/TCP]",
        "set ecnlab_unused_sink [new Agent/TCPSink]",
        "PagePool/WebTraf instproc alloc-tcp {} { global ecnlab_unused_tcp; return $ecnlab_unused_tcp }",
        "PagePool/WebTraf instproc alloc-tcp-sink {} {",
        "\tglobal ecnlab_unused_sink",
        "\treturn $ecnlab_unused_sink",
        "}",
        "PagePool/WebTraf instproc launch-req {id pid clnt svr ctcp csnk size} {",
        "\tglobal ns ecnlab_next_cid client_index server_index " + u,
        "\tset c $client_index([$clnt id])",
        "\tset s $server_index([$svr id])",
        f"\tset window [ecnlab_window [ecnlab_bytes [{_sampler(w['rwnd_bytes'], u)}]] {mss}]",
        "\tset cid $ecnlab_next_cid",
        "\tincr ecnlab_next_cid",
        f"\tecnlab_exchanges $cid {i} $c $s $clnt $svr {profiles[(i, 'c')]} "
        f'{profiles[(i, "s")]} $window [w{i}_object] "$self doneObj $pid"',
        "}",
    )
    notes.append(
        "web sessions: WebTraf draws each session's client and each page's server with ns-2's "
        "default RNG; pages, objects and gaps from ns-2 random variables"
    )


def _packmime(
    s: _Script,
    scenario: Mapping[str, Any],
    i: int,
    w: Mapping[str, Any],
    topo: Mapping[str, Any],
    offset: int,
    notes: list[str],
) -> None:
    params = tcp_params(scenario, i, "clients")
    s.section(f"workload {i}: ns-2's PackMime-HTTP")
    s.add(
        "# PackMime's agents take the FullTcp class defaults: the workload's TCP settings go",
        "# there. Its client and server nodes are used in pairs (client k with server k).",
    )
    s.add("set a Agent/TCP/FullTcp ;# class defaults, inherited by Newreno")
    s.add(*_tcp_profile_lines(params, listener=True))
    mss = params["mss_bytes"]
    window = max(1, int(w["rwnd_bytes"]["value"]) // mss)
    s.add(f"Agent/TCP/FullTcp set window_ {window} ;# receiver window in segments")
    s.add(f"set pm{i} [new PackMimeHTTP]")
    pm = f"$pm{i}"
    s.add(f"{pm} set-TCP {_PACKMIME_TCP[params['congestion_control']]}")
    # packmime_HTTP.h: MAX_NODES 10 client and server nodes
    pairs = min(_PACKMIME_MAX_NODES, max(topo["clients"], topo["servers"]))
    if max(topo["clients"], topo["servers"]) > _PACKMIME_MAX_NODES:
        notes.append(
            f"PackMime takes at most {_PACKMIME_MAX_NODES} client and server nodes: its "
            f"connections use the first {pairs} pairs of hosts"
        )
    s.add(
        f"for {{set k 0}} {{$k < {pairs}}} {{incr k}} {{",
        f"\t{pm} set-client $cnode([expr {{$k % {topo['clients']}}}])",
        f"\t{pm} set-server $snode([expr {{$k % {topo['servers']}}}])",
        "}",
        f"{pm} set-rate {_num(w['rate_per_s'])}",
    )
    if w["http_1_1"]:
        s.add(f"{pm} set-http-1.1")
    if not w["server_delay"]:
        s.add(f"set pm{i}_no_delay [new RandomVariable/Constant]", f"$pm{i}_no_delay set val_ 0")
        s.add(f"{pm} set-server_delay $pm{i}_no_delay")
    s.add(
        f"{pm} set-outfile packmime{i}_responses.txt ;# end req rsp rt_ms dst.port active",
        f"{pm} set-samples-outfile packmime{i}_requests.txt ;# time req rsp dst.port",
        f"set pm{i}_log [open packmime{i}_connections.txt w]",
        "# flow ids offset from ecnlab's own connections; setup-tcp and done also log each end",
        "PackMimeHTTP instproc setup-tcp {tcp fid} {",
        f"\tglobal ns pm{i}_log",
        f"\tset fid [expr {{$fid + {offset}}}]",
        "\t$tcp set fid_ $fid",
        f'\tputs $pm{i}_log "open [$ns now] $fid [$tcp set agent_addr_] [$tcp set agent_port_]"',
        '\t$tcp proc done {} "$self done $tcp"',
        "}",
        "PackMimeHTTP instproc done {tcp} {",
        f"\tglobal ns pm{i}_log",
        f'\tputs $pm{i}_log "done [$ns now] [$tcp set fid_] [$tcp set agent_addr_] '
        '[ecnlab_counters $tcp]"',
        "\t$self recycle $tcp",
        "}",
        f'$ns at {_num(w["start_s"])} "{pm} start"',
    )
    stop = w.get("stop_s")
    stop = scenario["duration_s"] if stop is None else stop
    s.add(f'$ns at {_num(stop)} "{pm} stop"')
    notes.append(
        "PackMime: ns-2 draws the random effects of its page and object gaps once per run "
        "(ecnlab per connection), and pairs client k with server k"
    )


def _aqm_sampling(s: _Script, scenario: Mapping[str, Any]) -> None:
    b = scenario["topology"]["bottleneck"]
    period = scenario["metrics"]["queue_sample_ms"] / 1000
    down = b["queue"]["aqm"]["kind"]
    up = (b.get("up_queue") or b["queue"])["aqm"]["kind"]
    variables = {
        "red": ("ave_", "cur_max_p_"),
        "ared": ("ave_", "cur_max_p_"),
        "rem": ("prob_",),
        "pi": ("prob_",),
    }
    s.section("AQM control variables, sampled every queue_sample_ms from the warm-up")
    s.add("set ecnlab_aqm [open aqm.txt w] ;# link time variable value")
    if period <= 0 or (down not in variables and up not in variables):
        s.add("proc ecnlab_aqm_close {} { global ecnlab_aqm; close $ecnlab_aqm }")
        return
    s.add("proc ecnlab_aqm_sample {} {", "\tglobal ns ecnlab_aqm R1 R2")
    for name, a, z, kind in (
        ("bottleneck_down", "R2", "R1", down),
        ("bottleneck_up", "R1", "R2", up),
    ):
        for var in variables.get(kind, ()):
            s.add(
                f'\tputs $ecnlab_aqm "{name} [$ns now] {var} '
                f'[[[$ns link ${a} ${z}] queue] set {var}]"'
            )
    s.add(
        f"\t$ns at [expr {{[$ns now] + {_num(period)}}}] ecnlab_aqm_sample",
        "}",
        f"$ns at {_num(scenario['warmup_s'])} ecnlab_aqm_sample",
        "proc ecnlab_aqm_close {} { global ecnlab_aqm; close $ecnlab_aqm }",
    )
