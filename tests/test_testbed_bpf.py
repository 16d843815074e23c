"""ecnlab's BPF congestion controls on the testbed (docs/testbed.md, "BPF congestion controls").

Without root: the planner's mapping (``dctcp`` on a kernel without tcp_dctcp, ``abe = true``
with NewReno, their compiled-in parameters and names), the refusals by name of what the
programs cannot do, and the sharing of a registration between holders (bpftool replaced by a
fake). As root (skipped otherwise), with clang, bpftool and libbpf's headers (installed from
Debian when missing): the programs compile and register, a registration lives exactly as long
as its holders, and testbed runs of two long flows through a step marker show DCTCP's and ABE's
signatures against plain Reno with ECN on the same scenario.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import ecnlab
import pytest
from conftest import EXAMPLES, apt_install, ecnlab_process
from ecnlab import _testbed_bpf
from ecnlab._testbed_plan import TestbedUnsupported, plan

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not ROOT or shutil.which("ip") is None,
    reason="the testbed needs root (network namespaces, AF_PACKET, BPF) and iproute2's ip",
)
K_PKTS = 20  # the step marker's threshold
WARMUP_S = 3.0

# Two long downloads, 10 Mb/s, 20 ms RTT (a BDP of 17 packets), a step marker at 20 packets.
STEP = EXAMPLES / "testbed-dctcp.toml"


def test_the_example_is_the_step_scenario_the_checks_assume():
    s = ecnlab.load_scenario(STEP)
    assert s["topology"]["bottleneck"]["queue"]["aqm"] == {"kind": "threshold", "k_pkts": K_PKTS}
    assert s["warmup_s"] == WARMUP_S and s["tcp"]["congestion_control"] == "dctcp"


def _scenario(**tcp: Any) -> dict[str, Any]:
    return {
        "duration_s": 10,
        "topology": {"clients": 2, "servers": 2, "bottleneck": {"rate_bps": 1e7, "delay_ms": 10}},
        "workloads": [{"kind": "bulk", "flows": 2}],
        "tcp": {"profile": "linux", "ecn": True, **tcp},
    }


# --- no root needed ----------------------------------------------------------------------------


@pytest.mark.skipif("dctcp" in _testbed_bpf.available(), reason="the kernel has tcp_dctcp")
@pytest.mark.parametrize(
    ("tcp", "name", "defines"),
    [
        ({"congestion_control": "dctcp"}, "ecnlab_dctcp", {"G_SHIFT": 4, "ALPHA_INIT": 1 << 20}),
        ({"congestion_control": "dctcp", "dctcp_g": 0.125, "dctcp_alpha_init": 0.5},
         None, {"G_SHIFT": 3, "ALPHA_INIT": 1 << 19}),
        ({"abe": True}, "ecnlab_abe", {"BETA_ECN_PERMILLE": 800}),
        ({"abe": True, "beta_ecn": 0.85}, "ecnlab_abe_850", {"BETA_ECN_PERMILLE": 850}),
    ],
)
def test_dctcp_and_abe_map_onto_the_bpf_programs(tcp, name, defines):
    if not _testbed_bpf.BTF.is_file():
        pytest.skip("the kernel has no BTF")
    p = plan(_scenario(**tcp))
    (program,) = p.testbed["bpf_congestion_controls"]
    assert program["defines"] == defines
    assert program["name"] == (name or program["name"])
    assert len(program["name"]) <= 15 and program["name"].startswith("ecnlab_")
    for h in ("c0", "c1", "s0", "s1"):
        assert p.hosts[h].sysctls["net.ipv4.tcp_congestion_control"] == program["name"]
    assert any(program["name"] in n and program["source"] in n for n in p.notes), p.notes
    json.dumps(p.testbed)  # the manifest holds it


def test_plain_newreno_and_cubic_use_the_kernels_modules():
    for cc, module in (("newreno", "reno"), ("cubic", "cubic")):
        p = plan(_scenario(congestion_control=cc))
        assert "bpf_congestion_controls" not in p.testbed
        assert p.hosts["c0"].sysctls["net.ipv4.tcp_congestion_control"] == module


@pytest.mark.skipif(not _testbed_bpf.BTF.is_file(), reason="the kernel has no BTF")
def test_abe_hosts_without_ecn_run_reno():
    # ecn_fraction 0.5 of 2 clients: one host with ECN (ABE), one without (plain Reno).
    s = _scenario(abe=True)
    s["tcp"]["clients"] = {"ecn_fraction": 0.5}
    p = plan(s)
    ccs = sorted(p.hosts[h].sysctls["net.ipv4.tcp_congestion_control"] for h in ("c0", "c1"))
    assert ccs == ["ecnlab_abe", "reno"]


@pytest.mark.skipif("dctcp" in _testbed_bpf.available(), reason="the kernel has tcp_dctcp")
@pytest.mark.parametrize(
    ("tcp", "fragment"),
    [
        ({"abe": True, "congestion_control": "cubic"}, "tcp.abe (true, tcp.congestion_control cubic)"),
        ({"abe": True, "beta_ecn": 0.8123}, "tcp.beta_ecn (0.8123): the BPF ABE's beta_ecn"),
        ({"congestion_control": "dctcp", "dctcp_g": 0.1}, "tcp.dctcp_g (0.1): the BPF DCTCP's gain"),
        ({"congestion_control": "dctcp", "ecn": False}, "always negotiates ECN"),
    ],
)
def test_what_the_bpf_programs_cannot_do_is_refused_by_name(tcp, fragment):
    with pytest.raises(TestbedUnsupported) as e:
        plan(_scenario(**tcp))
    assert len(e.value.problems) == 1, e.value.problems  # named once, not twice
    assert fragment in e.value.problems[0], e.value.problems


def test_a_registration_is_shared_and_the_last_holder_unregisters_it(tmp_path, monkeypatch):
    """Two holders, one registration; a dead holder's hold is dropped (fake bpftool)."""
    registered: dict[str, int] = {}
    builds = []
    monkeypatch.setenv("ECNLAB_TESTBED_STATE", str(tmp_path))
    monkeypatch.setattr(_testbed_bpf, "available", lambda: set(registered))
    monkeypatch.setattr(_testbed_bpf, "build", lambda prog, d: builds.append(prog) or d / "x.o")
    monkeypatch.setattr(_testbed_bpf, "register",
                        lambda obj: registered.setdefault(builds[-1]["name"], 40 + len(builds)))
    monkeypatch.setattr(_testbed_bpf, "unregister", lambda i: [
        registered.pop(n) for n, j in list(registered.items()) if j == i])
    program = _testbed_bpf.dctcp_program()
    me = f"ecnlab-{os.getpid()}-"
    assert _testbed_bpf.acquire(program, me)
    assert _testbed_bpf.acquire(program, f"ecnlab-{os.getpid()}.1-")
    assert len(builds) == 1 and registered == {"ecnlab_dctcp": 41}
    _testbed_bpf.release("ecnlab_dctcp", me)
    assert registered == {"ecnlab_dctcp": 41}  # the second holder still uses it
    _testbed_bpf.release("ecnlab_dctcp", f"ecnlab-{os.getpid()}.1-")
    assert registered == {}
    # A holder whose process is gone (pid 2^22 + 1 is above Linux's pid_max) holds nothing.
    assert _testbed_bpf.acquire(program, f"ecnlab-{(1 << 22) + 1}-")
    assert _testbed_bpf.release_orphans() == ["ecnlab_dctcp"] and registered == {}
    # A name registered by someone else is used, not held, and never unregistered.
    registered["ecnlab_abe"] = 7
    assert not _testbed_bpf.acquire(_testbed_bpf.abe_program(0.8), me)
    _testbed_bpf.release("ecnlab_abe", me)
    assert registered == {"ecnlab_abe": 7}


# --- as root -----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def bpf_toolchain() -> None:
    """clang, bpftool and libbpf's headers; installed from Debian when missing and the tests
    run as root (as the ns2 fixture does)."""
    if _testbed_bpf.missing_tools():
        apt_install("clang", "bpftool", "libbpf-dev")
    missing = _testbed_bpf.missing_tools()
    if missing:
        pytest.fail(f"needed: {', '.join(missing)} (Debian: {_testbed_bpf.INSTALL})")


@needs_root
@pytest.mark.parametrize("which", ["dctcp", "abe"])
def test_the_programs_compile_and_register(which, bpf_toolchain, tmp_path, monkeypatch):
    monkeypatch.setenv("ECNLAB_TESTBED_STATE", str(tmp_path))
    program = _testbed_bpf.dctcp_program() if which == "dctcp" else _testbed_bpf.abe_program(0.9)
    assert isinstance(program, dict)
    program["name"] = f"ecnlab_t{which[0]}{os.getpid() % 100000}"  # this test's own name
    holders = [f"ecnlab-{os.getpid()}.{900 + i}-" for i in range(2)]
    assert program["name"] not in _testbed_bpf.available()
    for h in holders:
        assert _testbed_bpf.acquire(program, h)
    assert program["name"] in _testbed_bpf.available()
    _testbed_bpf.release(program["name"], holders[0])
    assert program["name"] in _testbed_bpf.available()
    _testbed_bpf.release(program["name"], holders[1])
    assert program["name"] not in _testbed_bpf.available()
    assert not list(tmp_path.glob("bpf/*.json"))


def _held_elsewhere(name: str) -> bool:
    """A live testbed (another test session's run) holds ``name``: its state file says so."""
    info = _testbed_bpf._read(_testbed_bpf.state_dir() / f"{name}.json")
    return info is not None and any(_testbed_bpf._alive_holder(h) for h in info["holders"])


@pytest.fixture(scope="module")
def step_runs(tmp_path_factory, bpf_toolchain) -> dict[str, dict[str, Any]]:
    """The step scenario with Reno + ECN, DCTCP, ABE NewReno and ABE with beta_ecn 0.5 (seed 1),
    each a testbed run:
    per run its manifest's summary, the down queue's samples after the warm-up, its hosts'
    congestion control, and whether the BPF program was gone after the run."""
    base = tmp_path_factory.mktemp("bpf-step")
    out: dict[str, dict[str, Any]] = {}
    reno = "tcp.congestion_control=newreno"
    for label, sets in (("reno", (reno,)), ("dctcp", ()), ("abe", (reno, "tcp.abe=true")),
                        ("abe_500", (reno, "tcp.abe=true", "tcp.beta_ecn=0.5"))):
        run = base / label
        args = [a for s in sets for a in ("--set", s)]
        proc = ecnlab_process("testbed", "run", str(STEP), "--out", str(run), "--quiet", *args)
        _, stderr = proc.communicate(timeout=180)
        assert proc.returncode == 0, stderr
        manifest = json.loads((run / "manifest.json").read_text())
        q = ecnlab.read_run(run).queue_samples.to_pandas()
        down = q[(q.link == "bottleneck_down") & (q.t_s >= WARMUP_S)].queue_pkts
        cc = manifest["testbed"]["hosts"]["s0"]["sysctls"]["net.ipv4.tcp_congestion_control"]
        out[label] = {"summary": manifest["summary"], "queue": down, "cc": cc,
                      "gone": cc not in _testbed_bpf.available(),
                      "notes": manifest["testbed"]["approximations"],
                      "flows": ecnlab.read_run(run).flows.to_pandas()}
    return out


@needs_root
def test_dctcp_holds_the_queue_at_the_step_where_reno_saws(step_runs):
    """DCTCP (RFC 8257) cuts cwnd by alpha / 2, alpha the marked fraction, so with a step
    marker its queue stays near the step with a small swing and many packets marked (F about
    alpha); Reno with ECN halves on each echo, so the queue drains after every cut (a swing
    from empty to the step) and few packets are marked.

    Measured when written (seed 1, 9 s after the warm-up): DCTCP mean 19.2 packets, 10th
    percentile 17, sd 2.1, 20.8% of packets marked, utilization 1.000; Reno + ECN 9.9, 1,
    7.0, 5.8%, 0.951. The checks fail for a DCTCP that halves (as Reno), or whose receiver
    echoes CE as classic ECN does (ECE until CWR: alpha near 1, halving).

    The queue's standard deviation is not compared: a first version required DCTCP's under
    half Reno's (2.1 against 7.0 when written), but two later runs measured 3.8 against 6.8
    (with two flows DCTCP's sawtooth is several packets deep) and a halving DCTCP already
    fails the 10th percentiles."""
    d, r = step_runs["dctcp"], step_runs["reno"]
    assert d["cc"] == "ecnlab_dctcp" and r["cc"] == "reno"
    assert any("ecnlab_dctcp" in n for n in d["notes"])
    assert d["flows"].ecn.all()
    assert d["queue"].quantile(0.1) >= K_PKTS / 2, d["queue"].describe()
    assert r["queue"].quantile(0.1) <= K_PKTS / 4, r["queue"].describe()
    assert d["summary"]["mark_rate_down"] > 2 * r["summary"]["mark_rate_down"]
    assert d["summary"]["utilization_down"] > 0.98
    assert d["gone"] or _held_elsewhere("ecnlab_dctcp")


@needs_root
def test_abe_backs_off_less_than_reno_on_the_same_marks(step_runs):
    """ABE (RFC 8511) keeps 0.8 of cwnd on an echo where Reno keeps 0.5: with the step at
    about the BDP, Reno's queue drains after each cut and ABE's does not, so ABE's queue is
    higher and its link fuller.

    Measured when written (seed 1): ABE mean 15.0 packets, 10th percentile 9, utilization
    1.000, 11.5% marked; Reno + ECN 9.9, 1, 0.951, 5.8%; ABE with beta_ecn 0.5 (Reno's
    factor, compiled in) 11.1, 2, 0.975, 4.9%. The checks fail for an ABE that halves on an
    echo (Reno's numbers), or that ignores its beta_ecn (0.5 would then act as 0.8)."""
    a, r, half = step_runs["abe"], step_runs["reno"], step_runs["abe_500"]
    assert a["cc"] == "ecnlab_abe" and half["cc"] == "ecnlab_abe_500"
    assert abs(half["queue"].mean() - r["queue"].mean()) \
        < abs(a["queue"].mean() - r["queue"].mean()) / 2
    assert a["queue"].mean() > 1.2 * r["queue"].mean(), (a["queue"].mean(), r["queue"].mean())
    assert a["queue"].quantile(0.1) >= r["queue"].quantile(0.1) + 4
    assert a["summary"]["utilization_down"] >= r["summary"]["utilization_down"]
    assert a["gone"] or _held_elsewhere("ecnlab_abe")


@needs_root
def test_ctrl_c_unregisters_the_bpf_congestion_control(tmp_path, bpf_toolchain):
    proc = ecnlab_process("testbed", "run", str(STEP), "--out", str(tmp_path / "run"),
                          "--quiet", "--set", "duration_s=30")
    deadline = time.monotonic() + 60
    while "ecnlab_dctcp" not in _testbed_bpf.available() and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    assert "ecnlab_dctcp" in _testbed_bpf.available()
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert not Path(tmp_path / "run").exists()
    assert "ecnlab_dctcp" not in _testbed_bpf.available() or _held_elsewhere("ecnlab_dctcp")


@needs_root
def test_overlapping_testbeds_each_release_their_own_program(bpf_toolchain):
    """Testbed A registers X; B, up while A is, registers Y and finds X allowed; A ends and
    unregisters X; B's teardown restores the allowed list it found, less the gone X (writing
    X failed before), and unregisters Y."""
    from ecnlab.testbed import _ALLOWED, Testbed

    x = _testbed_bpf.dctcp_program()
    y = _testbed_bpf.abe_program(0.7)
    assert isinstance(x, dict) and isinstance(y, dict)
    x["name"], y["name"] = (f"ecnlab_o{c}{os.getpid() % 100000}" for c in "xy")
    before = _ALLOWED.read_text().split()
    a = Testbed(congestion_control=x["name"], bpf_congestion_controls=[x])
    b = Testbed(congestion_control=y["name"], bpf_congestion_controls=[y])
    a.__enter__()
    try:
        b.__enter__()
    except BaseException:
        a.__exit__(None, None, None)
        raise
    try:
        assert {x["name"], y["name"]} <= _testbed_bpf.available()
        assert x["name"] in _ALLOWED.read_text().split()
    finally:
        a.__exit__(None, None, None)
        assert x["name"] not in _testbed_bpf.available()
        b.__exit__(None, None, None)
    assert not {x["name"], y["name"]} & _testbed_bpf.available()
    assert _ALLOWED.read_text().split() == before
