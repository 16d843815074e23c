"""The TPC-W workload on the testbed (docs/testbed.md, "The TPC-W workload") and seed 000's
testbed on real stacks (``ecnlab reproduce ecn-plus --testbed``).

Without root: the browsing mix is the simulator's (its Rust table, parsed), the browsers' draws,
the bookstore database and every page's queries, the web tier and a browser over loopback, the
plan of seed 000's testbed scenario and the reproduction's mapping and refusals, the
``--database`` option's refusals and its place in the run id. As root (skipped otherwise): a few
seconds of browsers through the router write exchanges with a plausible page mix, the database
answers, and nothing is left; the same on MariaDB (``--database mariadb``; Debian's
mariadb-server installed with apt-get when missing), whose bookstore holds the SQLite one's rows,
and whose server a signal leaves behind no more than the run's end does.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from conftest import ecnlab_process, invoke
from ecnlab import _testbed_web as web
from ecnlab._testbed_plan import TestbedUnsupported, plan
from ecnlab.reproduce import ecn_plus_testbed as ept
from ecnlab.reproduce.ecn_plus import ECN_MODES, TESTBED_REFERENCE
from ecnlab.testbed_run import AGENT
from test_testbed_run import _alive, _cmdline, _ours, _pids

ROOT_DIR = Path(__file__).resolve().parents[1]
TPCW_RS = ROOT_DIR / "crates" / "ecnlab" / "src" / "workload" / "tpcw.rs"
SEED_TESTBED = ept.SCENARIO
LINUX = ("tcp.profile=linux",)

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


# --- no root needed ------------------------------------------------------------------------


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def test_the_browsing_mix_is_the_simulators_table():
    # Parsed from the simulator's source: the same rows, targets and percentages.
    src = TPCW_RS.read_text()
    body = src[src.index("fn transitions"):src.index("fn next_interaction")]
    rust = {}
    for frm, row in re.findall(r"(\w+) => &\[(.*?)\],", body):
        rust[frm] = [(to, float(p)) for to, p in re.findall(r"\((\w+), ([\d.]+)\)", row)]
    ours = {_camel(k): [(_camel(to), p) for to, p in v] for k, v in web.TRANSITIONS.items()}
    assert len(rust) == 14
    assert ours == rust
    assert [_camel(i) for i in web.INTERACTIONS] == re.findall(
        r"^\s+(\w+),$", src[src.index("pub enum Interaction"):src.index("use Interaction")],
        re.MULTILINE)


def test_the_walk_gives_the_long_run_browsing_mix():
    # Workloads spec 4.1: Home 29.00 %, New Products 11.00, Best Sellers 11.00, Product
    # Detail 21.01, Search Request 12.00, Search Results 11.00; browse/order 95/5.
    rng, state, n = random.Random(1), "home", 300_000
    counts = Counter()
    for _ in range(n):
        state = web.next_interaction(state, rng)
        counts[state] += 1
    share = {k: 100 * v / n for k, v in counts.items()}
    for page, want in (("home", 29.0), ("new_products", 11.0), ("best_sellers", 11.0),
                       ("product_detail", 21.01), ("search_request", 12.0),
                       ("search_results", 11.0)):
        assert abs(share[page] - want) < 0.4, (page, share[page])
    assert abs(sum(share[p] for p in web.BROWSE) - 95.0) < 0.4


def _browser(seed: str = "1/walk", **params) -> web.Browser:
    return web.Browser({"browser": 3, "seed": seed}, params)


def test_a_browser_draws_pages_think_times_and_sessions_as_the_simulator():
    b = _browser()
    session_min = b.start_session()
    page = b.page()
    # The defaults: a 400-byte request for an 8000-byte page, then 5 images of 5000 bytes.
    assert [(r, s) for _, r, s, _ in page] == [(400, 8000)] + [(400, 5000)] * 5
    assert page[0][0].startswith("/home?") and all(t.startswith("/img/") for t, *_ in page[1:])
    # The same seed, the same walk; another seed, another.
    walk = []
    for c in (_browser(), _browser(), _browser("2/walk")):
        c.start_session()
        w = []
        for _ in range(50):
            c.page()
            think, more = c.after_page(0.0, 1e9)
            w.append((round(think, 9), c.state, more))
        walk.append(w)
    assert walk[0] == walk[1] != walk[2]
    assert all(0 <= t <= 70 and more for t, _, more in walk[0])
    # Past its minimum duration, a session ends at its first move to Home.
    b = _browser(think_mean_s=1.0, think_max_s=2.0)
    b.start_session()
    ended = False
    for _ in range(200):
        think, more = b.after_page(1e9, session_min)
        assert think <= 2.0
        if not more:
            ended = True
            break
        assert b.state != "home"
    assert ended


def test_requests_and_responses_have_the_drawn_sizes():
    assert len(web.request("/home?c_id=1", 400, 8000, 0.0, 7, 65536)) == 400
    assert len(web.request("/home?c_id=1", 10, 8000, 0.0, 7, 65536)) > 10  # headers, whole
    for n in (200, 5000, 8000):
        assert len(web.response("200 OK", web.render("home", [(1, "x")], n), "text/html", n)) == n
    assert len(web.render("home", [(1, "x" * 100)] * 200, 8000)) == 8000


def test_the_bookstore_is_populated_from_the_seed(tmp_path):
    import sqlite3

    counts = web.populate(str(tmp_path / "a.db"), 5)
    assert counts["item"] == web.ITEMS and counts["customer"] == web.CUSTOMERS
    assert counts["orders"] == web.ORDERS and counts["order_line"] > counts["orders"]
    web.populate(str(tmp_path / "b.db"), 5)
    web.populate(str(tmp_path / "c.db"), 6)
    dump = {n: "\n".join(sqlite3.connect(tmp_path / f"{n}.db").iterdump()) for n in "abc"}
    assert dump["a"] == dump["b"] != dump["c"]


def _bookstore(engine: str, seed: int, tmp_path: Path, request) -> web.Database:
    """The bookstore of ``seed`` on SQLite or on the session's private MariaDB server."""
    if engine == "sqlite":
        web.populate(str(tmp_path / f"{seed}.db"), seed)
        return web.Database.open(str(tmp_path / f"{seed}.db"))
    server = request.getfixturevalue("mariadb_server")
    name = f"t{os.getpid()}_{seed}_{tmp_path.name}".replace("-", "_")[:60]
    server.populate(seed, name)
    return web.Database.open(server.local_url(name))


@pytest.mark.parametrize("engine", ["sqlite", "mariadb"])
def test_every_page_answers_from_the_bookstore(engine, tmp_path, request):
    # The same queries on both engines (MariaDB: as root, on a private server).
    db = _bookstore(engine, 5, tmp_path, request)
    q = {"c_id": "17", "sc_id": "5", "i_id": "42", "subject": "ARTS", "term": "Ba"}
    for page in web.INTERACTIONS:
        rows = web._page_rows(db, page, q)
        # Pages that must find rows in a populated store do.
        if page not in ("search_results", "buy_confirm", "best_sellers", "order_display"):
            assert rows, page
    # The cart page put item 42 in cart 5; buying it makes an order and empties the cart.
    before = db.query("SELECT count(*) FROM orders")[0][0]
    stock = db.query("SELECT i_stock FROM item WHERE i_id = 42")[0][0]
    web._page_rows(db, "shopping_cart", q)
    web._page_rows(db, "shopping_cart", q)
    assert web._page_rows(db, "buy_confirm", q) == [(42, 2, pytest.approx(
        db.query("SELECT i_cost FROM item WHERE i_id = 42")[0][0]))]
    assert db.query("SELECT count(*) FROM orders")[0][0] == before + 1
    assert db.query("SELECT count(*) FROM cart_line WHERE scl_sc_id = 5")[0][0] == 0
    assert db.query("SELECT i_stock FROM item WHERE i_id = 42")[0][0] == stock - 2
    assert web._page_rows(db, "order_display", q)[0][4:6] == (42, 2)
    db.close()


def test_mariadb_holds_the_same_rows_as_sqlite_from_the_same_seed(tmp_path, request):
    # One populate path for both engines: table by table, the same rows (seed 5), and another
    # seed gives other rows.
    lite, maria = (_bookstore(e, 5, tmp_path, request) for e in ("sqlite", "mariadb"))
    other = _bookstore("mariadb", 6, tmp_path, request)
    for table in web.TABLES:
        order = "ORDER BY 1, 2"
        rows = maria.query(f"SELECT * FROM {table} {order}")
        assert rows == lite.query(f"SELECT * FROM {table} {order}"), table
        assert rows != other.query(f"SELECT * FROM {table} {order}"), table
        assert len(rows) > 200
    for db in (lite, maria, other):
        db.close()


def test_the_dialects_differ_only_where_declared():
    # Placeholders are rewritten to the driver's paramstyle; the schema differs by the orders'
    # automatic key; the cart's upsert is the dialect's.
    maria, lite = web.Database(None, "mariadb"), web.Database(None, "sqlite")
    q = "SELECT i_id FROM item WHERE i_id IN (?, ?) AND i_subject = ?"
    assert maria.sql(q) == q.replace("?", "%s") and lite.sql(q) == q
    schemas = {d: web.SCHEMA.format(**web.DIALECTS[d]) for d in web.DIALECTS}
    assert schemas["mariadb"].replace(" AUTO_INCREMENT", "") == schemas["sqlite"]
    assert "o_id INTEGER PRIMARY KEY AUTO_INCREMENT" in schemas["mariadb"]
    assert "ON DUPLICATE KEY" in web.DIALECTS["mariadb"]["cart_add"]
    assert "ON CONFLICT" in web.DIALECTS["sqlite"]["cart_add"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("engine", ["sqlite", "mariadb"])
def test_the_web_tier_serves_a_browsers_pages_over_loopback(engine, tmp_path, request):
    # The agent's web tier on loopback (no namespaces needed): a browser walks 30 pages on
    # one persistent connection; every response has the drawn size; the tier records its
    # per-request server and database times, and its end of the connection, at SIGTERM.
    # MariaDB (as root): the tier's threads query a private server on its Unix socket.
    db: Path | str = tmp_path / "store.db"
    if engine == "sqlite":
        web.populate(str(db), 1)
    else:
        server = request.getfixturevalue("mariadb_server")
        server.populate(1, "loopback")
        db = server.local_url("loopback")
    port = _free_port()
    log = tmp_path / "web.jsonl"
    proc = subprocess.Popen([sys.executable, str(AGENT), "web", str(port), str(db), str(log)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"

        async def walk() -> list[tuple[str, int, int]]:
            b = _browser(images_per_page={"dist": "uniform", "low": 0, "high": 4})
            b.start_session()
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            got = []
            for _ in range(30):
                for target, req, resp, delay in b.page():
                    writer.write(web.request(target, req, resp, delay, 9, 0))
                    got.append((target.split("?")[0], resp, await web.read_response(reader)))
                b.after_page(0.0, 1e9)
            writer.close()
            return got

        got = asyncio.run(walk())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert all(want == n for _, want, n in got)
    pages = [p for p, *_ in got if not p.startswith("/img/")]
    assert len(pages) == 30 and len(got) > 30
    stats = json.loads(Path(f"{log}.stats.json").read_text())
    assert stats["requests"] == len(got) and sum(stats["pages"].values()) == 30
    # Back-to-back requests over loopback for a few tens of ms: the tier is busy most of that
    # time (0.4-0.8 measured), but one connection's requests never overlap.
    assert 0 < stats["db_ms_mean"] < 50 and 0 < stats["busy_fraction"] < 1
    assert stats["database"] == engine
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["flow"] for r in rows] == [9]


def test_seed_000s_testbed_scenario_maps_onto_the_testbed():
    p = plan(SEED_TESTBED, 1, LINUX)
    assert len(p.browsers) == ept.calibrated_browsers() == 413
    assert [b["client"] for b in p.browsers[:21]] == [*range(20), 0]
    assert {b["server"] for b in p.browsers} == {0, 1, 2, 3}
    assert all(10 <= b["rtt_ms"] <= 150 for b in p.browsers)
    assert 0.1 <= min(b["start_s"] for b in p.browsers) < max(b["start_s"] for b in p.browsers) < 20.1
    assert p.tpcw["0"]["session_min_mean_s"] == 60
    # A browser's RTT is its host pair's; the draws depend on the seed alone.
    assert all(b["rtt_ms"] == p.pair_rtt_ms[(b["client"], b["server"])] for b in p.browsers)
    assert plan(SEED_TESTBED, 1, LINUX).browsers == p.browsers
    assert plan(SEED_TESTBED, 2, LINUX).browsers != p.browsers
    assert any("tpcw_browsers" in n for n in p.notes)


def test_the_seeds_profile_is_refused_and_the_reproduction_says_how_linux_differs():
    with pytest.raises(TestbedUnsupported) as e:
        plan(SEED_TESTBED)
    assert any(x.startswith("tcp.initial_rto_s (3.0, profile 'seed-2005')") for x in e.value.problems)
    diffs = ept.linux_differences()
    assert any("initial_rto_s (3.0" in d and "Linux: 1.0" in d for d in diffs)
    assert any("delayed_ack_ms (200.0" in d and "Linux: 40.0" in d for d in diffs)
    # The seed's values the testbed can set are kept.
    assert ept.linux_tcp() == {"profile": "linux", "congestion_control": "newreno",
                               "min_rto_s": 1.0, "initial_window_segments": 2,
                               "syn_retries": 6, "mss_bytes": 1460, "header_bytes": 40}


@pytest.mark.parametrize(("mode", "rate", "aqm", "ecn", "ecn_plus"), [
    (TESTBED_REFERENCE, 100e6, "droptail", 0, []),
    ("no ECN", 10e6, "ared", 0, []),
    ("ECN", 10e6, "ared", 1, []),
    ("ECN+", 10e6, "ared", 1, [0, 1, 2, 3]),
])
def test_the_reproductions_runs(mode, rate, aqm, ecn, ecn_plus):
    s = ept.scenario(mode, 400, ept.TIMING["quick"])
    p = plan(s, 1)
    assert (p.testbed["rate_bps"], p.testbed["queue"]["aqm"]["kind"]) == (rate, aqm)
    assert p.testbed["ecn_plus_servers"] == ecn_plus
    assert {h.sysctls["net.ipv4.tcp_ecn"] for h in p.hosts.values()} == {ecn}
    assert {h.route["rto_min"] for h in p.hosts.values()} == {"1000ms"}
    assert len(p.browsers) == 400 and p.duration_s == 150 and p.warmup_s == 30
    if aqm == "ared":
        assert p.testbed["queue"]["aqm"]["above_max"] == "mark"
        assert p.testbed["queue"]["aqm"]["ecn"] == bool(ecn)


def test_reproduce_testbed_is_for_ecn_plus_only_and_needs_root(tmp_path, monkeypatch):
    result = invoke("reproduce", "dcn", "--testbed")
    assert result.exit_code == 2
    assert "only ecn-plus" in result.output
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # as a user, even when run as root
    result = invoke("reproduce", "ecn-plus", "--testbed", "--out", str(tmp_path / "x"))
    assert result.exit_code == 1 and "needs root" in result.stderr
    assert not (tmp_path / "x").exists()


_MEASURES = {"mean_s": 0.8, "first_mean_s": 1.3, "f3": 95.0, "nt": 96.4, "delivered_mbps": 9.64,
             "served": 100, "exchanges": 101, "unfinished": 1, "loss_pct": 21.0,
             "mark_pct": 0.0, "queue_pkts": 11.0, "web_server_ms_mean": 0.14,
             "web_server_ms_max": 24.0, "web_db_ms_mean": 0.36, "web_db_ms_max": 11.0,
             "web_busy_fraction_max": 0.008, "load_average": 2.0}


def _runs(by_mode: dict[str, list[dict]]) -> pd.DataFrame:
    """Synthetic runs: per ECN mode, one measures dict per seed (over :data:`_MEASURES`),
    and the reference (seed 1)."""
    rows = [{**_MEASURES, "seed": 1, "ecn_mode_label": TESTBED_REFERENCE, "reference": True}]
    for mode, seeds in by_mode.items():
        rows += [{**_MEASURES, **m, "seed": s, "ecn_mode_label": mode, "reference": False}
                 for s, m in enumerate(seeds, start=1)]
    return pd.DataFrame(rows)


def test_the_report_puts_the_testbed_beside_the_paper_and_the_simulation():
    runs = _runs({m: [{}, {"mean_s": 1.2, "web_server_ms_max": 30.0}] for m in ECN_MODES})
    table = ept.table_of(runs)
    assert table["configuration"].tolist() == [TESTBED_REFERENCE, "RED*, no ECN", "RED*, ECN",
                                               "RED*, ECN+"]
    assert table["seeds"].tolist() == [1, 2, 2, 2]
    assert table["paper mean response (s)"].tolist()[1:] == [26.0, 4.5, 0.5]
    assert table["paper throughput (%)"].tolist()[1:] == [44.0, 56.0, 99.0]
    assert table["simulation throughput (%)"].tolist() == [15.0, 88.5, 99.2, 100.0]
    assert table["busiest web tier busy (%)"].tolist() == [0.8] * 4
    # The seeds' mean; the largest server time of any seed.
    assert table["testbed mean response (s, Kaplan-Meier to 120 s)"].tolist() == [0.8, 1.0, 1.0,
                                                                                  1.0]
    assert table["server time per request (ms, mean / max)"].tolist()[1] == "0.14 / 30.0"
    claims = ept.decide_claims(runs)
    point = {"reached": True}
    text = ept.report(table, "calibration text", "quick", 413, 2, claims, point)
    assert "| testbed mean response (s, Kaplan-Meier to 120 s) | 0.8 | 1 | 1 | 1 |" in text
    assert "initial_rto_s (3.0" in text and "120 s window" in text
    assert "operating point, reached" in text and "means over 2 seed(s)" in text
    assert all(f"| {c['id']} | {c['verdict']} |" in text for c in claims)


# The paper's testbed (section 7): 26 / 4.5 / 0.5 s, 44 / 56 / 99%, 50% more requests served
# with ECN+, the heaviest tail without ECN.
_PAPER = {"no ECN": {"mean_s": 26.0, "nt": 44.0, "served": 600, "f3": 60.0},
          "ECN": {"mean_s": 4.5, "nt": 56.0, "served": 1000, "f3": 80.0},
          "ECN+": {"mean_s": 0.5, "nt": 99.0, "served": 1500, "f3": 99.0}}
# What the quick testbed measured (seed 1): no effect of the kind the paper saw.
_MEASURED = {"no ECN": {"mean_s": 0.82, "nt": 96.4, "served": 30000, "f3": 97.0},
             "ECN": {"mean_s": 0.32, "nt": 98.8, "served": 30500, "f3": 99.0},
             "ECN+": {"mean_s": 0.30, "nt": 98.8, "served": 30600, "f3": 99.1}}


def _seeds(numbers: dict[str, dict], n: int) -> dict[str, list[dict]]:
    """``n`` seeds around ``numbers``: each measure times 1 + 1%, 0, -1%..."""
    wobble = [1.0 + 0.01 * ((k % 3) - 1) for k in range(n)]
    return {mode: [{k: v * w for k, v in m.items()} for w in wobble]
            for mode, m in numbers.items()}


def test_the_testbed_claims_hold_on_runs_with_the_papers_effect():
    claims = {c["id"]: c for c in ept.decide_claims(_runs(_seeds(_PAPER, 3)))}
    assert set(claims) == {c.id for c in ept.TESTBED_CLAIMS}
    assert len(claims) == 6
    assert {c["verdict"] for c in claims.values()} == {"holds"}
    assert all(c["n_seeds"] == 3 and c["confidence"] == 0.95 for c in claims.values())


def test_the_testbed_claims_fail_on_runs_without_it_and_need_two_seeds():
    claims = {c["id"]: c for c in ept.decide_claims(_runs(_seeds(_MEASURED, 3)))}
    for cid in ("testbed-mean-response", "testbed-ecnplus-mean-response-tenfold",
                "testbed-throughput", "testbed-throughput-up-40",
                "testbed-requests-served-50pct-more"):
        assert claims[cid]["verdict"] == "reversed", cid
    assert claims["testbed-tails"]["verdict"] == "holds"  # the order of the tails survives
    one = ept.decide_claims(_runs(_seeds(_PAPER, 1)))
    assert {c["verdict"] for c in one} == {"unresolved"}
    # A seed whose run lacks a mode is not paired away: it shows as a missing value.
    runs = _runs(_seeds(_PAPER, 3))
    runs = runs[~((runs["seed"] == 3) & (runs["ecn_mode_label"] == "ECN+"))]
    tenfold = next(c for c in ept.decide_claims(runs)
                   if c["id"] == "testbed-ecnplus-mean-response-tenfold")
    assert tenfold["n_seeds"] == 2 and tenfold["tests"][0]["not_finite"] == {"3": "nan"}


def test_seeds_is_for_the_testbed():
    result = invoke("reproduce", "ecn-plus", "--seeds", "2")
    assert result.exit_code == 2 and "--seeds is for --testbed" in result.output
    result = invoke("reproduce", "ecn-plus", "--testbed", "--seeds", "0")
    assert result.exit_code == 2


# --- root: a short run -----------------------------------------------------------------------


SMALL = """
name = "tpcw-small"
duration_s = 10
warmup_s = 1
[topology]
clients = 2
servers = 2
access_rate_bps = 100e6
bottleneck = { rate_bps = 10e6, delay_ms = 1, queue = { limit_pkts = 200 } }
[tcp]
profile = "linux"
[[workloads]]
kind = "tpcw_browsers"
browsers = 24
think_mean_s = 0.5
session_min_mean_s = 2
rtt_ms = { dist = "uniform", low = 10, high = 40 }
"""


NEEDS_ROOT = pytest.mark.skipif(
    not ROOT or shutil.which("ip") is None,
    reason="the testbed needs root (network namespaces, AF_PACKET) and iproute2's ip")


def _run_small(tmp_path: Path, *options: str) -> tuple[Path, dict[int, str]]:
    """``ecnlab testbed run`` of SMALL as a child process; returns the run folder and every
    process seen in its namespaces once the browsers were up (pid: command line), after
    checking that it exited 0 and left none of them, nor its namespaces."""
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL)
    out = tmp_path / "run"
    proc = ecnlab_process("testbed", "run", str(scenario), "--out", str(out), "--quiet",
                          *options)
    # Every process in the run's namespaces once the browsers are up (the client agents, the
    # web tiers, the exchange servers, the router, the database server).
    pids: set[int] = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        pids |= _pids(_ours(proc.pid))
        if sum("_testbed_agent.py web" in _cmdline(p) for p in pids) == 2 and sum(
                "_testbed_agent.py client" in _cmdline(p) for p in pids) == 2:
            break
        time.sleep(0.1)
    time.sleep(1.0)
    pids |= _pids(_ours(proc.pid))
    seen = {p: _cmdline(p) for p in pids}
    _, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr
    assert sum("_testbed_agent.py web" in c for c in seen.values()) == 2
    assert _ours(proc.pid) == []
    assert {p for p in pids if _alive(p)} == set()
    return out, seen


@NEEDS_ROOT
def test_browsers_on_the_testbed_write_exchanges_with_the_page_mix_and_leave_nothing(tmp_path):
    from ecnlab.store import read_run

    out, _ = _run_small(tmp_path)
    r = read_run(out)
    ex = r.tables["exchanges"].to_pandas()
    flows = r.tables["flows"].to_pandas()
    assert set(flows["kind"]) == {"tpcw_browsers"}
    assert len(ex) > 200 and ex["completed"].mean() > 0.9
    # Pages and images: with 5 images a page, one exchange in six is a page; a session's first
    # exchange is its Home page, and sessions reopen (several flows per browser).
    sizes = Counter(ex["response_bytes"])
    assert sizes[8000] + sizes[5000] >= 0.9 * len(ex)
    assert abs(sizes[8000] / (sizes[8000] + sizes[5000]) - 1 / 6) < 0.03
    assert (ex[ex["seq_in_flow"] == 0]["response_bytes"] == 8000).all()
    assert len(flows) > 24 and flows["flow"].tolist() == sorted(flows["flow"])
    assert flows["flow"].max() < 10_000  # renumbered from the browsers' ids
    done = ex[ex["completed"]]
    assert (done["response_time_s"] > 0.010).all()  # at least the 10 ms RTT
    # The database answered every page a browser got (a page asked for as the run ended may
    # not have reached the web tier); the web tier was far from busy.
    m = json.loads((out / "manifest.json").read_text())
    tiers = m["testbed"]["web_tier"]
    pages = sum(sum(t["pages"].values()) for t in tiers.values())
    assert pages >= (done["response_bytes"] == 8000).sum() and tiers["s0"]["pages"]["home"] > 0
    by_page = Counter()
    for t in tiers.values():
        by_page.update(t["pages"])
    # Every session starts at Home, and the walk returns there often (29% in the long run).
    assert 0.2 < by_page["home"] / pages < 0.6
    assert by_page["new_products"] + by_page["best_sellers"] > 0.1 * pages
    assert m["summary"]["web_busy_fraction_max"] < 0.2
    assert m["summary"]["web_db_ms_mean"] < 20
    assert m["testbed"]["database"]["engine"] == "sqlite" and "mode_options" not in m


# --- --database ----------------------------------------------------------------------------


def test_the_database_option_is_checked_before_anything_is_built(tmp_path, monkeypatch):
    from conftest import assert_one_line_error

    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL)
    out = tmp_path / "run"
    # An unknown engine, and MariaDB for a scenario without a database: bad input (exit 2).
    assert_one_line_error(invoke("testbed", "run", str(scenario), "--out", str(out),
                                 "--database", "oracle"), "--database oracle", "sqlite, mariadb")
    red = ROOT_DIR / "examples" / "testbed-red.toml"
    assert_one_line_error(invoke("testbed", "run", str(red), "--out", str(out),
                                 "--database", "mariadb"), "no tpcw_browsers workload")
    # Not root: refused as the rest of the testbed is.
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    result = invoke("testbed", "run", str(scenario), "--out", str(out), "--database", "mariadb")
    assert result.exit_code == 1 and "needs root" in result.stderr
    # MariaDB missing (as root): the package and the command to install it, no traceback.
    from ecnlab import _testbed_mariadb

    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(_testbed_mariadb, "_which", lambda name: None)
    result = invoke("testbed", "run", str(scenario), "--out", str(out), "--database", "mariadb")
    assert result.exit_code == 1, result.output
    assert "mariadb-server package" in result.stderr
    assert "apt-get install -y mariadb-server" in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists()
    result = invoke("reproduce", "ecn-plus", "--testbed", "--database", "mariadb", "--out",
                    str(tmp_path / "x"))
    assert result.exit_code == 1 and "apt-get install -y mariadb-server" in result.stderr
    assert not (tmp_path / "x").exists()


def test_reproduce_takes_the_database_with_the_testbed_only(tmp_path, monkeypatch):
    result = invoke("reproduce", "ecn-plus", "--database", "mariadb")
    assert result.exit_code == 2 and "only with --testbed" in result.output
    result = invoke("reproduce", "ecn-plus", "--testbed", "--database", "db2")
    assert result.exit_code == 2 and "--database db2" in result.output
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    result = invoke("reproduce", "ecn-plus", "--testbed", "--database", "mariadb", "--out",
                    str(tmp_path / "x"))
    assert result.exit_code == 1 and "needs root" in result.stderr


def test_the_database_is_part_of_a_testbed_runs_id(small_result, tmp_path):
    from ecnlab._result import run_id
    from ecnlab.store import run_problems, write_run

    s, seed = small_result.scenario, small_result.seed
    maria = run_id(s, seed, "testbed", {"database": "mariadb"})
    assert maria != run_id(s, seed, "testbed") == run_id(s, seed, "testbed", None)
    out = write_run(small_result, tmp_path / "r", mode="testbed",
                    mode_options={"database": "mariadb"})
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["run_id"] == maria and manifest["mode_options"] == {"database": "mariadb"}
    assert run_problems(out) == []
    assert ept.database_of(out) == "mariadb" and ept.database_of(tmp_path / "none") is None


@NEEDS_ROOT
def test_browsers_on_a_mariadb_bookstore_and_nothing_left(tmp_path, monkeypatch,
                                                          mariadb_installed):
    # The same short run with --database mariadb: one MariaDB server in the testbed's own
    # host db (its datadir in the run's temporary folder, under this test's TMPDIR), the web
    # tiers' pages answered from it with sane query times, and at the end no mariadbd of the
    # run and no namespace left.
    from ecnlab._testbed_mariadb import pids as mariadbd_pids
    from ecnlab._testbed_web import TABLES
    from ecnlab.store import read_run

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))  # the child's temporary folder: its datadir
    started = time.monotonic()
    out, seen = _run_small(tmp_path, "--database", "mariadb")
    wall = time.monotonic() - started
    assert any("mariadbd" in c and str(tmp) in c for c in seen.values()), "no mariadbd seen"
    assert mariadbd_pids(str(tmp)) == []
    assert list(tmp.iterdir()) == []  # the datadir went with the run's temporary folder
    r = read_run(out)
    m = json.loads((out / "manifest.json").read_text())
    assert m["mode_options"] == {"database": "mariadb"}
    db = m["testbed"]["database"]
    assert db["engine"] == "mariadb" and db["address"] == "10.77.2.254"
    assert db["version"].startswith("10.") or db["version"].startswith("11.")
    assert set(db["rows"]) == set(TABLES) and db["rows"]["item"] == web.ITEMS
    ex = r.tables["exchanges"].to_pandas()
    assert len(ex) > 200 and ex["completed"].mean() > 0.9
    tiers = m["testbed"]["web_tier"]
    assert {t["database"] for t in tiers.values()} == {"mariadb"}
    pages = sum(sum(t["pages"].values()) for t in tiers.values())
    done = ex[ex["completed"]]
    assert pages >= (done["response_bytes"] == 8000).sum() > 30
    # The database is not the bottleneck: a page's queries take milliseconds.
    s = m["summary"]
    assert 0 < s["web_db_ms_mean"] < 20 and s["web_busy_fraction_max"] < 0.3
    assert wall < 120


@NEEDS_ROOT
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_mariadb_run_stopped_by_a_signal_leaves_no_mariadbd(sig, tmp_path, monkeypatch,
                                                               mariadb_installed):
    # SIGTERM as soon as a mariadbd of the run is up (mariadb-install-db's bootstrap server,
    # as it happens), Ctrl-C once the browsers run: the testbed's teardown stops the server,
    # and its datadir and temporary tables go with the run's temporary folder (an
    # interrupted install left one in $TMPDIR before the install got --tmpdir).
    from ecnlab._testbed_mariadb import pids as mariadbd_pids

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    scenario = tmp_path / "small.toml"
    scenario.write_text(SMALL)
    out = tmp_path / "run"
    proc = ecnlab_process("testbed", "run", str(scenario), "--out", str(out), "--quiet",
                          "--database", "mariadb")
    pids: set[int] = set()
    servers: list[int] = []
    deadline = time.monotonic() + 60
    # A server is a process named mariadbd (a command line naming it may be the installer's
    # my_print_defaults, or `ip netns exec` before its exec).
    while time.monotonic() < deadline and proc.poll() is None:
        pids |= _pids(_ours(proc.pid))
        servers = servers or mariadbd_pids(str(tmp))
        if servers and (sig == signal.SIGTERM or
                        any("_testbed_agent.py client" in _cmdline(p) for p in pids)):
            break
        time.sleep(0.05)
    assert servers, "the run's mariadbd did not start"
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode != 0, stderr
    assert "Traceback" not in stderr
    assert not out.exists()
    assert mariadbd_pids(str(tmp)) == []
    assert _ours(proc.pid) == [] and {p for p in pids if _alive(p)} == set()
    assert list(tmp.iterdir()) == []


@pytest.mark.skipif(not ROOT or shutil.which("ip") is None,
                    reason="the testbed needs root (network namespaces, AF_PACKET) and iproute2's ip")
def test_the_testbed_reproduction_runs_its_seeds_decides_the_claims_and_reuses_its_runs(
        tmp_path, monkeypatch):
    # The seed's scenario (24 hosts, RED* at 10 Mb/s) with 40 browsers for 8 s a run: the
    # layout, the pairing by seed and the report, not the paper's numbers.
    monkeypatch.setattr(ept, "TIMING", {"quick": {"warmup_s": 2.0, "window_s": 6.0}})
    monkeypatch.setattr(ept, "calibrated_browsers", lambda: 40)
    monkeypatch.setattr(ept, "CALIBRATION_TOLERANCE", 100.0)
    out = tmp_path / "tb"
    done = ept.run(out, "quick", seeds=2, progress=False, say=lambda line: None)
    assert len(done.runs) == 7
    assert sorted(done.runs["seed"].tolist()) == [1, 1, 1, 1, 2, 2, 2]
    assert (out / "reference" / "manifest.json").exists()
    for seed in (1, 2):
        for label in ("no-ecn", "ecn", "ecn-plus"):
            m = json.loads((out / f"seed-{seed}" / label / "manifest.json").read_text())
            assert m["mode"] == "testbed" and m["seed"] == seed
    assert (done.runs["served"] > 50).all()
    assert {c["n_seeds"] for c in done.claims} == {2}
    document = json.loads((out / "claims.json").read_text())
    assert [c["id"] for c in document["claims"]] == [c.id for c in ept.TESTBED_CLAIMS]
    assert document["seeds"] == [1, 2] and document["operating_point"]["browsers"] == 40
    text = (out / "testbed-real.md").read_text()
    assert "--seeds 2" in text and "## The paper's testbed claims on real stacks" in text
    assert len(pd.read_csv(out / "testbed-real-runs.csv")) == 7
    # A second call reuses every run (no testbed is built: it would need minutes).
    monkeypatch.setattr("ecnlab.testbed_run.run_testbed",
                        lambda *a, **k: pytest.fail("a stored run was run again"))
    again = ept.run(out, "quick", seeds=2, progress=False, say=lambda line: None)
    assert again.claims == done.claims
