"""The emulation testbed's harness: network namespaces joined through ecnlab's router.

As root, :class:`Testbed` builds one namespace per client host (``ecnlab-<pid>-c0``, ...), per
server host (``-s0``, ...) and one for the router (``-r``)::

    c0 eth0 ─┐                                        ┌─ eth0 s0
    c1 eth0 ─┤ bridge brc ── cli  [ecnlab-router]  srv ── bridge brs ├─ eth0 s1
             └──────────── namespace -r ─────────────────────────────┘

Every host has one address in 10.77.0.0/16 (clients 10.77.1.x, servers 10.77.2.x), so the
router forwards frames unchanged between its two interfaces (a transparent, bridge-like
router: no routing table, no MAC rewrite), ARP included. IPv6 is off in every namespace, and
checksum offload, TSO, GSO and GRO are off on every veth (``ecnlab-router offload-off``): the
router moves bytes and can neither finish a checksum left to hardware nor queue a 64 KB
super-packet as one packet. Each host namespace gets its TCP settings from the arguments
(``net.ipv4.tcp_congestion_control``, ``net.ipv4.tcp_ecn``, and any other sysctl). The one
change outside the namespaces: an algorithm a host uses is added to the initial namespace's
``net.ipv4.tcp_allowed_congestion_control`` when missing (the kernel requires it), and the
list restored at teardown. ``bpf_congestion_controls`` (ecnlab's BPF programs, DCTCP and ABE
NewReno: :mod:`ecnlab._testbed_bpf`) are built and registered in the kernel before the hosts
are set up, and released at teardown (unregistered when no other testbed holds them).

Everything is torn down when the ``with`` block ends, normally, on an exception, on Ctrl-C
or on SIGTERM: the router and every process left in the namespaces are killed and the
namespaces deleted (which deletes their interfaces); nothing is created in the root namespace.

The router binary: ``$ECNLAB_ROUTER`` if set; otherwise, in a source checkout (the one this
module lies in, for an editable install, else the current directory), ``cargo build --release
-p ecnlab-testbed`` (a no-op when up to date) and the path cargo reports; otherwise
``ecnlab-router`` on ``PATH``.
See docs/testbed.md.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from . import _testbed_bpf

__all__ = ["Testbed", "TestbedError", "leftover_namespaces", "router_binary"]

_instances = 0
_REPO = Path(__file__).resolve().parents[2]
_ALLOWED = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
DATABASE_ADDRESS = "10.77.2.254"
"""The database host's address (``Testbed(database_host=True)``), beyond the 250 servers'."""


class TestbedError(RuntimeError):
    """A testbed could not be built or run (the message says which step)."""

    __test__ = False  # not a pytest test class


def _run(argv: Sequence[str], check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    if check and r.returncode != 0:
        raise TestbedError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def _checkout() -> Path | None:
    """The source checkout to build the router in: the one this module lies in (an editable
    install), else the current directory if it is one (a wheel installed from it, as CI does)."""
    for root in (_REPO, Path.cwd()):
        if (root / "Cargo.toml").is_file() and (root / "crates" / "ecnlab-testbed").is_dir():
            return root
    return None


def router_binary() -> Path:
    """The ``ecnlab-router`` executable (built with cargo in a source checkout)."""
    env = os.environ.get("ECNLAB_ROUTER")
    if env:
        return Path(env)
    root = _checkout()
    if root is not None:
        cargo = shutil.which("cargo") or str(Path.home() / ".cargo" / "bin" / "cargo")
        r = subprocess.run(
            [cargo, "build", "--release", "-p", "ecnlab-testbed", "--bin", "ecnlab-router",
             "--message-format=json-render-diagnostics"],
            cwd=root, capture_output=True, text=True, check=False,
        )
        if r.returncode != 0:
            raise TestbedError(f"building the router failed:\n{r.stderr[-3000:]}")
        for line in r.stdout.splitlines():
            msg = json.loads(line)
            if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
                    and msg["target"]["name"] == "ecnlab-router":
                return Path(msg["executable"])
        raise TestbedError("cargo built the router but did not report its path")
    found = shutil.which("ecnlab-router")
    if found:
        return Path(found)
    raise TestbedError("no router: set ECNLAB_ROUTER to the ecnlab-router binary "
                       "(cargo build --release -p ecnlab-testbed)")


def leftover_namespaces(prefix: str = "ecnlab-") -> list[str]:
    """Network namespaces whose name starts with ``prefix``."""
    r = _run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in r.stdout.splitlines()
            if line.strip() and line.split()[0].startswith(prefix)]


class Testbed:
    """Clients and servers in their own namespaces, joined through ``ecnlab-router``.

    ``queue`` and ``up_queue`` are the scenario's ``[topology.bottleneck.queue]`` table as a
    dict (``{"limit_pkts": 100, "aqm": {"kind": "red", "ecn": True}}``); ``rate_bps`` and
    ``up_rate_bps`` the rates (bit/s of IPv4 bytes); ``delay_ms`` the one-way delay each way;
    ``pair_delays`` extra one-way delays as ``{(client, server): ms}`` by host index.
    ``congestion_control`` and ``tcp_ecn`` set those sysctls in every host namespace;
    ``sysctls`` adds others (``{"net.ipv4.tcp_rmem": "4096 131072 6291456"}``), and
    ``host_sysctls`` per host (``{"s0": {"net.ipv4.tcp_ecn": 0}}``). The router's output
    (``router.json``, ``router.jsonl``, ``router.stderr``) goes to ``out_dir`` (a temporary
    directory, kept, when not given). ``busy_poll_us`` and ``rt_priority`` are the router's
    ``--busy-poll-us`` and ``--rt-priority`` (docs/testbed.md, timer resolution).
    ``ecn_plus_servers`` (server indices) emulates ECN+: the router makes those servers'
    ECN-setup SYN-ACKs ECT(0), which Linux does not send. ``database_host`` adds host ``db``
    (namespace ``<prefix>db``, :data:`DATABASE_ADDRESS`) on the servers' bridge, for a
    database tier the servers reach without crossing the router. ``bpf_congestion_controls``:
    programs of :mod:`ecnlab._testbed_bpf` (``dctcp_program()``, ``abe_program(0.8)``) to
    register while the testbed is up, so that a host's ``net.ipv4.tcp_congestion_control``
    may name them.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        *,
        clients: int = 1,
        servers: int = 1,
        rate_bps: float = 10e6,
        up_rate_bps: float | None = None,
        delay_ms: float = 0.0,
        queue: Mapping[str, Any] | None = None,
        up_queue: Mapping[str, Any] | None = None,
        pair_delays: Mapping[tuple[int, int], float] | None = None,
        random_loss: float = 0.0,
        seed: int = 1,
        sample_interval_ms: float = 10.0,
        congestion_control: str = "cubic",
        tcp_ecn: int = 1,
        sysctls: Mapping[str, Any] | None = None,
        host_sysctls: Mapping[str, Mapping[str, Any]] | None = None,
        out_dir: os.PathLike | str | None = None,
        busy_poll_us: int = 0,
        rt_priority: int = 0,
        ecn_plus_servers: Iterable[int] = (),
        database_host: bool = False,
        bpf_congestion_controls: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        global _instances
        if clients < 1 or servers < 1 or clients > 250 or servers > 250:
            raise ValueError("clients and servers: must be between 1 and 250")
        n = _instances
        _instances += 1
        self.prefix = f"ecnlab-{os.getpid()}-" if n == 0 else f"ecnlab-{os.getpid()}.{n}-"
        self.clients = [f"c{i}" for i in range(clients)]
        self.servers = [f"s{j}" for j in range(servers)]
        # The database tier's own host on the servers' side (``db``, 10.77.2.254): reached
        # by the servers through their bridge, not through the router.
        self.server_side = self.servers + (["db"] if database_host else [])
        self.out_dir = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="ecnlab-testbed-"))
        self.config: dict[str, Any] = {
            "client_interface": "cli",
            "server_interface": "srv",
            "rate_bps": rate_bps,
            "delay_ms": delay_ms,
            "random_loss": random_loss,
            "seed": seed,
            "sample_interval_ms": sample_interval_ms,
            "queue": dict(queue) if queue is not None else {},
            "pairs": [
                {"a": self.address(f"c{c}"), "b": self.address(f"s{s}"), "delay_ms": ms}
                for (c, s), ms in (pair_delays or {}).items()
            ],
        }
        if ecn_plus_servers:
            self.config["ecn_plus_servers"] = [self.address(f"s{j}") for j in ecn_plus_servers]
        if up_rate_bps is not None:
            self.config["up_rate_bps"] = up_rate_bps
        if up_queue is not None:
            self.config["up_queue"] = dict(up_queue)
        self.sysctls: dict[str, Any] = {
            "net.ipv4.tcp_congestion_control": congestion_control,
            "net.ipv4.tcp_ecn": tcp_ecn,
            **(sysctls or {}),
        }
        self.host_sysctls = {h: dict(v) for h, v in (host_sysctls or {}).items()}
        self.router_flags = ["--busy-poll-us", str(int(busy_poll_us)), "--rt-priority", str(int(rt_priority))]
        self.router: subprocess.Popen | None = None
        self._namespaces: list[str] = []
        self._procs: list[subprocess.Popen] = []
        self._old_sigterm: Any = None
        self._allowed_before: str | None = None
        self.bpf_congestion_controls = [dict(b) for b in bpf_congestion_controls]
        self._bpf_held: list[str] = []

    # -- names -------------------------------------------------------------------------

    def ns(self, host: str) -> str:
        """The namespace of host ``c0``, ``s0``, ... or ``r`` (the router)."""
        return self.prefix + host

    @staticmethod
    def address(host: str) -> str:
        """The IPv4 address of host ``cI`` (10.77.1.I+1), ``sJ`` (10.77.2.J+1) or ``db``
        (10.77.2.254)."""
        if host == "db":
            return DATABASE_ADDRESS
        side = {"c": 1, "s": 2}[host[0]]
        return f"10.77.{side}.{int(host[1:]) + 1}"

    @property
    def samples_path(self) -> Path:
        return self.out_dir / "router.jsonl"

    # -- life cycle --------------------------------------------------------------------

    def __enter__(self) -> Testbed:  # noqa: PYI034
        if threading.current_thread() is threading.main_thread():
            # SIGTERM tears down too: raise in the main thread so __exit__ runs.
            self._old_sigterm = signal.signal(signal.SIGTERM, _raise_exit)
        try:
            self.up()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        # A second Ctrl-C must not cut the teardown short.
        main = threading.current_thread() is threading.main_thread()
        old_sigint = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            self.down()
        finally:
            if old_sigint is not None:
                signal.signal(signal.SIGINT, old_sigint)
            if self._old_sigterm is not None:
                signal.signal(signal.SIGTERM, self._old_sigterm)
                self._old_sigterm = None

    def up(self) -> None:
        """Creates the namespaces, links, addresses and settings, and starts the router."""
        if os.geteuid() != 0:
            raise TestbedError("the testbed needs root (network namespaces)")
        binary = router_binary()
        self.out_dir.mkdir(parents=True, exist_ok=True)
        hosts = self.clients + self.server_side
        for program in self.bpf_congestion_controls:
            try:
                held = _testbed_bpf.acquire(program, self.prefix)
            except _testbed_bpf.BpfError as e:
                raise TestbedError(f"BPF congestion control {program['name']}: {e}") from e
            if held:
                self._bpf_held.append(program["name"])
        self._allow_congestion_controls()
        for h in ["r", *hosts]:
            _run(["ip", "netns", "add", self.ns(h)])
            self._namespaces.append(self.ns(h))
            self._sysctl(h, {"net.ipv6.conf.all.disable_ipv6": 1, "net.ipv6.conf.default.disable_ipv6": 1})
            _run(["ip", "-n", self.ns(h), "link", "set", "lo", "up"])
        r = self.ns("r")
        router_ifs = []
        for bridge, inner, outer, side in (("brc", "cli", "brc-p", self.clients),
                                           ("brs", "srv", "brs-p", self.server_side)):
            _run(["ip", "-n", r, "link", "add", bridge, "type", "bridge"])
            _run(["ip", "-n", r, "link", "add", inner, "type", "veth", "peer", "name", outer])
            _run(["ip", "-n", r, "link", "set", outer, "master", bridge])
            router_ifs += [inner, outer]
            for h in side:
                _run(["ip", "link", "add", "eth0", "netns", self.ns(h), "type", "veth",
                      "peer", "name", h, "netns", r])
                _run(["ip", "-n", r, "link", "set", h, "master", bridge])
                router_ifs.append(h)
                _run(["ip", "-n", self.ns(h), "addr", "add", f"{self.address(h)}/16", "dev", "eth0"])
                _run(["ip", "netns", "exec", self.ns(h), str(binary), "offload-off", "eth0"])
                _run(["ip", "-n", self.ns(h), "link", "set", "eth0", "up"])
                self._sysctl(h, {**self.sysctls, **self.host_sysctls.get(h, {})})
            _run(["ip", "-n", r, "link", "set", bridge, "up"])
        _run(["ip", "netns", "exec", r, str(binary), "offload-off", *router_ifs])
        for i in router_ifs:
            _run(["ip", "-n", r, "link", "set", i, "up"])
        cfg = self.out_dir / "router.json"
        cfg.write_text(json.dumps(self.config, indent=2))
        self.samples_path.unlink(missing_ok=True)
        # `ip netns exec` enters the namespace and execs: the child's pid is the router's.
        with open(self.out_dir / "router.stderr", "w") as stderr:
            self.router = subprocess.Popen(
                ["ip", "netns", "exec", r, str(binary), "--config", str(cfg),
                 "--out", str(self.samples_path), *self.router_flags],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
            )
        deadline = time.monotonic() + 10
        while not self._router_started():
            if self.router.poll() is not None:
                err = (self.out_dir / "router.stderr").read_text().strip()
                raise TestbedError(f"the router exited with {self.router.returncode}: {err}")
            if time.monotonic() > deadline:
                raise TestbedError("the router did not start within 10 s")
            time.sleep(0.02)

    def _router_started(self) -> bool:
        try:
            with open(self.samples_path) as f:
                return '"start"' in f.readline()
        except FileNotFoundError:
            return False

    def _allow_congestion_controls(self) -> None:
        """A namespace other than the initial one may only make an algorithm its default if the
        initial namespace lists it in ``net.ipv4.tcp_allowed_congestion_control`` (the kernel
        answers EPERM otherwise): add the ones the hosts use there, restored at teardown."""
        wanted = {str(v) for h in self.clients + self.server_side
                  for k, v in {**self.sysctls, **self.host_sysctls.get(h, {})}.items()
                  if k == "net.ipv4.tcp_congestion_control"}
        old = _ALLOWED.read_text().split()
        missing = sorted(wanted - set(old))
        if missing:
            self._allowed_before = " ".join(old)
            _ALLOWED.write_text(" ".join(old + missing))

    def _sysctl(self, host: str, values: Mapping[str, Any]) -> None:
        if values:
            _run(["ip", "netns", "exec", self.ns(host), "sysctl", "-q", "-w",
                  *(f"{k}={v}" for k, v in values.items())])

    def stop_router(self) -> None:
        """Stops the router (SIGTERM: it writes its final counters), if it runs."""
        p, self.router = self.router, None
        if p is None or p.poll() is not None:
            return
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def down(self) -> None:
        """Stops the router, kills every process left in the namespaces, deletes them."""
        errors = []
        try:
            self.stop_router()
        except Exception as e:  # noqa: BLE001 (keep tearing down, report at the end)
            errors.append(f"router: {e}")
        for p in self._procs:
            if p.poll() is None:
                p.kill()
        for ns in self._namespaces:
            pids = _run(["ip", "netns", "pids", ns], check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
        for p in self._procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                errors.append(f"process {p.pid} survived SIGKILL")
        self._procs.clear()
        for ns in reversed(self._namespaces):
            # A namespace is deleted once its last process is gone; retry briefly.
            for _ in range(50):
                if _run(["ip", "netns", "del", ns], check=False).returncode == 0 \
                        or ns not in leftover_namespaces(ns):
                    break
                time.sleep(0.1)
            else:
                errors.append(f"namespace {ns} not deleted")
        self._namespaces.clear()
        if self._allowed_before is not None:
            try:
                # Less what has been unregistered since (another run's BPF congestion control).
                available = _testbed_bpf.available()
                _ALLOWED.write_text(" ".join(n for n in self._allowed_before.split()
                                             if n in available or not available))
                self._allowed_before = None
            except OSError as e:
                errors.append(f"restoring {_ALLOWED}: {e}")
        while self._bpf_held:
            name = self._bpf_held.pop()
            try:
                _testbed_bpf.release(name, self.prefix)
            except (_testbed_bpf.BpfError, OSError) as e:
                errors.append(f"BPF congestion control {name}: {e}")
        if errors:
            raise TestbedError("teardown: " + "; ".join(errors))

    # -- processes in the namespaces ---------------------------------------------------

    def popen(self, host: str, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen:
        """Starts ``argv`` in host ``host``'s namespace (killed at teardown if still running)."""
        p = subprocess.Popen(["ip", "netns", "exec", self.ns(host), *argv], **kwargs)
        self._procs.append(p)
        return p

    def run(self, host: str, argv: Sequence[str], timeout: float | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
        """Runs ``argv`` in host ``host``'s namespace and waits for it."""
        p = self.popen(host, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise
        r = subprocess.CompletedProcess(p.args, p.returncode, out, err)
        if check and p.returncode != 0:
            raise TestbedError(f"{' '.join(argv)} in {host}: exit {p.returncode}: {err.strip()}")
        return r

    # -- the router's output -----------------------------------------------------------

    def records(self, kinds: Iterable[str] = ("sample", "final", "io", "start")) -> list[dict]:
        """The router's output lines of the given types, in order."""
        want = set(kinds)
        out = []
        if self.samples_path.exists():
            for line in self.samples_path.read_text().splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:  # a line being written
                    continue
                if rec.get("type") in want:
                    out.append(rec)
        return out

    def samples(self, direction: str = "down") -> list[dict]:
        """Queue samples of one direction (``up``: clients to servers; ``down``)."""
        return [r for r in self.records(["sample"]) if r["dir"] == direction]

    def final(self, direction: str = "down") -> dict:
        """The final counters of one direction (after the router stopped)."""
        for r in self.records(["final"]):
            if r["dir"] == direction:
                return r
        raise TestbedError("no final counters: the router has not stopped cleanly")


def _raise_exit(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)
