"""The testbed's TPC-W-like two-tier web application and its browser emulator (stdlib only).

Seed 000's testbed (section 7) served an online bookstore from a web tier backed by a database
tier to emulated browsers following TPC-W's browsing mix. This module is that application for
``ecnlab testbed run`` (docs/testbed.md, "The TPC-W workload"):

* :func:`populate`: the bookstore database (SQLite): items, authors, customers, addresses,
  orders and their lines, filled deterministically from the seed;
* :func:`serve_web`: the web tier, an asyncio HTTP/1.1 server with persistent connections. A
  page request runs its interaction's queries on the database, renders the HTML and pads it to
  the size the browser drew (the simulator's page size); an image request gets that many bytes.
  It records each request's server time and database time;
* :class:`Browser`: one emulated browser of the ``tpcw_browsers`` workload, walking the same
  transition table as the simulator (crates/ecnlab/src/workload/tpcw.rs), drawing think times,
  session minimum durations, page and image sizes in the simulator's order.

It runs inside the agents (``_testbed_agent.py`` imports it from its own folder), so it uses
the standard library only. :func:`draw` is also the plan's distribution sampler.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import signal
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

# The 14 TPC-W interactions, in the simulator's order (tpcw.rs, `Interaction`).
INTERACTIONS = (
    "home", "new_products", "best_sellers", "product_detail", "search_request",
    "search_results", "shopping_cart", "customer_registration", "buy_request", "buy_confirm",
    "order_inquiry", "order_display", "admin_request", "admin_confirm",
)  # fmt: skip
BROWSE = INTERACTIONS[:6]
"""The browse-type interactions (the rest are order-type)."""

# Browsing-mix transitions (workloads spec 4.1, from the RBE's cumulative table): (next,
# percent). The same numbers as tpcw.rs's `transitions` (a test compares the two sources).
TRANSITIONS: dict[str, tuple[tuple[str, float], ...]] = {
    "home": (("best_sellers", 37.92), ("new_products", 37.93), ("order_inquiry", 1.03),
             ("search_request", 18.71), ("shopping_cart", 4.40)),
    "new_products": (("home", 2.99), ("product_detail", 95.69), ("search_request", 0.74),
                     ("shopping_cart", 0.58)),
    "best_sellers": (("home", 46.07), ("product_detail", 6.52), ("search_request", 46.83),
                     ("shopping_cart", 0.57)),
    "product_detail": (("admin_request", 0.47), ("home", 83.00), ("product_detail", 14.03),
                       ("search_request", 1.41), ("shopping_cart", 1.09)),
    "search_request": (("home", 7.88), ("search_results", 91.68), ("shopping_cart", 0.44)),
    "search_results": (("home", 36.74), ("product_detail", 61.95), ("search_request", 0.74),
                       ("shopping_cart", 0.57)),
    "shopping_cart": (("customer_registration", 40.99), ("home", 47.84),
                      ("shopping_cart", 11.16)),
    "customer_registration": (("buy_request", 91.46), ("home", 4.74), ("search_request", 3.80)),
    "buy_request": (("buy_confirm", 92.00), ("home", 3.96), ("shopping_cart", 4.04)),
    "buy_confirm": (("home", 3.42), ("search_request", 96.58)),
    "order_inquiry": (("home", 5.23), ("order_display", 83.34), ("search_request", 11.43)),
    "order_display": (("home", 8.02), ("search_request", 91.98)),
    "admin_request": (("admin_confirm", 90.00), ("home", 10.00)),
    "admin_confirm": (("home", 98.78), ("search_request", 1.22)),
}  # fmt: skip

# The tpcw_browsers defaults (docs/scenario.md; tpcw.rs).
DEFAULTS: dict[str, Any] = {
    "think_mean_s": 7.0, "think_max_s": 70.0, "session_min_mean_s": 900.0,
    "session_min_max_s": 3600.0,
    "request_bytes": {"dist": "constant", "value": 400},
    "html_bytes": {"dist": "constant", "value": 8000},
    "images_per_page": {"dist": "constant", "value": 5},
    "image_bytes": {"dist": "constant", "value": 5000},
    "server_delay_ms": {"dist": "constant", "value": 0},
}  # fmt: skip

# The bookstore's size. TPC-W scales customers with the browsers (2880 each) and has 1 000 to
# 10 million items; a small store keeps the population to a second: what matters here is that
# every page is built from real queries, not the store's size.
ITEMS = 1000
AUTHORS = ITEMS // 4
CUSTOMERS = 2880
ORDERS = CUSTOMERS * 9 // 10
SUBJECTS = (
    "ARTS", "BIOGRAPHIES", "BUSINESS", "CHILDREN", "COMPUTERS", "COOKING", "HEALTH", "HISTORY",
    "HOME", "HUMOR", "LITERATURE", "MYSTERY", "NON-FICTION", "PARENTING", "POLITICS",
    "REFERENCE", "RELIGION", "ROMANCE", "SELF-HELP", "SCIENCE-NATURE", "SCIENCE-FICTION",
    "SPORTS", "YOUTH", "TRAVEL",
)  # fmt: skip
SYLLABLES = ("ba", "ri", "to", "nel", "sa", "mor", "ka", "lin", "de", "vo", "ster", "ann")


def draw(dist: Mapping[str, Any], rng: random.Random) -> float:
    """One value of a scenario distribution (docs/scenario.md, "Distributions")."""
    kind = dist["dist"]
    if kind == "constant":
        return float(dist["value"])
    if kind == "exponential":
        return rng.expovariate(1.0 / dist["mean"]) if dist["mean"] > 0 else 0.0
    if kind == "uniform":
        return dist["low"] + (dist["high"] - dist["low"]) * rng.random()
    if kind == "lomax":
        s, a, h = dist["scale"], dist["shape"], dist["max"]
        f_h = 1 - (1 + h / s) ** -a
        u = rng.random() * f_h
        return max(1.0, s * ((1 - u) ** (-1 / a) - 1))
    if kind == "pareto":
        k = dist["mean"] * (dist["shape"] - 1) / dist["shape"]
        return float(k * (1 - rng.random()) ** (-1 / dist["shape"]))
    if kind == "bounded_pareto":
        lo, hi, a = dist["low"], dist["high"], dist["shape"]
        u = rng.random()
        return float((-(u * hi**a - u * lo**a - hi**a) / (hi**a * lo**a)) ** (-1 / a))
    if kind in ("discrete", "mixture"):
        items = dist["values"] if kind == "discrete" else dist["parts"]
        pick = rng.choices(range(len(items)), weights=dist["weights"])[0]
        return float(items[pick]) if kind == "discrete" else draw(items[pick], rng)
    raise ValueError(f"distribution {kind!r}: unknown")


def size(dist: Mapping[str, Any], rng: random.Random) -> int:
    """A size in whole bytes (rounded up), at least 1, as the simulator's ``sample_bytes``."""
    return max(1, math.ceil(draw(dist, rng)))


def next_interaction(state: str, rng: random.Random) -> str:
    """The next interaction after ``state`` (the browsing mix)."""
    row = TRANSITIONS[state]
    u = rng.random() * sum(p for _, p in row)
    for to, p in row:
        if u < p:
            return to
        u -= p
    return row[-1][0]


# --- the database tier ---------------------------------------------------------------------

# The bookstore's tables, in SQL both SQLite and MariaDB take: indexed strings are VARCHAR
# (MariaDB indexes no TEXT without a prefix length; SQLite gives both TEXT affinity), REAL is
# a double in both. The one difference, orders' automatic key, is the dialect's.
SCHEMA = """
CREATE TABLE author (a_id INTEGER PRIMARY KEY, a_fname VARCHAR(20), a_lname VARCHAR(20),
    a_bio TEXT);
CREATE TABLE item (i_id INTEGER PRIMARY KEY, i_title VARCHAR(60), i_a_id INTEGER,
    i_pub_date VARCHAR(10), i_subject VARCHAR(20), i_desc TEXT, i_related1 INTEGER,
    i_thumbnail VARCHAR(40), i_image VARCHAR(40), i_srp REAL, i_cost REAL, i_stock INTEGER,
    i_isbn VARCHAR(13), i_page INTEGER);
CREATE TABLE customer (c_id INTEGER PRIMARY KEY, c_uname VARCHAR(20) UNIQUE,
    c_fname VARCHAR(20), c_lname VARCHAR(20), c_addr_id INTEGER, c_email VARCHAR(40),
    c_discount REAL, c_balance REAL);
CREATE TABLE address (addr_id INTEGER PRIMARY KEY, addr_street VARCHAR(40),
    addr_city VARCHAR(20), addr_zip VARCHAR(10), addr_co_id INTEGER);
CREATE TABLE orders (o_id INTEGER PRIMARY KEY{autoincrement}, o_c_id INTEGER,
    o_date VARCHAR(10), o_total REAL, o_status VARCHAR(12));
CREATE TABLE order_line (ol_id INTEGER, ol_o_id INTEGER, ol_i_id INTEGER, ol_qty INTEGER,
    PRIMARY KEY (ol_o_id, ol_id));
CREATE TABLE cart_line (scl_sc_id INTEGER, scl_i_id INTEGER, scl_qty INTEGER,
    PRIMARY KEY (scl_sc_id, scl_i_id));
CREATE INDEX item_subject ON item (i_subject, i_pub_date);
CREATE INDEX item_title ON item (i_title);
CREATE INDEX orders_customer ON orders (o_c_id, o_date);
CREATE INDEX order_line_item ON order_line (ol_i_id);
"""
TABLES = ("author", "item", "address", "customer", "orders", "order_line")
"""The populated tables, in the order :func:`bookstore_rows` draws them."""

DIALECTS: dict[str, dict[str, str]] = {
    # The SQL that differs between the engines; every other statement is the same text.
    "sqlite": {
        "param": "?",
        "autoincrement": "",  # an INTEGER PRIMARY KEY is the rowid
        "cart_add": "ON CONFLICT (scl_sc_id, scl_i_id) DO UPDATE SET scl_qty = scl_qty + 1",
    },
    "mariadb": {
        "param": "%s",  # PyMySQL's paramstyle ("format")
        "autoincrement": " AUTO_INCREMENT",
        "cart_add": "ON DUPLICATE KEY UPDATE scl_qty = scl_qty + 1",
    },
}
MARIADB_DEADLOCK = (1205, 1213)
"""MariaDB's lock wait timeout and deadlock errors: the transaction is rolled back and run
again (concurrent Buy Confirms lower the stock of the same items)."""


class Database:
    """One connection to the bookstore, SQLite (``sqlite3``) or MariaDB (PyMySQL), through which
    every statement goes: statements are written with ``?`` placeholders and rewritten to the
    connection's paramstyle here, the one place the dialects' parameters differ."""

    def __init__(self, conn: Any, dialect: str) -> None:
        self.conn, self.dialect = conn, dialect
        self.d = DIALECTS[dialect]

    @classmethod
    def open(cls, url: str) -> Database:
        """``mariadb://HOST:PORT/NAME``, ``mariadb:///NAME?socket=PATH`` or an SQLite path."""
        if not url.startswith("mariadb://"):
            conn = sqlite3.connect(url, isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.isolation_level = ""
            return cls(conn, "sqlite")
        import pymysql  # the [mariadb] extra; only the MariaDB tier needs it

        rest, _, opts = url[len("mariadb://"):].partition("?")
        where, _, name = rest.partition("/")
        host, _, port = where.partition(":")
        # Autocommit: each read sees the latest rows (InnoDB's repeatable read would hold a
        # connection's first snapshot); the writes are explicit transactions.
        kw: dict[str, Any] = {"user": "root", "database": name or None, "charset": "utf8mb4",
                              "autocommit": True}
        socket_path = dict(kv.partition("=")[::2] for kv in opts.split("&") if kv).get("socket")
        if socket_path:
            kw["unix_socket"] = socket_path
        else:
            kw.update(host=host, port=int(port or 3306))
        return cls(pymysql.connect(**kw), "mariadb")

    def sql(self, text: str) -> str:
        return text if self.d["param"] == "?" else text.replace("?", self.d["param"])

    def query(self, text: str, params: Sequence[Any] = ()) -> list[tuple]:
        cur = self.conn.cursor()
        cur.execute(self.sql(text), tuple(params))
        return [tuple(r) for r in cur.fetchall()]

    def execute(self, text: str, params: Sequence[Any] = ()) -> int | None:
        """Runs a statement; returns the row id it inserted (if any)."""
        cur = self.conn.cursor()
        cur.execute(self.sql(text), tuple(params))
        return cur.lastrowid

    def executemany(self, text: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.conn.cursor().executemany(self.sql(text), rows)

    def script(self, text: str) -> None:
        for statement in text.split(";"):
            if statement.strip():
                self.execute(statement)

    def commit(self) -> None:
        self.conn.commit()

    def close(self) -> None:
        self.conn.close()

    def transaction(self, work: Callable[[Database], list[tuple]]) -> list[tuple]:
        """``work(self)`` then commit; on MariaDB a deadlock rolls back and runs it again."""
        for attempt in range(5):
            try:
                if self.dialect == "mariadb":
                    self.conn.begin()
                rows = work(self)
                self.commit()
                return rows
            except Exception as e:
                self.conn.rollback()
                code = e.args[0] if e.args else None
                if self.dialect != "mariadb" or code not in MARIADB_DEADLOCK or attempt == 4:
                    raise
        raise AssertionError("unreachable")


def _word(rng: random.Random, n: int = 3) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(n)).capitalize()


def bookstore_rows(seed: int | str) -> dict[str, list[tuple]]:
    """The bookstore's rows from ``seed``, table by table (the same seed, the same rows)."""
    rng = random.Random(f"{seed}/bookstore")
    rows: dict[str, list[tuple]] = {}
    rows["author"] = [
        (a, _word(rng, 2), _word(rng), " ".join(_word(rng) for _ in range(20)))
        for a in range(1, AUTHORS + 1)]
    rows["item"] = [
        (i, " ".join(_word(rng) for _ in range(rng.randint(1, 4))), rng.randint(1, AUTHORS),
         f"{rng.randint(1930, 2004)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
         rng.choice(SUBJECTS), " ".join(_word(rng) for _ in range(rng.randint(20, 60))),
         rng.randint(1, ITEMS), f"img{i % 100}/thumb_{i}.gif", f"img{i % 100}/image_{i}.gif",
         round(rng.uniform(1, 1000), 2), round(rng.uniform(1, 1000), 2), rng.randint(10, 30),
         f"{rng.randrange(10**13):013d}", rng.randint(20, 9999))
        for i in range(1, ITEMS + 1)]
    rows["address"] = [
        (c, f"{rng.randint(1, 999)} {_word(rng)} St", _word(rng), f"{rng.randint(10000, 99999)}",
         rng.randint(1, 92)) for c in range(1, CUSTOMERS + 1)]
    rows["customer"] = [
        (c, f"user{c}", _word(rng, 2), _word(rng), c, f"user{c}@example.org",
         round(rng.uniform(0, 0.5), 2), 0.0) for c in range(1, CUSTOMERS + 1)]
    rows["orders"], rows["order_line"] = [], []
    for o in range(1, ORDERS + 1):
        rows["orders"].append((o, rng.randint(1, CUSTOMERS),
                               f"2004-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                               round(rng.uniform(10, 5000), 2),
                               rng.choice(("PROCESSING", "SHIPPED"))))
        rows["order_line"] += [(k, o, rng.randint(1, ITEMS), rng.randint(1, 300))
                               for k in range(1, rng.randint(1, 5) + 1)]
    return rows


def populate_database(db: Database, seed: int | str) -> dict[str, int]:
    """Creates the bookstore's tables in ``db`` and fills them from ``seed``; returns the row
    counts. One code path for both engines: the schema's and the statements' dialect
    differences are :data:`DIALECTS`'."""
    db.script(SCHEMA.format(autoincrement=db.d["autoincrement"]))
    for table, rows in bookstore_rows(seed).items():
        db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
    db.commit()
    return {t: db.query(f"SELECT count(*) FROM {t}")[0][0] for t in TABLES}


def populate_server(url: str, seed: int | str, timeout_s: float = 60.0) -> dict[str, Any]:
    """Waits until the MariaDB server of ``url`` (``mariadb://...``) accepts connections,
    creates the database ``url`` names and fills it from ``seed``; returns the server's version
    and the row counts. (Run by the agent in the database's host: ``populate URL SEED``.)"""
    import pymysql

    base, _, opts = url.partition("?")
    server, _, name = base.rpartition("/")
    admin_url = f"{server}/" + (f"?{opts}" if opts else "")
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            admin = Database.open(admin_url)
            break
        except pymysql.err.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    try:
        version = admin.query("SELECT version()")[0][0]
        admin.execute(f"CREATE DATABASE {name}")
    finally:
        admin.close()
    db = Database.open(url)
    try:
        return {"version": version, "rows": populate_database(db, seed)}
    finally:
        db.close()


def populate(path: str, seed: int | str) -> dict[str, int]:
    """Creates the bookstore database at ``path`` (SQLite) from ``seed``; returns the row
    counts."""
    db = Database.open(path)
    try:
        return populate_database(db, seed)
    finally:
        db.close()


def _arg(query: Mapping[str, str], key: str, default: int) -> int:
    try:
        return int(query.get(key, default))
    except ValueError:
        return default


def _page_rows(db: Database, page: str, q: Mapping[str, str]) -> list[tuple]:
    """The rows of one interaction's queries (after TPC-W's pages, much simplified)."""
    i_id = _arg(q, "i_id", 1)
    c_id = _arg(q, "c_id", 1)
    sc_id = _arg(q, "sc_id", 1)
    subject = q.get("subject", SUBJECTS[0])
    today = time.strftime("%Y-%m-%d", time.gmtime())
    promo = "SELECT i_id, i_thumbnail FROM item WHERE i_id IN (?, ?, ?, ?, ?)"
    related = [(i_id + k * 97) % ITEMS + 1 for k in range(5)]
    if page in ("home", "search_request"):
        rows = db.query("SELECT c_fname, c_lname FROM customer WHERE c_id = ?", (c_id,))
        return rows + db.query(promo, related)
    if page == "new_products":
        return db.query(
            "SELECT i_id, i_title, a_fname, a_lname FROM item JOIN author ON i_a_id = a_id "
            "WHERE i_subject = ? ORDER BY i_pub_date DESC, i_title LIMIT 50", (subject,))
    if page == "best_sellers":
        return db.query(
            "SELECT i_id, i_title, a_fname, a_lname, sum(ol_qty) AS qty FROM order_line "
            "JOIN item ON ol_i_id = i_id JOIN author ON i_a_id = a_id "
            "WHERE ol_o_id > (SELECT max(o_id) - 3333 FROM orders) AND i_subject = ? "
            "GROUP BY i_id ORDER BY qty DESC LIMIT 50", (subject,))
    if page in ("product_detail", "admin_request"):
        return db.query("SELECT * FROM item JOIN author ON i_a_id = a_id WHERE i_id = ?",
                        (i_id,))
    if page == "search_results":
        return db.query(
            "SELECT i_id, i_title, a_fname, a_lname FROM item JOIN author ON i_a_id = a_id "
            "WHERE i_title LIKE ? ORDER BY i_title LIMIT 50", (q.get("term", "Ba") + "%",))
    if page == "shopping_cart":
        def add(db: Database) -> list[tuple]:
            db.execute(f"INSERT INTO cart_line VALUES (?, ?, 1) {db.d['cart_add']}",
                       (sc_id, i_id))
            return []

        db.transaction(add)
        return db.query("SELECT scl_i_id, scl_qty, i_title, i_cost FROM cart_line JOIN item "
                        "ON scl_i_id = i_id WHERE scl_sc_id = ?", (sc_id,))
    if page in ("customer_registration", "buy_request"):
        return db.query("SELECT * FROM customer JOIN address ON c_addr_id = addr_id "
                        "WHERE c_id = ?", (c_id,))
    if page == "buy_confirm":
        def buy(db: Database) -> list[tuple]:
            cart = db.query("SELECT scl_i_id, scl_qty, i_cost FROM cart_line JOIN item ON "
                            "scl_i_id = i_id WHERE scl_sc_id = ? ORDER BY scl_i_id", (sc_id,))
            o_id = db.execute("INSERT INTO orders (o_c_id, o_date, o_total, o_status) VALUES "
                              "(?, ?, ?, 'PENDING')",
                              (c_id, today, sum(qty * cost for _, qty, cost in cart)))
            db.executemany("INSERT INTO order_line VALUES (?, ?, ?, ?)",
                           [(k, o_id, item, qty) for k, (item, qty, _) in enumerate(cart, 1)])
            db.executemany("UPDATE item SET i_stock = i_stock - ? WHERE i_id = ?",
                           [(qty, item) for item, qty, _ in cart])
            db.execute("DELETE FROM cart_line WHERE scl_sc_id = ?", (sc_id,))
            return cart

        return db.transaction(buy)
    if page == "order_inquiry":
        return db.query("SELECT c_uname FROM customer WHERE c_id = ?", (c_id,))
    if page == "order_display":
        return db.query(
            "SELECT o_id, o_date, o_total, o_status, ol_i_id, ol_qty, i_title FROM orders "
            "JOIN order_line ON ol_o_id = o_id JOIN item ON ol_i_id = i_id WHERE o_id = "
            "(SELECT max(o_id) FROM orders WHERE o_c_id = ?)", (c_id,))
    if page == "admin_confirm":
        def update(db: Database) -> list[tuple]:
            db.execute("UPDATE item SET i_cost = i_cost * 0.99, i_pub_date = ? WHERE i_id = ?",
                       (today, i_id))
            return []

        db.transaction(update)
        return db.query("SELECT * FROM item WHERE i_id = ?", (i_id,))
    raise KeyError(page)


def render(page: str, rows: list[tuple], nbytes: int) -> bytes:
    """The page's HTML from its rows, cut or padded to ``nbytes``."""
    body = "".join("<tr>" + "".join(f"<td>{v}</td>" for v in row) + "</tr>\n" for row in rows)
    html = (f"<html><head><title>TPC-W {page}</title></head><body><h1>{page}</h1>\n"
            f"<table>\n{body}</table>\n").encode()
    tail = b"</body></html>\n"
    if len(html) + len(tail) >= nbytes:
        return (html + tail)[:nbytes]
    return html + b" " * (nbytes - len(html) - len(tail)) + tail


def _image(item: int, nbytes: int) -> bytes:
    head = b"GIF89a" + item.to_bytes(4, "big")
    return (head + bytes(range(256)) * (nbytes // 256 + 1))[:nbytes]


class WebStats:
    """Per-request server times of the web tier (ms): handling (from the request's last byte
    to the response handed to the socket, server delay excluded) and database."""

    def __init__(self) -> None:
        self.server_ms: list[float] = []
        self.db_ms: list[float] = []
        self.pages: dict[str, int] = {}
        self.page_db_ms: dict[str, float] = {}  # summed database time by page type
        self.images = 0
        self.database = "sqlite"

    def summary(self, wall_s: float) -> dict[str, Any]:
        def q(xs: list[float], f: float) -> float | None:
            return sorted(xs)[min(len(xs) - 1, int(f * len(xs)))] if xs else None

        n = len(self.server_ms)
        return {
            "requests": n, "pages": self.pages, "images": self.images, "wall_s": wall_s,
            "database": self.database,
            "server_ms_mean": sum(self.server_ms) / n if n else None,
            "server_ms_p99": q(self.server_ms, 0.99), "server_ms_max": max(self.server_ms or [0]),
            "db_ms_mean": sum(self.db_ms) / len(self.db_ms) if self.db_ms else None,
            "db_ms_p99": q(self.db_ms, 0.99), "db_ms_max": max(self.db_ms or [0]),
            "db_ms_mean_by_page": {p: t / self.pages[p] for p, t in self.page_db_ms.items()},
            # The share of the run the web tier spent handling requests (one thread).
            "busy_fraction": sum(self.server_ms) / 1e3 / wall_s if wall_s > 0 else None,
            "db_busy_fraction": sum(self.db_ms) / 1e3 / wall_s if wall_s > 0 else None,
        }


def response(status: str, body: bytes, ctype: str, total: int | None = None) -> bytes:
    """An HTTP/1.1 response; with ``total``, the body is cut or padded so the whole response
    (headers included) is ``total`` bytes where it can be."""
    def head(n: int) -> bytes:
        return (f"HTTP/1.1 {status}\r\nServer: ecnlab-tpcw\r\nContent-Type: {ctype}\r\n"
                f"Content-Length: {n:010d}\r\n\r\n").encode()

    if total is not None:
        n = max(0, total - len(head(0)))
        body = (body + b" " * n)[:n]
    return head(len(body)) + body


def parse_target(target: str) -> tuple[str, dict[str, str]]:
    path, _, qs = target.partition("?")
    query = dict(kv.partition("=")[::2] for kv in qs.split("&") if kv)
    return path, query


async def serve_until_stopped(handle: Callable, port: int,
                              open_conns: dict[int, tuple[Any, dict]],
                              record: Callable[[Any, dict], None]) -> None:
    """Serves ``handle`` on ``port`` (every address), says "ready", and at SIGTERM or SIGINT
    stops listening and records each connection still open (``record(sock, row)``)."""
    server = await asyncio.start_server(handle, "0.0.0.0", port, backlog=1024)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    print("ready", flush=True)
    await stop.wait()
    server.close()
    for flow in list(open_conns):
        sock, row = open_conns.pop(flow)
        record(sock, row)


class PageQueries:
    """The web tier's access to the database: :func:`_page_rows` and its time (ms).

    SQLite is a library call on the event loop (sub-millisecond, as before). MariaDB is a
    network round trip per statement, so the pages' queries run in a pool of threads, each
    with its own connection, and the loop serves other requests meanwhile; the time is the
    queries' own, measured in the thread (a wait for a free thread is not in it)."""

    THREADS = 8

    def __init__(self, url: str) -> None:
        self.url = url
        self.mariadb = url.startswith("mariadb://")
        self.pool: Any = None
        if self.mariadb:
            import concurrent.futures
            import threading

            self.local = threading.local()
            self.pool = concurrent.futures.ThreadPoolExecutor(self.THREADS)
            # Every thread's connection now (the barrier holds each thread to one), so the
            # first pages do not pay for them and a database that cannot be reached stops the
            # tier before it says "ready".
            barrier = threading.Barrier(self.THREADS)
            list(self.pool.map(lambda _: (self._db(), barrier.wait(30)), range(self.THREADS)))
        else:
            self.db = Database.open(url)

    def _db(self) -> Database:
        if self.pool is None:
            return self.db
        if getattr(self.local, "db", None) is None:
            self.local.db = Database.open(self.url)
        return self.local.db

    def _timed(self, page: str, query: Mapping[str, str]) -> tuple[list[tuple], float]:
        d = time.perf_counter()
        rows = _page_rows(self._db(), page, query)
        return rows, (time.perf_counter() - d) * 1e3

    async def rows(self, page: str, query: Mapping[str, str]) -> tuple[list[tuple], float]:
        if self.pool is None:
            return self._timed(page, query)
        return await asyncio.get_running_loop().run_in_executor(
            self.pool, self._timed, page, query)


async def serve_web(port: int, db_url: str, out: Any, stats_path: str,
                    tcp_info: Callable[[Any], dict], clamp: Callable[[Any, int], None]) -> None:
    """The web tier: HTTP/1.1 with persistent connections until SIGTERM; one JSON line per
    connection to ``out`` (its flow, from the browser's ``X-Flow`` header, and the server end's
    TCP_INFO), the per-request statistics to ``stats_path`` at the end. ``db_url``: the
    bookstore, an SQLite file or ``mariadb://HOST:PORT/NAME`` (:meth:`Database.open`)."""
    db = PageQueries(db_url)
    stats = WebStats()
    stats.database = "mariadb" if db.mariadb else "sqlite"
    open_conns: dict[int, tuple[Any, dict]] = {}
    started = time.monotonic()

    def record(sock: Any, row: dict) -> None:
        row.update({f"server_{k}": v for k, v in tcp_info(sock).items()})
        out.write(json.dumps(row) + "\n")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        row: dict = {"synack_retx": tcp_info(sock).get("total_retrans")}
        flow = -1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    break
                lines = head.decode("latin-1").split("\r\n")
                _, target, _ = lines[0].split(" ", 2)
                headers = {k.lower(): v.strip() for k, _, v in
                           (h.partition(":") for h in lines[1:] if h)}
                if flow < 0 and "x-flow" in headers:
                    flow = int(headers["x-flow"])
                    clamp(sock, int(headers.get("x-rwnd", 0)))
                    row["flow"] = flow
                    open_conns[flow] = (sock, row)
                t = time.perf_counter()
                path, query = parse_target(target)
                total = _arg(query, "bytes", 0) or None
                delay_us = _arg(query, "delay_us", 0)
                if path.startswith("/img/"):
                    stats.images += 1
                    data = response("200 OK", _image(_arg(query, "i_id", 0), total or 5000),
                                    "image/gif", total)
                elif path.lstrip("/") in TRANSITIONS:
                    page = path.lstrip("/")
                    rows, db_ms = await db.rows(page, query)
                    stats.db_ms.append(db_ms)
                    stats.pages[page] = stats.pages.get(page, 0) + 1
                    stats.page_db_ms[page] = stats.page_db_ms.get(page, 0.0) + db_ms
                    data = response("200 OK", render(page, rows, total or 8000), "text/html",
                                    total)
                else:
                    data = response("404 Not Found", b"not found\n", "text/plain", total)
                built = time.perf_counter() - t
                if delay_us:
                    await asyncio.sleep(delay_us / 1e6)
                t = time.perf_counter()
                writer.write(data)
                stats.server_ms.append((built + time.perf_counter() - t) * 1e3)
                await writer.drain()
        except (ConnectionError, OSError, ValueError):
            pass
        finally:
            if open_conns.pop(flow, None) is not None:
                record(sock, row)
            writer.close()

    await serve_until_stopped(handle, port, open_conns, record)
    with open(stats_path, "w") as f:  # noqa: ASYNC230 (once, at the end)
        json.dump(stats.summary(time.monotonic() - started), f)
    out.flush()
    # Everything is recorded; the database is the run's scratch copy. Exit now rather than
    # cancel every connection's task and checkpoint the database on a loaded machine.
    os._exit(0)


# --- the browser emulator ------------------------------------------------------------------


class Browser:
    """One emulated browser: sessions on persistent connections, the browsing mix, think
    times, a page's images on the page's connection (tpcw.rs's model).

    Its draws come from its own stream in the simulator's order: per session the minimum
    duration, then per page the HTML's request size, response size and server delay, the
    image count, each image's three; after a page the think time, then the next interaction.
    The query parameters (items, subjects, search terms) come from a second stream, so they
    do not shift the first.
    """

    def __init__(self, b: Mapping[str, Any], params: Mapping[str, Any]) -> None:
        self.b = b
        self.p = {**DEFAULTS, **{k: v for k, v in params.items() if v is not None}}
        self.rng = random.Random(b["seed"])
        self.ids = random.Random(f"{b['seed']}/ids")
        self.state = "home"
        self.sessions = 0
        self.sc_id = 0
        self.c_id = 1

    def think(self) -> float:
        return min(self.rng.expovariate(1.0 / self.p["think_mean_s"]), self.p["think_max_s"])

    def session_min(self) -> float:
        return min(self.rng.expovariate(1.0 / self.p["session_min_mean_s"]),
                   self.p["session_min_max_s"])

    def start_session(self) -> float:
        """A new session at Home: fresh customer and cart; returns its minimum duration."""
        self.state = "home"
        self.sessions += 1
        self.c_id = self.ids.randint(1, CUSTOMERS)
        self.sc_id = self.b["browser"] * 10_000 + self.sessions
        return self.session_min()

    def page(self) -> list[tuple[str, int, int, float]]:
        """The current interaction's requests: (target, request bytes, response bytes, server
        delay ms), the page and then its images."""
        def sizes(resp: str) -> tuple[int, int, float]:
            return (size(self.p["request_bytes"], self.rng), size(self.p[resp], self.rng),
                    max(0.0, draw(self.p["server_delay_ms"], self.rng)))

        req, resp, delay = sizes("html_bytes")
        out = [(self.target(), req, resp, delay)]
        images = min(10_000, max(0, round(draw(self.p["images_per_page"], self.rng))))
        for _ in range(images):
            req, resp, delay = sizes("image_bytes")
            item = self.ids.randint(1, ITEMS)
            out.append((f"/img/thumb_{item}.gif?i_id={item}", req, resp, delay))
        return out

    def target(self) -> str:
        ids = self.ids
        q = {"c_id": self.c_id, "sc_id": self.sc_id, "i_id": ids.randint(1, ITEMS),
             "subject": ids.choice(SUBJECTS)}
        if self.state == "search_results":
            q["term"] = ids.choice(SYLLABLES).capitalize()
        return f"/{self.state}?" + "&".join(f"{k}={v}" for k, v in q.items())

    def after_page(self, since_session_s: float, session_min_s: float) -> tuple[float, bool]:
        """After a whole page: the think time, and whether the session goes on (the walk's
        next interaction is set); a session ends at its first move to Home after its minimum
        duration."""
        think = self.think()
        nxt = next_interaction(self.state, self.rng)
        if nxt == "home" and since_session_s >= session_min_s:
            return think, False
        self.state = nxt
        return think, True


def request(target: str, nbytes: int, response_bytes: int, delay_ms: float, flow: int,
            rwnd: int) -> bytes:
    """An HTTP/1.1 GET of ``nbytes`` bytes where it can be (padded with a header)."""
    sep = "&" if "?" in target else "?"
    head = (f"GET {target}{sep}bytes={response_bytes}&delay_us={round(delay_ms * 1000)} "
            f"HTTP/1.1\r\nHost: bookstore\r\nX-Flow: {flow}\r\nX-Rwnd: {rwnd}\r\n")
    pad = nbytes - len(head) - len("X-Pad: \r\n\r\n")
    if pad > 0:
        head += "X-Pad: " + "x" * pad + "\r\n"
    return (head + "\r\n").encode()


async def read_response(reader: asyncio.StreamReader) -> int:
    """Reads one response; returns its size in bytes (headers included)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    await reader.readexactly(length)
    return len(head) + length
