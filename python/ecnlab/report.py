"""One self-contained HTML page for a sweep: figures, tables, the definition, versions.

Figures are embedded as base64 PNG ``data:`` URLs and the styles are inline, so the page opens
from disk with no server and can be mailed as one file. Figures that do not apply (no
exchanges, no bulk flows) are left out; a figure that fails is replaced by its error, so one
odd run never costs the whole report.
"""

from __future__ import annotations

import base64
import datetime
import html
import io
import json
import platform
from pathlib import Path
from typing import Any

import duckdb
import matplotlib
import pandas as pd
import pyarrow

from . import _core, plots
from .store import PathLike, open_results

__all__ = ["figure_html", "html_page", "html_table", "versions_html", "write_page", "write_report"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; }
img { max-width: 100%; }
pre { background: #f7f7f7; padding: 1em; overflow-x: auto; font-size: 0.85em; }
.error { color: #a00; }
"""

_SUMMARY_METRICS = (
    "utilization_down",
    "loss_rate_down",
    "mark_rate_down",
    "mean_response_time_s",
    "goodput_bps",
    "mean_queue_pkts_down",
)


def write_report(results: PathLike, out: PathLike | None = None) -> Path:
    """Write the report of the sweep folder ``results`` to ``out`` (default
    ``results/report.html``), atomically. Returns the path written.

    Raises:
        FileNotFoundError, CorruptRunError: as :func:`ecnlab.open_results`.
    """
    root = Path(results)
    con = open_results(root)
    target = Path(out) if out is not None else root / "report.html"
    write_page(target, _page(con, root))
    return target


def write_page(target: Path, page: str) -> None:
    """Write an HTML page atomically (a reader never sees half a page)."""
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(target)


def html_page(title: str, parts: list[str]) -> str:
    """A self-contained HTML document: ``title`` as its title, ``parts`` as its body."""
    body = "\n".join(parts)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )


def _page(con: duckdb.DuckDBPyConnection, root: Path) -> str:
    name = con.execute("SELECT name FROM sweep").fetchone()
    title = f"ecnlab sweep report: {name[0] if name else root.name}"
    parts = [f"<h1>{html.escape(title)}</h1>", _status(con)]
    has = {t: _count(con, t) for t in ("exchanges", "flows", "links", "sojourn")}
    bulk = has["flows"] and _scalar(con, "SELECT count(*) FROM flows WHERE kind = 'bulk'")

    parts.append("<h2>Summary (mean ± 95% CI across seeds)</h2>")
    parts.append(_summary_table(con))
    if has["links"]:
        parts.append("<h2>Normalized throughput (%)</h2>")
        parts.append(_guard(lambda: html_table(plots.throughput_frame(con), digits=2)))
    figures = []
    if has["exchanges"]:
        figures += [
            ("Response-time CDF (up to 2 s)", "cdf"),
            ("Response-time CCDF", "ccdf"),
        ]
    if has["sojourn"]:
        figures.append(("Queueing-delay CDF", "queue"))
    if bulk:
        figures += [("Goodput by flow group", "goodput"), ("Fairness against flows", "fairness")]
    for heading, kind in figures:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts.append(_guard(lambda kind=kind: figure_html(plots.plot(con, kind), kind)))
    parts.append("<h2>Runs</h2>")
    parts.append(_runs_table(con))
    parts.append("<h2>Sweep definition</h2>")
    definition = con.execute("SELECT definition FROM sweep").fetchone()
    text = json.dumps(json.loads(definition[0]), indent=2) if definition and definition[0] else "-"
    parts.append(f"<pre>{html.escape(text)}</pre>")
    parts.append("<h2>Versions</h2>")
    parts.append(versions_html())
    return html_page(title, parts)


def _scalar(con: duckdb.DuckDBPyConnection, sql: str) -> Any:
    row = con.execute(sql).fetchone()
    return row[0] if row else None


def _count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    try:
        return int(_scalar(con, f"SELECT count(*) FROM {table}") or 0)
    except duckdb.CatalogException:
        return 0  # no stored run has this table


def _status(con: duckdb.DuckDBPyConnection) -> str:
    counts = dict(con.execute("SELECT status, count(*) FROM runs GROUP BY 1").fetchall())
    text = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no runs"
    return f"<p>Runs: {html.escape(text)}.</p>"


def _summary_table(con: duckdb.DuckDBPyConnection) -> str:
    from . import analysis

    axes = [
        r[0]
        for r in con.execute("SELECT DISTINCT axis, axis_index FROM axes ORDER BY 2").fetchall()
    ]
    runs = con.execute("SELECT * FROM runs WHERE status = 'done'").df()
    if runs.empty:
        return "<p>No completed runs.</p>"
    metrics = [m for m in _SUMMARY_METRICS if m in runs.columns]
    keys = ["reference", *(f"{a}_label" for a in axes)]
    runs[metrics] = runs[metrics].astype(float)
    stats = analysis.mean_ci(runs, metrics, keys)
    shown = stats[keys].copy()
    for m in metrics:
        shown[m] = [
            f"{mean:.4g} ± {ci:.2g}" if pd.notna(ci) else f"{mean:.4g}"
            for mean, ci in zip(stats[f"{m}_mean"], stats[f"{m}_ci"])
        ]
    shown["seeds"] = stats[f"{metrics[0]}_n"] if metrics else 0
    shown.columns = [c.removesuffix("_label") for c in shown.columns]
    return html_table(shown.set_index(list(shown.columns[: len(keys)])))


def _runs_table(con: duckdb.DuckDBPyConnection) -> str:
    axes = [
        r[0]
        for r in con.execute("SELECT DISTINCT axis, axis_index FROM axes ORDER BY 2").fetchall()
    ]
    cols = ["run_id", "seed", "reference", "status", *(f'"{a}_label"' for a in axes), "error"]
    runs = con.execute(f"SELECT {', '.join(cols)} FROM runs ORDER BY ALL").df()
    return html_table(runs.set_index("run_id"))


def html_table(frame: pd.DataFrame, digits: int | None = None) -> str:
    """A DataFrame as an HTML table (escaped, ``-`` for missing values)."""
    if digits is not None:
        frame = frame.round(digits)
    return frame.to_html(border=0, na_rep="-", escape=True)


def figure_html(fig: Any, kind: str) -> str:
    """A matplotlib figure as an embedded PNG ``<img>`` (``kind`` is its alt text)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f"<img class='figure' alt='{kind}' src='data:image/png;base64,{data}'>"


def _guard(make: Any) -> str:
    try:
        return str(make())
    except (ValueError, KeyError, duckdb.Error) as e:
        return f"<p class='error'>not available: {html.escape(str(e))}</p>"


def versions_html() -> str:
    """A table of the versions of ecnlab, Python and the libraries, and the time written."""
    rows = {
        "ecnlab": _core.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "duckdb": duckdb.__version__,
        "pyarrow": pyarrow.__version__,
        "pandas": pd.__version__,
        "matplotlib": matplotlib.__version__,
        "report written": datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"
        ),
    }
    body = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows.items()
    )
    return f"<table>{body}</table>"
