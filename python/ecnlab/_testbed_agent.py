"""The workload agents ``ecnlab testbed run`` starts in the hosts' namespaces (stdlib only).

    python _testbed_agent.py server PORT OUT   serve bulk flows and request/response exchanges
                                               until SIGTERM; OUT: one JSON line per connection
    python _testbed_agent.py client PLAN OUT   open the plan's connections at their times, run
                                               until the plan's end; OUT: one JSON document
    python _testbed_agent.py web PORT DB OUT   the TPC-W web tier on the database DB (an
                                               SQLite file or mariadb://HOST:PORT/NAME) until
                                               SIGTERM (``_testbed_web.py``); OUT as server's,
                                               its per-request statistics in OUT.stats.json
    python _testbed_agent.py populate URL SEED fill the MariaDB bookstore URL from SEED once
                                               its server is up; prints its version and rows

The client says "ready", reads the run's time 0 on stdin, runs, writes OUT at the end and says
"done", and closes its connections and exits at the next line on stdin (the servers record
their ends of the open connections in between, on SIGTERM).

Every connection begins with a preamble from the client: ``B`` (bulk), the direction (``d`` or
``u``), the flow id, the bytes to send (0: until the end) and the receiver window; or ``X``
(exchanges), the flow id and the receiver window. A request is a 16-byte header (response size,
server delay in microseconds, the request's total size) padded to its size; the server answers
with that many bytes after that delay. Times are seconds since the plan's ``t0`` on
CLOCK_MONOTONIC, which every namespace shares, so the router's samples line up with them.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import sys
import time
from typing import TextIO

import _testbed_web as web  # this folder's (the agent runs as a script)

PREAMBLE_BULK = struct.Struct("!ccQQI")  # b"B", b"d"/b"u", flow, bytes, rwnd
PREAMBLE_EXCHANGES = struct.Struct("!cQI")  # b"X", flow, rwnd
REQUEST = struct.Struct("!QII")  # response bytes, server delay (us), request bytes
CHUNK = 1 << 16
FILLER = b"x" * CHUNK
TCP_INFO_BYTES = 512
TCPI_OPT_ECN = 8


def tcp_info(sock: socket.socket) -> dict:
    """The fields of Linux's ``struct tcp_info`` the tables use (missing ones: None)."""
    try:
        raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_BYTES)
    except OSError:
        return {}

    def u(fmt: str, offset: int) -> int | None:
        size = struct.calcsize(fmt)
        return struct.unpack_from(fmt, raw, offset)[0] if len(raw) >= offset + size else None

    return {
        "ecn": bool(raw[5] & TCPI_OPT_ECN) if len(raw) > 5 else None,
        "total_retrans": u("I", 100),
        "bytes_acked": u("Q", 120),
        "bytes_received": u("Q", 128),
        "bytes_sent": u("Q", 200),
        "bytes_retrans": u("Q", 208),
        "total_rto": u("H", 240),
        "received_ce": u("I", 248),
    }


def clamp(sock: socket.socket, rwnd: int) -> None:
    """The receiver window: TCP_WINDOW_CLAMP bounds what this end advertises. Nagle's
    algorithm is off, as in ecnlab's TCP: TCP_NODELAY here (asyncio sets it only on sockets
    whose ``proto`` is IPPROTO_TCP, which the client's ``socket.socket()`` is not, and
    Nagle's wait for the ACK of the preamble, which the server delays, added 25 to 90 ms to
    every connection's first exchange) and on the servers' sockets by asyncio."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if rwnd > 0:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_WINDOW_CLAMP, int(rwnd))


# --- server ----------------------------------------------------------------------------------


async def serve(port: int, out: TextIO) -> None:
    open_conns: dict[int, tuple[socket.socket, dict]] = {}

    def record(sock: socket.socket, row: dict) -> None:
        row.update({f"server_{k}": v for k, v in tcp_info(sock).items()})
        out.write(json.dumps(row) + "\n")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        info = tcp_info(sock)
        row: dict = {"synack_retx": info.get("total_retrans")}
        flow = -1
        try:
            kind = await reader.readexactly(1)
            if kind == b"B":
                rest = await reader.readexactly(PREAMBLE_BULK.size - 1)
                _, direction, flow, nbytes, rwnd = PREAMBLE_BULK.unpack(kind + rest)
                clamp(sock, rwnd)
                row["flow"] = flow
                open_conns[flow] = (sock, row)
                if direction == b"d":
                    await send(writer, nbytes)
                    writer.write_eof()
                while await reader.read(CHUNK):
                    pass
            elif kind == b"X":
                rest = await reader.readexactly(PREAMBLE_EXCHANGES.size - 1)
                _, flow, rwnd = PREAMBLE_EXCHANGES.unpack(kind + rest)
                clamp(sock, rwnd)
                row["flow"] = flow
                open_conns[flow] = (sock, row)
                while True:
                    try:
                        head = await reader.readexactly(REQUEST.size)
                    except asyncio.IncompleteReadError:
                        break
                    response, delay_us, request = REQUEST.unpack(head)
                    await reader.readexactly(request - REQUEST.size)
                    if delay_us:
                        await asyncio.sleep(delay_us / 1e6)
                    await send(writer, response)
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass
        finally:
            # Recorded once: here at the close, or at SIGTERM while still open.
            if open_conns.pop(flow, None) is not None:
                record(sock, row)
            writer.close()

    await web.serve_until_stopped(handle, port, open_conns, record)


async def send(writer: asyncio.StreamWriter, nbytes: int) -> None:
    """Writes ``nbytes`` (0: until the connection breaks)."""
    left = nbytes if nbytes else None
    while left is None or left > 0:
        n = CHUNK if left is None else min(CHUNK, left)
        writer.write(FILLER[:n])
        await writer.drain()
        if left is not None:
            left -= n


# --- client ----------------------------------------------------------------------------------


class Client:
    def __init__(self, plan: dict) -> None:
        self.plan = plan
        self.t0 = plan["t0"]
        self.flows: dict[int, dict] = {}
        self.exchanges: list[dict] = []
        self.socks: dict[int, socket.socket] = {}
        self.at_warmup: dict[int, dict] = {}
        self.spawned: list[asyncio.Task] = []  # web sessions' objects, cancelled at exit

    def now(self) -> float:
        return time.monotonic() - self.t0

    async def until(self, t: float) -> None:
        delay = t - self.now()
        if delay > 0:
            await asyncio.sleep(delay)

    async def connect(self, c: dict, preamble: bytes):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        clamp(sock, c["rwnd_bytes"])
        row = self.flows[c["flow"]] = {
            "flow": c["flow"],
            "start_s": self.now(),
            "end_s": None,
            "completed": False,
            **c.get("ident", {}),
        }
        await asyncio.get_running_loop().sock_connect(sock, (c["server_addr"], c["port"]))
        info = tcp_info(sock)
        row["syn_retx"] = info.get("total_rto")
        row["connected_s"] = self.now()
        self.socks[c["flow"]] = sock
        reader, writer = await asyncio.open_connection(sock=sock)
        writer.write(preamble)
        return row, reader, writer

    def close(self, flow: int, row: dict, writer: asyncio.StreamWriter | None) -> None:
        sock = self.socks.pop(flow, None)
        if sock is not None:
            row.update(tcp_info(sock))
            row["warmup_info"] = self.at_warmup.get(flow)
        if writer is not None:
            writer.close()

    async def bulk(self, c: dict) -> None:
        await self.until(c["start_s"])
        down = c["direction"] == "down"
        pre = PREAMBLE_BULK.pack(
            b"B", b"d" if down else b"u", c["flow"], c["bytes"] or 0, c["rwnd_bytes"]
        )
        row, writer = None, None
        try:
            row, reader, writer = await self.connect(c, pre)
            if not down:
                await send(writer, c["bytes"] or 0)
            await self._finish(row, reader, None if down else writer)
        except (ConnectionError, OSError) as e:
            if row is not None:
                row["error"] = str(e)
        finally:
            if row is not None:
                self.close(c["flow"], row, writer)

    async def connection(self, c: dict, done: asyncio.Event | None = None) -> None:
        """A connection of request/response exchanges; ``done`` is set when its last response
        has arrived or the connection failed (before the close)."""
        await self.until(c["start_s"])
        row, writer = None, None
        pre = PREAMBLE_EXCHANGES.pack(b"X", c["flow"], c["rwnd_bytes"])
        try:
            start = self.now()
            row, reader, writer = await self.connect(c, pre)
            for seq, (request, response, delay_ms, think_s) in enumerate(c["exchanges"]):
                ex = self._exchange(c["flow"], seq, start, request, response)
                # One write, as the simulator's client sends a request: written as header and
                # filler apart, each small exchange of examples/testbed-red.toml took about
                # 0.12 s longer than simulated (not traced further; docs/testbed.md).
                writer.write(
                    REQUEST.pack(response, round(delay_ms * 1000), request)
                    + FILLER[: request - REQUEST.size]
                )
                await writer.drain()
                await reader.readexactly(response)
                ex["end_s"] = self.now()
                if seq + 1 < len(c["exchanges"]):
                    await asyncio.sleep(think_s)
                    start = self.now()
            if done is not None:
                done.set()
            await self._finish(row, reader, writer)
        except (ConnectionError, OSError, asyncio.IncompleteReadError) as e:
            if row is not None:
                row["error"] = str(e)
        finally:
            if done is not None:
                done.set()
            if row is not None:
                self.close(c["flow"], row, writer)

    async def session(self, s: dict) -> None:
        """One session of a ``web_sessions`` workload, replayed closed loop as the simulator
        runs it (crates/ecnlab/src/workload/web.rs): each object of a page is a connection
        (flow ``s["flow_base"] + k``) opened at its time after the page's start; the page is
        complete when every object's response has arrived (or its connection failed); the next
        page starts ``gap_s`` after that completion, or with ``inter_page_from = "start"``
        ``gap_s`` after the page's start but not before its last request."""
        start, k = s["start_s"], 0
        for n, page in enumerate(s["pages"]):
            if start >= self.plan["duration_s"]:
                return
            await self.until(start)
            events = []
            for o in page["objects"]:
                if start + o["at_s"] >= self.plan["duration_s"]:
                    break  # the simulator opens nothing after the end of the run
                ident = {"workload": s["workload"], "client": s["client"],
                         "server": page["server"], "rtt_ms": o["rtt_ms"],
                         "rwnd_bytes": o["rwnd_bytes"]}
                c = {**o, "flow": s["flow_base"] + k, "start_s": start + o["at_s"],
                     "server_addr": page["server_addr"], "port": page["port"], "ident": ident}
                k += 1
                events.append(asyncio.Event())
                self.spawned.append(asyncio.create_task(self.connection(c, events[-1])))
            for e in events:
                await e.wait()
            if n + 1 == len(s["pages"]):
                break
            if s["inter_page_from"] == "start":
                start = max(start + page["gap_s"], start + page["objects"][-1]["at_s"])
            else:
                start = self.now() + page["gap_s"]

    async def browser(self, b: dict) -> None:
        """One emulated browser of a ``tpcw_browsers`` workload (``_testbed_web.Browser``):
        each session is a connection (flow ``b["flow_base"] + k``) that opens with the Home
        page; a page's images follow its HTML on that connection. A session's first exchange
        starts when the connection is opened (it carries the handshake)."""
        em = web.Browser(b, self.plan["tpcw"][str(b["workload"])])
        ident = {key: b[key] for key in ("workload", "client", "server", "rtt_ms", "rwnd_bytes")}
        await self.until(b["start_s"])
        k = 0
        while self.now() < self.plan["duration_s"]:
            flow = b["flow_base"] + k
            k += 1
            session_min = em.start_session()
            writer, think = None, None
            start = session_start = self.now()
            seq, page = 0, em.page()
            try:
                ex = self._page_exchange(flow, 0, start, page[0])
                row, reader, writer = await self.connect({**b, "flow": flow, "ident": ident}, b"")
                while True:
                    for i, (target, req, resp, delay) in enumerate(page):
                        if i or seq:
                            ex = self._page_exchange(flow, seq, start, page[i])
                        writer.write(web.request(target, req, resp, delay, flow,
                                                 b["rwnd_bytes"]))
                        await writer.drain()
                        ex["response_bytes"] = await web.read_response(reader)
                        ex["end_s"] = start = self.now()
                        seq += 1
                    think, more = em.after_page(self.now() - session_start, session_min)
                    if not more:
                        break
                    await asyncio.sleep(think)
                    start, page = self.now(), em.page()
                await self._finish(row, reader, writer)
            except (ConnectionError, OSError, asyncio.IncompleteReadError,
                    asyncio.LimitOverrunError) as e:
                if flow in self.flows:
                    self.flows[flow]["error"] = str(e)
                think = em.think()  # a failed connection: a new session after a think time
            finally:
                if flow in self.flows:
                    self.close(flow, self.flows[flow], writer)
            await asyncio.sleep(think or 0.0)

    def _exchange(
        self, flow: int, seq: int, start: float, request: int, response: int, **extra: str
    ) -> dict:
        """A row of ``exchanges``, recorded now and completed by the caller (``end_s``)."""
        ex = {"flow": flow, "seq_in_flow": seq, "start_s": start, "end_s": None,
              "request_bytes": request, "response_bytes": response, **extra}
        self.exchanges.append(ex)
        return ex

    def _page_exchange(self, flow: int, seq: int, start: float, req: tuple) -> dict:
        """The exchange of one request of a TPC-W page (``web.Browser.page``), named by page."""
        target, request, response, _ = req
        return self._exchange(
            flow, seq, start, request, response, page=target.split("?")[0].lstrip("/")
        )

    async def _finish(
        self, row: dict, reader: asyncio.StreamReader, writer: asyncio.StreamWriter | None
    ) -> None:
        """The end of a flow: half-close (with ``writer``), read until the peer closes, and
        record the flow completed."""
        if writer is not None:
            writer.write_eof()
        while await reader.read(CHUNK):
            pass
        row["end_s"], row["completed"] = self.now(), True

    async def snapshot_at_warmup(self) -> None:
        await self.until(self.plan["warmup_s"])
        for flow, sock in list(self.socks.items()):
            self.at_warmup[flow] = tcp_info(sock)

    async def run(self, out_path: str) -> None:
        tasks = [asyncio.create_task(self.bulk(c)) for c in self.plan["bulk"]]
        tasks += [asyncio.create_task(self.connection(c)) for c in self.plan["connections"]]
        tasks += [asyncio.create_task(self.browser(b)) for b in self.plan.get("browsers", [])]
        tasks += [asyncio.create_task(self.session(s)) for s in self.plan.get("sessions", [])]
        tasks.append(asyncio.create_task(self.snapshot_at_warmup()))
        await self.until(self.plan["duration_s"])
        # The end of the run: what is still open is recorded as it stands, and left open
        # until told to exit, so the servers can record their ends of it first.
        for flow, sock in list(self.socks.items()):
            row = self.flows[flow]
            row.update(tcp_info(sock))
            row["warmup_info"] = self.at_warmup.get(flow)
        with open(out_path, "w") as f:  # noqa: ASYNC230 (once, at the end of the run)
            json.dump({"flows": list(self.flows.values()), "exchanges": self.exchanges}, f)
        print("done", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        self.socks.clear()
        tasks += self.spawned
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def client(plan_path: str, out_path: str) -> None:
    with open(plan_path) as f:
        plan = json.load(f)
    # Ready; the run's time 0 (CLOCK_MONOTONIC seconds) comes on stdin once every agent is.
    print("ready", flush=True)
    plan["t0"] = float(sys.stdin.readline())
    asyncio.run(Client(plan).run(out_path))


def main(argv: list[str]) -> None:
    cmd, args = argv[0], argv[1:]
    if cmd == "server":
        with open(args[1], "w", buffering=1) as out:
            asyncio.run(serve(int(args[0]), out))
    elif cmd == "client":
        client(args[0], args[1])
    elif cmd == "web":
        with open(args[2], "w", buffering=1) as out:
            asyncio.run(web.serve_web(int(args[0]), args[1], out, args[2] + ".stats.json",
                                      tcp_info, clamp))
    elif cmd == "populate":
        print(json.dumps(web.populate_server(args[0], args[1])), flush=True)
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv[1:])
