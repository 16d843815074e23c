"""Tiny TCP tools run inside the testbed's namespaces (tests/test_testbed.py).

    testbed_bulk.py recv PORT            accept one connection, read to EOF; print "ready" when
                                         listening, then {"points": [[t_s, bytes], ...]} every 50 ms
    testbed_bulk.py send HOST PORT SECS  send as fast as TCP lets for SECS seconds
    testbed_bulk.py accept PORT          accept and close connections until killed
    testbed_bulk.py connect HOST PORT N  print the durations (s) of N connect() calls as JSON
"""

import json
import socket
import sys
import time


def listen(port: int, backlog: int) -> socket.socket:
    """A listening socket on ``port``; says "ready" on stdout."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(backlog)
    print("ready", flush=True)
    return srv


def recv(port: int) -> None:
    conn, _ = listen(port, 1).accept()
    total, points, next_t = 0, [], 0.0
    t0 = time.monotonic()
    buf = bytearray(1 << 16)
    while True:
        n = conn.recv_into(buf)
        if n == 0:
            break
        total += n
        t = time.monotonic() - t0
        if t >= next_t:
            points.append([t, total])
            next_t = t + 0.05
    points.append([time.monotonic() - t0, total])
    print(json.dumps({"points": points}), flush=True)


def send(host: str, port: int, seconds: float) -> None:
    s = socket.create_connection((host, port))
    chunk = b"x" * (1 << 16)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s.sendall(chunk)
    s.close()


def accept(port: int) -> None:
    srv = listen(port, 16)
    while True:
        conn, _ = srv.accept()
        conn.close()


def connect(host: str, port: int, n: int) -> None:
    out = []
    for _ in range(n):
        t = time.monotonic()
        s = socket.create_connection((host, port))
        out.append(time.monotonic() - t)
        s.close()
        time.sleep(0.05)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "recv":
        recv(int(args[0]))
    elif cmd == "send":
        send(args[0], int(args[1]), float(args[2]))
    elif cmd == "accept":
        accept(int(args[0]))
    elif cmd == "connect":
        connect(args[0], int(args[1]), int(args[2]))
    else:
        sys.exit(f"unknown command {cmd}")
