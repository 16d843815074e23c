"""Reading an ns-2 run's outputs into tables shaped like ecnlab's (docs/results.md).

The generated script writes:

* ``bottleneck.tr``: the trace of both bottleneck queues (``$ns trace-queue`` with
  ``Trace set show_tcphdr_ 1``): event (``+`` enqueue, ``-`` dequeue, ``d`` drop, ``r``
  receive), time, from node, to node, packet type, size, flags, flow id, source and
  destination address.port, sequence number, packet id, ack number, TCP flags (hex),
  header length, SACK blocks. Flags: position 0 ``C`` ECN-echo, 3 ``A`` CWR, 4 ``E``
  congestion experienced, 6 ``N`` ECN-capable (``trace/trace.cc``, ``Trace::format``).
* ``counts.txt`` (a count-only script, for timing ns-2, instead of the trace): each bottleneck
  queue's monitor counters (:func:`read_counts`, :func:`bottleneck_data_pkts`).
* ``flows.txt`` and ``exchanges.txt``: one line per connection and per exchange (columns in
  ``ns2lib.tcl``); ``aqm.txt``: the AQM's variables; ``delays.txt``: DelayBox's per-connection
  one-way delays; ``packmime*_*.txt``: PackMime's own logs.

From the trace: the bottleneck's ``links``, ``queue_counts`` and ``queue_samples`` tables,
with every packet classified as ecnlab does (SYN, SYN-ACK, pure ACK, data, retransmitted data,
FIN), and each flow's drops, marks and handshake retransmissions. A retransmission is a data
segment whose bytes were all seen before at the same queue; a drop is ``overflow`` when the
queue was at its limit, ``early`` otherwise (ns-2's trace does not say why), and every mark
is ``early``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._scenario import aqm_variable_kept

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from .translate import Translation

__all__ = ["Ns2OutputError", "bottleneck_data_pkts", "read_counts", "read_tables"]

# ns-2 node ids of the routers: the script creates R1 then R2 first.
_R1, _R2 = 0, 1
_LINKS = {(_R1, _R2): "bottleneck_up", (_R2, _R1): "bottleneck_down"}
_KINDS = ("syn", "synack", "ack", "data", "retx", "fin", "other")
_SYN, _ACK, _FIN = 0x02, 0x10, 0x01

_TRACE_COLUMNS = [
    "ev",
    "t",
    "from_node",
    "to_node",
    "ptype",
    "size",
    "flags",
    "fid",
    "src",
    "dst",
    "seq",
    "uid",
    "ackno",
    "tcpflags",
    "hlen",
    "sacks",
]
_FLOW_COLUMNS = [
    "cid",
    "workload",
    "kind",
    "client",
    "server",
    "start",
    "end",
    "completed",
    "window",
    "c_sent",
    "c_retx",
    "c_rtos",
    "c_ecn",
    "c_cuts",
    "s_sent",
    "s_retx",
    "s_rtos",
    "s_ecn",
    "s_cuts",
    "c_delivered",
    "s_delivered",
    "c_goodput",
    "s_goodput",
    "exchanges",
]
_EXCHANGE_COLUMNS = [
    "cid",
    "workload",
    "seq",
    "client",
    "server",
    "start",
    "end",
    "request",
    "response",
]


class Ns2OutputError(RuntimeError):
    """ns-2 wrote something the reader cannot make sense of."""


def _read_space_separated(path: Path, names: list[str]) -> pd.DataFrame:
    import pandas as pd

    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame({n: pd.Series(dtype=object) for n in names})
    try:
        frame = pd.read_csv(
            path,
            sep=r"\s+",
            header=None,
            names=names,
            engine="c",
            na_values=["NaN"],
            keep_default_na=False,
        )
    except (ValueError, pd.errors.ParserError) as e:
        raise Ns2OutputError(f"{path}: {e}") from None
    return frame


def read_trace(path: Path) -> pd.DataFrame:
    """The bottleneck trace, without receive events, with numeric columns."""
    import pandas as pd

    if not path.exists():
        raise Ns2OutputError(f"{path}: missing (the script writes it)")
    try:
        frame = pd.read_csv(
            path,
            sep=" ",
            header=None,
            names=_TRACE_COLUMNS,
            usecols=[c for c in _TRACE_COLUMNS if c not in ("src", "dst", "sacks")],
            dtype={
                "ev": "category",
                "ptype": "category",
                "flags": "category",
                "tcpflags": "category",
            },
            engine="c",
        )
    except (ValueError, pd.errors.ParserError) as e:
        raise Ns2OutputError(f"{path}: not an ns-2 trace with TCP headers: {e}") from None
    frame = frame[frame["ev"] != "r"].reset_index(drop=True)
    frame["tcpflags"] = frame["tcpflags"].map(lambda x: int(x, 16)).astype("int64")
    return frame


def _classify(trace: pd.DataFrame) -> pd.DataFrame:
    """Adds ``link``, ``kind`` (an index into _KINDS), ``payload``, ``ce`` to the trace."""
    import numpy as np

    trace["link"] = [_LINKS.get(key, "") for key in zip(trace["from_node"], trace["to_node"])]
    if (trace["link"] == "").any():
        raise Ns2OutputError("the trace holds a link other than the bottleneck's")
    payload = (trace["size"] - trace["hlen"]).to_numpy()
    tf = trace["tcpflags"].to_numpy()
    syn = (tf & _SYN) != 0
    ack = (tf & _ACK) != 0
    fin = (tf & _FIN) != 0
    kind = np.full(len(trace), _KINDS.index("ack"))
    kind[fin & (payload <= 0)] = _KINDS.index("fin")
    kind[payload > 0] = _KINDS.index("data")
    kind[syn & ~ack] = _KINDS.index("syn")
    kind[syn & ack] = _KINDS.index("synack")
    trace["payload"] = payload
    # Retransmissions: among the arrivals of data at each queue, per flow and direction, a
    # segment whose last byte is not beyond the highest byte seen before.
    arrivals = trace[(trace["ev"] == "+") & (payload > 0)]
    end = arrivals["seq"] + arrivals["payload"]
    seen = end.groupby([arrivals["fid"], arrivals["link"]]).cummax()
    before = seen.groupby([arrivals["fid"], arrivals["link"]]).shift(1)
    retx_uids = set(arrivals.loc[(end <= before).fillna(False).to_numpy(), "uid"])
    is_retx = trace["uid"].isin(retx_uids).to_numpy() & (payload > 0)
    kind[is_retx] = _KINDS.index("retx")
    trace["kind"] = kind
    trace["ce"] = trace["flags"].astype(str).str.get(4) == "E"
    return trace


def _limits(scenario: Mapping[str, Any]) -> dict[str, float]:
    b = scenario["topology"]["bottleneck"]
    down = b["queue"]
    up = b.get("up_queue") or down
    out = {}
    for name, q in (("bottleneck_down", down), ("bottleneck_up", up)):
        out[name] = q.get("limit_pkts") if q.get("limit_pkts") is not None else math.inf
    return out


def _queue_steps(events: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Times and queue lengths (packets waiting) after each event of one link."""
    import numpy as np

    step = np.where(events["ev"].to_numpy() == "+", 1, -1)
    return events["t"].to_numpy(), np.cumsum(step)


def _time_average(t: np.ndarray, q: np.ndarray, a: float, b: float) -> float:
    """Mean of the step function (value q[i] from t[i] on, 0 before t[0]) over [a, b)."""
    import numpy as np

    if b <= a:
        return math.nan
    edges = np.concatenate(([a], np.clip(t, a, b), [b]))
    values = np.concatenate(([0.0], q.astype(float)))
    # value before the first event inside [a, b): the last value at or before a
    before = np.searchsorted(t, a, side="right")
    values[0] = q[before - 1] if before > 0 else 0.0
    widths = np.diff(edges)
    return float((widths * values).sum() / (b - a))


def _links_and_counts(
    trace: pd.DataFrame, scenario: Mapping[str, Any], rates: Mapping[str, float]
) -> tuple[pa.Table, pa.Table, pa.Table]:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    warmup, duration = scenario["warmup_s"], scenario["duration_s"]
    interval = scenario["metrics"]["interval_s"]
    sample = scenario["metrics"]["queue_sample_ms"] / 1000
    limits = _limits(scenario)
    link_rows: list[dict[str, Any]] = []
    count_rows: list[dict[str, Any]] = []
    samples: list[pd.DataFrame] = []
    starts = np.arange(warmup, duration - 1e-12, interval)
    for link in ("bottleneck_up", "bottleneck_down"):
        ev = trace[trace["link"] == link]
        t, q = _queue_steps(ev)
        # overflow: the drop of an arrival that found the queue at its limit
        q_before = np.concatenate(([0], q[:-1]))
        drops = ev["ev"].to_numpy() == "d"
        overflow = drops & (q_before - 1 >= limits[link])
        deq = ev[ev["ev"] == "-"]
        tx_start = deq["t"].to_numpy()
        tx_end = tx_start + deq["size"].to_numpy() * 8.0 / rates[link]
        for a in starts:
            z = min(a + interval, duration)
            inside = (ev["t"] >= a) & (ev["t"] < z)
            e = ev[inside]
            arrivals = e[e["ev"] == "+"]
            dropped = e[e["ev"] == "d"]
            departed = e[e["ev"] == "-"]
            marked = departed[departed["ce"]]
            busy = np.clip(np.minimum(tx_end, z) - np.maximum(tx_start, a), 0, None).sum()
            row: dict[str, Any] = {
                "link": link,
                "t_start_s": float(a),
                "t_end_s": float(z),
                "arrivals_pkts": len(arrivals),
                "delivered_pkts": int(((tx_end > a) & (tx_end <= z)).sum()),
                "delivered_bytes": int(deq["size"].to_numpy()[(tx_end > a) & (tx_end <= z)].sum()),
                "utilization": float(busy / (z - a)),
                "drops": len(dropped),
                "marks": len(marked),
                "drops_early": int((~overflow[inside.to_numpy()] & drops[inside.to_numpy()]).sum()),
                "drops_forced": 0,
                "drops_overflow": int(overflow[inside.to_numpy()].sum()),
                "marks_early": len(marked),
                "marks_forced": 0,
            }
            for k, name in enumerate(_KINDS):
                row[f"drops_{name}"] = int((dropped["kind"] == k).sum())
            for k, name in enumerate(_KINDS):
                row[f"marks_{name}"] = int((marked["kind"] == k).sum())
            row["random_losses"] = 0
            row["mean_queue_pkts"] = _time_average(t, q, a, z)
            row["mean_queue_bytes"] = math.nan
            link_rows.append(row)
        window = (ev["t"] >= warmup) & (ev["t"] < duration)
        w = ev[window]
        wover = overflow[window.to_numpy()]
        for k, name in enumerate(_KINDS):
            of_kind = w["kind"].to_numpy() == k
            n_arr = int(((w["ev"] == "+").to_numpy() & of_kind).sum())
            n_drop = int(((w["ev"] == "d").to_numpy() & of_kind).sum())
            n_over = int(((w["ev"] == "d").to_numpy() & of_kind & wover).sum())
            n_mark = int(((w["ev"] == "-").to_numpy() & w["ce"].to_numpy() & of_kind).sum())
            for outcome, reason, n in (
                ("enqueued", "none", n_arr - n_drop - n_mark),
                ("marked", "early", n_mark),
                ("dropped", "early", n_drop - n_over),
                ("dropped", "overflow", n_over),
            ):
                if n:
                    count_rows.append(
                        {
                            "link": link,
                            "kind": name,
                            "outcome": outcome,
                            "reason": reason,
                            "packets": n,
                        }
                    )
        if sample > 0:
            ts = np.arange(warmup, duration + 1e-12, sample)
            idx = np.searchsorted(t, ts, side="right") - 1
            qs = np.where(idx >= 0, q[np.maximum(idx, 0)], 0)
            samples.append(
                pd.DataFrame({"link": link, "t_s": ts, "queue_pkts": qs, "queue_bytes": math.nan})
            )
    links = pa.Table.from_pylist(link_rows)
    counts = pa.Table.from_pylist(
        count_rows,
        schema=pa.schema(
            [
                ("link", pa.string()),
                ("kind", pa.string()),
                ("outcome", pa.string()),
                ("reason", pa.string()),
                ("packets", pa.int64()),
            ]
        ),
    )
    qs = (
        pa.Table.from_pandas(pd.concat(samples, ignore_index=True), preserve_index=False)
        if samples
        else pa.table(
            {
                "link": pa.array([], pa.string()),
                "t_s": pa.array([], pa.float64()),
                "queue_pkts": pa.array([], pa.int64()),
                "queue_bytes": pa.array([], pa.float64()),
            }
        )
    )
    return links, counts, qs


def _per_flow_trace(trace: pd.DataFrame) -> pd.DataFrame:
    """Each flow's drops, marks, handshake packets and handshake wait, from the trace."""
    import pandas as pd

    arr = trace[trace["ev"] == "+"]
    drops = trace[trace["ev"] == "d"]
    deq = trace[trace["ev"] == "-"]
    syn = _KINDS.index("syn")
    synack = _KINDS.index("synack")
    out = pd.DataFrame(index=pd.Index(sorted(set(trace["fid"])), name="fid"))
    out["drops"] = drops.groupby("fid").size()
    out["marks"] = deq[deq["ce"]].groupby("fid").size()
    out["ce_received"] = deq[deq["ce"] & (deq["payload"] > 0)].groupby("fid").size()
    out["syn_sent"] = arr[arr["kind"] == syn].groupby("fid").size()
    out["synack_sent"] = arr[arr["kind"] == synack].groupby("fid").size()
    out["synack_drops"] = drops[drops["kind"] == synack].groupby("fid").size()
    out["synack_ce"] = deq[(deq["kind"] == synack) & deq["ce"]].groupby("fid").size()
    retx = arr[arr["kind"] == _KINDS.index("retx")]
    out["retx_bytes"] = retx.groupby("fid")["payload"].sum()
    syn_t = arr[arr["kind"] == syn].groupby("fid")["t"]
    sa_t = arr[arr["kind"] == synack].groupby("fid")["t"]
    out["syn_wait"] = syn_t.max() - syn_t.min()
    out["synack_wait"] = sa_t.max() - sa_t.min()
    return out.fillna(0)


def _sum_or_none(a: Any, b: Any) -> int | None:
    """Bytes counted by both ends' applications; None where ns-2 does not report them
    (PackMime's own applications)."""
    if math.isnan(float(a)) or math.isnan(float(b)):
        return None
    return int(a) + int(b)


def _delays(path: Path) -> dict[int, float]:
    """DelayBox's per-connection one-way delays (ms), by flow id."""
    out: dict[int, float] = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 4:
            out.setdefault(int(parts[2]), float(parts[3]))
    return out


def read_tables(
    folder: Path,
    scenario: Mapping[str, Any],
    translation: Translation,
    bulk_rtt_ms: Mapping[int, float],
) -> dict[str, pa.Table]:
    """Build ecnlab-shaped tables (``flows``, ``exchanges``, ``links``, ``queue_counts``,
    ``queue_samples``, ``aqm_samples``) from the outputs the script wrote in ``folder``.

    Args:
        bulk_rtt_ms: the RTT of each bulk flow, by ns-2 flow id.

    Raises:
        Ns2OutputError: an output is missing or malformed.
    """
    import pandas as pd
    import pyarrow as pa

    from .translate import tcp_params

    b = scenario["topology"]["bottleneck"]
    rates = {"bottleneck_down": b["rate_bps"], "bottleneck_up": b["rate_bps"]}
    trace = _classify(read_trace(folder / "bottleneck.tr"))
    links, counts, qsamples = _links_and_counts(trace, scenario, rates)
    per_flow = _per_flow_trace(trace)
    delays = _delays(folder / "delays.txt")
    path_rtt = translation.path_rtt_ms

    def rtt_of(fid: int) -> float:
        if fid in bulk_rtt_ms:
            return bulk_rtt_ms[fid]
        if fid in delays:
            return path_rtt + 2 * delays[fid]
        return path_rtt

    flows = _read_space_separated(folder / "flows.txt", _FLOW_COLUMNS)
    flows = pd.concat([flows, _packmime_flows(folder, scenario, translation)], ignore_index=True)
    exchanges = _read_space_separated(folder / "exchanges.txt", _EXCHANGE_COLUMNS)
    exchanges = pd.concat(
        [exchanges, _packmime_exchanges(folder, scenario, translation)], ignore_index=True
    )

    def flow_value(fid: int, column: str) -> float:
        return float(per_flow[column].get(fid, 0)) if len(per_flow) else 0.0

    flow_rows = []
    for f in flows.itertuples(index=False):
        fid = int(f.cid)
        w = int(f.workload)
        cp = tcp_params(scenario, w, "clients")
        sp = tcp_params(scenario, w, "servers")
        syn_retx = max(0, int(flow_value(fid, "syn_sent")) - 1)
        synack_retx = max(0, int(flow_value(fid, "synack_sent")) - 1)
        if f.kind == "bulk":
            # the bulk sender opened the connection: its SYNs are the handshake's first leg
            syn_retx, synack_retx = 0, 0
        rtos = int(f.c_rtos) + int(f.s_rtos)
        ecn_red = int(f.c_ecn) + int(f.s_ecn)
        flow_rows.append(
            {
                "flow": fid - 1 if f.kind == "bulk" else fid,
                "workload": w,
                "kind": str(f.kind),
                "client": int(f.client),
                "server": int(f.server),
                "start_s": float(f.start),
                "end_s": float(f.end),
                "completed": bool(int(f.completed)),
                "rtt_ms": rtt_of(fid),
                "rwnd_bytes": int(f.window) * int(sp["mss_bytes"]),
                "ecn": bool(cp["ecn"] and sp["ecn"]),
                "bytes_sent": int(f.c_sent) + int(f.s_sent),
                # FullTcp's nrexmitbytes_ also counts new data sent during fast recovery
                # (every segment sent with reason DUPACK): count what the queue saw again
                "retx_bytes": int(flow_value(fid, "retx_bytes")),
                "goodput_bytes": _sum_or_none(f.c_goodput, f.s_goodput),
                "throughput_bytes": None,
                "retx_received_bytes": None,
                "delivered_bytes": _sum_or_none(f.c_delivered, f.s_delivered),
                "drops": int(flow_value(fid, "drops")),
                "marks": int(flow_value(fid, "marks")),
                # FullTcp counts every timer expiry in nrexmit_, the handshake's too
                "rtos": max(0, rtos - syn_retx - synack_retx),
                "syn_retx": syn_retx,
                "synack_retx": synack_retx,
                "synack_drops": int(flow_value(fid, "synack_drops")),
                "ce_received": int(flow_value(fid, "ce_received")),
                "ecn_reductions": ecn_red,
                # not measured: ncwndcuts_ counts every slowdown, idle restarts too
                "loss_reductions": None,
                "exchanges": int(f.exchanges),
            }
        )
    flows_schema, exchanges_schema = _schema()
    flows_t = pa.Table.from_pylist(flow_rows, schema=flows_schema)

    warmup, duration = scenario["warmup_s"], scenario["duration_s"]
    ex_rows = []
    exchanges = exchanges.sort_values(["start", "cid", "seq"], kind="stable")
    for k, e in enumerate(exchanges.itertuples(index=False)):
        start = float(e.start)
        if not (warmup <= start < duration):
            continue
        fid = int(e.cid)
        end = float(e.end)
        done = not math.isnan(end)
        w = int(e.workload)
        first = int(e.seq) == 0
        ex_rows.append(
            {
                "exchange": k,
                "flow": fid,
                "workload": w,
                "seq_in_flow": int(e.seq),
                "client": int(e.client),
                "server": int(e.server),
                "start_s": start,
                "end_s": end,
                "response_time_s": end - start if done else math.nan,
                "elapsed_s": end - start if done else duration - start,
                "request_bytes": int(e.request),
                "response_bytes": int(e.response),
                "rtt_ms": rtt_of(fid),
                "ecn": bool(
                    tcp_params(scenario, w, "clients")["ecn"]
                    and tcp_params(scenario, w, "servers")["ecn"]
                ),
                "syn_retx": max(0, int(flow_value(fid, "syn_sent")) - 1) if first else 0,
                "synack_retx": max(0, int(flow_value(fid, "synack_sent")) - 1) if first else 0,
                "synack_drops": int(flow_value(fid, "synack_drops")) if first else 0,
                "synack_ce": bool(flow_value(fid, "synack_ce")) if first else False,
                "handshake_wait_s": max(flow_value(fid, "syn_wait"), flow_value(fid, "synack_wait"))
                if first
                else 0.0,
                "rtos": None,
                "completed": done,
            }
        )
    exchanges_t = pa.Table.from_pylist(ex_rows, schema=exchanges_schema)
    return {
        "exchanges": exchanges_t,
        "flows": flows_t,
        "links": links,
        "queue_counts": counts,
        "queue_samples": qsamples,
        "aqm_samples": _aqm_samples(folder / "aqm.txt", scenario),
    }


def _aqm_samples(path: Path, scenario: Mapping[str, Any]) -> pa.Table:
    import pyarrow as pa

    names = {"ave_": "avg", "cur_max_p_": "max_p", "prob_": "p"}
    b = scenario["topology"]["bottleneck"]
    rows = []
    if path.exists():
        for line in path.read_text().splitlines():
            link, t, var, v = line.split()
            kind = b["queue"] if link == "bottleneck_down" else (b.get("up_queue") or b["queue"])
            name = names[var]
            if kind["aqm"]["kind"] == "rem" and var == "prob_":
                name = "prob"
            if aqm_variable_kept(scenario, name):
                rows.append({"link": link, "t_s": float(t), "variable": name, "value": float(v)})
    return pa.Table.from_pylist(
        rows,
        schema=pa.schema(
            [
                ("link", pa.string()),
                ("t_s", pa.float64()),
                ("variable", pa.string()),
                ("value", pa.float64()),
            ]
        ),
    )


def _packmime_flows(
    folder: Path, scenario: Mapping[str, Any], translation: Translation
) -> pd.DataFrame:
    """PackMime connections from the setup-tcp/done log: one row per connection."""
    import pandas as pd

    rows = []
    for i, w in enumerate(scenario["workloads"]):
        if w["kind"] != "packmime_http":
            continue
        log = folder / f"packmime{i}_connections.txt"
        if not log.exists():
            raise Ns2OutputError(f"{log}: missing (the script writes it)")
        conns: dict[int, dict[str, Any]] = {}
        for line in log.read_text().splitlines():
            parts = line.split()
            fid = int(parts[2])
            c = conns.setdefault(fid, {"ends": [], "done": [], "start": float(parts[1])})
            if parts[0] == "open":
                c["ends"].append(int(parts[3]))
            else:
                c["done"].append((float(parts[1]), [int(x) for x in parts[4:9]]))
        nodes = _node_index(scenario)
        for fid, c in conns.items():
            if len(c["ends"]) != 2:
                continue
            server_node, client_node = c["ends"]
            counters = [0] * 10
            for k, (_, cnt) in enumerate(c["done"][:2]):
                counters[5 * k : 5 * k + 5] = cnt
            completed = len(c["done"]) >= 2
            rows.append(
                {
                    "cid": fid,
                    "workload": i,
                    "kind": "exchanges",
                    "client": nodes.get(client_node, -1),
                    "server": nodes.get(server_node, -1),
                    "start": c["start"],
                    "end": max(t for t, _ in c["done"]) if completed else math.nan,
                    "completed": int(completed),
                    "window": max(1, int(w["rwnd_bytes"]["value"]) // scenario["tcp"]["mss_bytes"]),
                    "c_sent": counters[0],
                    "c_retx": counters[1],
                    "c_rtos": counters[2],
                    "c_ecn": counters[3],
                    "c_cuts": counters[4],
                    "s_sent": counters[5],
                    "s_retx": counters[6],
                    "s_rtos": counters[7],
                    "s_ecn": counters[8],
                    "s_cuts": counters[9],
                    "c_delivered": math.nan,
                    "s_delivered": math.nan,
                    "c_goodput": math.nan,
                    "s_goodput": math.nan,
                    "exchanges": 0,
                }
            )
    return pd.DataFrame(rows, columns=_FLOW_COLUMNS)


def _node_index(scenario: Mapping[str, Any]) -> dict[int, int]:
    """ns-2 node id -> ecnlab host index: R1, R2, then clients, then servers (the script's
    order)."""
    topo = scenario["topology"]
    out = {2 + k: k for k in range(topo["clients"])}
    out.update({2 + topo["clients"] + k: k for k in range(topo["servers"])})
    return out


def _packmime_exchanges(
    folder: Path, scenario: Mapping[str, Any], translation: Translation
) -> pd.DataFrame:
    """PackMime's exchanges: every request from the samples log, its completion (if any) from
    the responses log, matched by server address and time."""
    import pandas as pd

    rows = []
    for i, w in enumerate(scenario["workloads"]):
        if w["kind"] != "packmime_http":
            continue
        reqs = folder / f"packmime{i}_requests.txt"
        resps = folder / f"packmime{i}_responses.txt"
        log = folder / f"packmime{i}_connections.txt"
        # server agents by address: (time opened, fid), to name each request's connection
        opened: dict[str, list[tuple[float, int]]] = {}
        order: dict[int, int] = {}
        for line in log.read_text().splitlines():
            parts = line.split()
            if parts[0] == "open":
                fid = int(parts[2])
                order[fid] = order.get(fid, 0) + 1
                if order[fid] == 1:  # PackMime sets the server up first
                    opened.setdefault(f"{parts[3]}.{parts[4]}", []).append((float(parts[1]), fid))
        done: dict[tuple[str, float], float] = {}
        if resps.exists():
            for line in resps.read_text().splitlines():
                parts = line.split()
                if len(parts) < 5:
                    continue
                end, rt_ms, dst = float(parts[0]), float(parts[3]), parts[4]
                done[(dst, round(end - rt_ms / 1000, 4))] = end
        seq_of: dict[int, int] = {}
        nodes = _node_index(scenario)
        if reqs.exists():
            for line in reqs.read_text().splitlines():
                parts = line.split()
                t, req, resp, dst = float(parts[0]), int(parts[1]), int(parts[2]), parts[3]
                fid = _connection_at(opened.get(dst, []), t)
                seq = seq_of.get(fid, 0)
                seq_of[fid] = seq + 1
                end = done.get((dst, round(t, 4)), math.nan)
                server = nodes.get(int(dst.split(".")[0]), -1)
                rows.append(
                    {
                        "cid": fid,
                        "workload": i,
                        "seq": seq,
                        "client": -1,
                        "server": server,
                        "start": t,
                        "end": end,
                        "request": req,
                        "response": resp,
                    }
                )
    return pd.DataFrame(rows, columns=_EXCHANGE_COLUMNS)


def _connection_at(opened: list[tuple[float, int]], t: float) -> int:
    """The flow id of the last connection opened at or before ``t`` on a server port."""
    best = -1
    for when, fid in opened:
        if when <= t + 1e-9:
            best = fid
    return best


def _schema() -> tuple[pa.Schema, pa.Schema]:
    import pyarrow as pa

    flows = pa.schema(
        [
            ("flow", pa.int64()),
            ("workload", pa.int64()),
            ("kind", pa.string()),
            ("client", pa.int64()),
            ("server", pa.int64()),
            ("start_s", pa.float64()),
            ("end_s", pa.float64()),
            ("completed", pa.bool_()),
            ("rtt_ms", pa.float64()),
            ("rwnd_bytes", pa.int64()),
            ("ecn", pa.bool_()),
            ("bytes_sent", pa.int64()),
            ("retx_bytes", pa.int64()),
            ("goodput_bytes", pa.int64()),
            ("throughput_bytes", pa.int64()),
            ("retx_received_bytes", pa.int64()),
            ("delivered_bytes", pa.int64()),
            ("drops", pa.int64()),
            ("marks", pa.int64()),
            ("rtos", pa.int64()),
            ("syn_retx", pa.int64()),
            ("synack_retx", pa.int64()),
            ("synack_drops", pa.int64()),
            ("ce_received", pa.int64()),
            ("ecn_reductions", pa.int64()),
            ("loss_reductions", pa.int64()),
            ("exchanges", pa.int64()),
        ]
    )
    exchanges = pa.schema(
        [
            ("exchange", pa.int64()),
            ("flow", pa.int64()),
            ("workload", pa.int64()),
            ("seq_in_flow", pa.int64()),
            ("client", pa.int64()),
            ("server", pa.int64()),
            ("start_s", pa.float64()),
            ("end_s", pa.float64()),
            ("response_time_s", pa.float64()),
            ("elapsed_s", pa.float64()),
            ("request_bytes", pa.int64()),
            ("response_bytes", pa.int64()),
            ("rtt_ms", pa.float64()),
            ("ecn", pa.bool_()),
            ("syn_retx", pa.int64()),
            ("synack_retx", pa.int64()),
            ("synack_drops", pa.int64()),
            ("synack_ce", pa.bool_()),
            ("handshake_wait_s", pa.float64()),
            ("rtos", pa.int64()),
            ("completed", pa.bool_()),
        ]
    )
    return flows, exchanges


def read_counts(folder: Path) -> dict[str, dict[str, int]]:
    """The queue monitor counters a count-only script wrote: link name (``bottleneck_up``,
    ``bottleneck_down``) -> counter (``parrivals``, ``pdepartures``, ``pdrops``,
    ``barrivals``, ``bdepartures``, ``bdrops``) -> value.

    Raises:
        Ns2OutputError: the file is missing or malformed.
    """
    from .translate import COUNTERS, COUNTS_FILE

    path = Path(folder) / COUNTS_FILE
    try:
        lines = path.read_text().split("\n")
    except OSError as e:
        raise Ns2OutputError(f"{path}: cannot be read ({e})") from None
    out: dict[str, dict[str, int]] = {}
    for line in filter(None, (x.strip() for x in lines)):
        name, *values = line.split()
        if len(values) != len(COUNTERS):
            raise Ns2OutputError(f"{path}: expected {len(COUNTERS)} counters: {line!r}")
        try:
            out[name] = {c.rstrip("_"): int(float(v)) for c, v in zip(COUNTERS, values)}
        except ValueError:
            raise Ns2OutputError(f"{path}: not a number in {line!r}") from None
    if set(out) != {"bottleneck_up", "bottleneck_down"}:
        raise Ns2OutputError(f"{path}: expected both bottleneck links, got {sorted(out)}")
    return out


def bottleneck_data_pkts(
    counts: Mapping[str, Mapping[str, int]], scenario: Mapping[str, Any]
) -> int:
    """Data packets that left the bottleneck queues into their links (both directions): the
    quantity of ecnlab's ``bottleneck_data_pkts``, which counts them once serialized (so it
    differs by at most the one packet per link in serialization at the end).

    A queue monitor counts packets and bytes, not kinds; in a scenario of unlimited bulk flows
    every packet is ``header_bytes`` of headers plus either no payload (SYN, SYN-ACK, ACK) or a
    full ``mss_bytes`` segment, so the data packets of a link are ``(bytes - header x
    packets) / mss``.

    Raises:
        ValueError: the workloads are not all unlimited bulk flows with one MSS and header
            size, or the bytes do not divide into whole segments (the assumption failed).
    """
    from .translate import tcp_params

    sizes = set()
    for i, w in enumerate(scenario["workloads"]):
        if w["kind"] != "bulk" or w.get("bytes") is not None:
            raise ValueError(
                f"workloads.{i}: data packets are counted for unlimited bulk flows only"
            )
        for side in ("clients", "servers"):
            p = tcp_params(scenario, i, side)
            sizes.add((int(p["mss_bytes"]), int(p["header_bytes"])))
    if len(sizes) != 1:
        raise ValueError(
            f"data packets are counted for one MSS and header size, not {sorted(sizes)}"
        )
    ((mss, header),) = sizes
    total = 0
    for name, c in sorted(counts.items()):
        payload = c["bdepartures"] - header * c["pdepartures"]
        data, rest = divmod(payload, mss)
        if rest or data < 0 or data > c["pdepartures"]:
            raise ValueError(
                f"{name}: {c['bdepartures']} bytes in {c['pdepartures']} packets are not "
                f"{header}-byte headers plus whole {mss}-byte segments"
            )
        total += data
    return total
