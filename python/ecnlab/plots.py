"""Figures in the style of the seed studies, from a sweep folder (matplotlib, no display).

Every function takes a DuckDB connection from :func:`ecnlab.open_results` and returns a
``matplotlib.figure.Figure`` (built without pyplot, so nothing opens a window and no global
backend is touched). ``by`` names the axis drawn as separate curves or bars, ``facet`` the axis
drawn as separate panels; other axes are pooled. Runs of the sweep's ``[reference]`` are drawn
as a dashed black curve in the panel of their facet value.

Kinds (``ecnlab plot DIR --kind KIND``): ``cdf`` (response times up to 2 s, seed 000/004),
``ccdf`` (log-log), ``queue`` (queueing-delay CDF), ``goodput`` (goodput by flow group with
confidence intervals), ``fairness`` (Jain's index against the number of flows), ``throughput``
(normalized throughput table).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, TypeVar

import duckdb
import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import analysis

__all__ = [
    "KINDS",
    "fairness_vs_flows",
    "goodput_by_group",
    "normalized_throughput_table",
    "plot",
    "queueing_delay_cdf",
    "response_time_ccdf",
    "response_time_cdf",
    "throughput_frame",
]

_PANEL_W, _PANEL_H = 4.8, 3.6
_F = TypeVar("_F", bound=Callable[..., Any])


def _literal_text(function: _F) -> _F:
    """Draw every text the figure gets from the sweep (axis names, labels, values) as it is:
    matplotlib would parse text between two ``$`` as math, and a label such as
    ``$\\nosuchcmd{$`` would fail the figure. Texts are created inside the call, so they keep
    the setting when the figure is saved later."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with matplotlib.rc_context({"text.parse_math": False}):
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


_REFERENCE_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.4}


# --- axis bookkeeping -------------------------------------------------------------------


def _axes(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """Axis name -> labels in the sweep's order."""
    rows = con.execute("SELECT axis, label FROM axes ORDER BY axis_index, position").fetchall()
    out: dict[str, list[str]] = {}
    for axis, label in rows:
        out.setdefault(axis, []).append(label)
    return out


def _choose(
    con: duckdb.DuckDBPyConnection, by: str | None, facet: str | None
) -> tuple[str | None, str | None, dict[str, list[str]]]:
    axes = _axes(con)
    for name in (by, facet):
        if name is not None and name not in axes:
            raise ValueError(f"{name!r} is not an axis of this sweep ({', '.join(axes) or 'none'})")
    names = list(axes)
    if by is None and facet is None and names:
        by = names[-1]
        facet = names[0] if len(names) > 1 else None
    return by, facet, axes


def _label_cols(by: str | None, facet: str | None) -> list[str]:
    return [f"{a}_label" for a in (facet, by) if a]


def _panels(n: int, *, log: bool = False) -> tuple[Figure, list[Any]]:
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(_PANEL_W * cols, _PANEL_H * rows), layout="constrained")
    grid = fig.subplots(rows, cols, squeeze=False)
    panels = [ax for row in grid for ax in row]
    for ax in panels[n:]:
        ax.set_visible(False)
    for ax in panels[:n]:
        ax.grid(True, which="both" if log else "major", alpha=0.3)
    return fig, panels[:n]


def _legend(ax: Any, title: str | None) -> None:
    if ax.get_legend_handles_labels()[0]:
        ax.legend(title=title, fontsize="small")


def _facet_values(axes: dict[str, list[str]], facet: str | None) -> list[str | None]:
    return list(axes[facet]) if facet else [None]


# --- response times ------------------------------------------------------------------------


@_literal_text
def response_time_cdf(
    con: duckdb.DuckDBPyConnection,
    by: str | None = None,
    facet: str | None = None,
    *,
    max_s: float = 2.0,
) -> Figure:
    """CDF of response times up to ``max_s`` (ms on x, cumulative % on y), one panel per
    facet value, one curve per ``by`` value, the reference runs dashed."""
    return _response_times(con, by, facet, complementary=False, max_s=max_s)


@_literal_text
def response_time_ccdf(
    con: duckdb.DuckDBPyConnection, by: str | None = None, facet: str | None = None
) -> Figure:
    """CCDF ``P(X > x)`` of response times on log-log axes (seed 000 Fig. 12)."""
    return _response_times(con, by, facet, complementary=True, max_s=None)


def _response_times(
    con: duckdb.DuckDBPyConnection,
    by: str | None,
    facet: str | None,
    *,
    complementary: bool,
    max_s: float | None,
) -> Figure:
    by, facet, axes = _choose(con, by, facet)
    cols = ", ".join(
        ["reference", *_label_cols(by, facet), "response_time_s", "elapsed_s", "completed"]
    )
    data = con.execute(f"SELECT {cols} FROM exchanges").df()
    facets = _facet_values(axes, facet)
    fig, panels = _panels(len(facets), log=complementary)
    for ax, fv in zip(panels, facets):
        here = data if fv is None else data[data[f"{facet}_label"] == fv]
        runs = here[~here["reference"]]
        for bv in axes[by] if by else [None]:
            part = runs if bv is None else runs[runs[f"{by}_label"] == bv]
            _curve(ax, part, complementary, label=bv or "all runs")
        ref = here[here["reference"]]
        if len(ref):
            _curve(ax, ref, complementary, label=_reference_label(con), **_REFERENCE_STYLE)
        if complementary:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("response time (ms)")
            ax.set_ylabel("complementary cumulative probability")
        else:
            ax.set_xlim(0, 1000 * (max_s or 2.0))
            ax.set_ylim(0, 100)
            ax.set_xlabel("response time (ms)")
            ax.set_ylabel("cumulative probability (%)")
        ax.set_title(f"{facet} = {fv}" if facet else "response times")
        _legend(ax, title=by)
    return fig


def _curve(ax: Any, part: pd.DataFrame, complementary: bool, *, label: str, **style: Any) -> None:
    curve = analysis.response_time_cdf(part, complementary=complementary)
    if curve.empty:
        return
    x = curve["response_time_s"] * 1000
    y = curve["p"] if complementary else 100 * curve["p"]
    ax.step(x, y, where="post", label=label, **style)


def _reference_label(con: duckdb.DuckDBPyConnection) -> str:
    row = con.execute("SELECT reference_label FROM sweep").fetchone()
    return str(row[0]) if row and row[0] else "reference"


# --- queueing delay ------------------------------------------------------------------------


@_literal_text
def queueing_delay_cdf(
    con: duckdb.DuckDBPyConnection,
    by: str | None = None,
    facet: str | None = None,
    *,
    link: str = "bottleneck_down",
) -> Figure:
    """CDF of the time packets waited in the bottleneck queue (sojourn histogram)."""
    by, facet, axes = _choose(con, by, facet)
    cols = ", ".join(["reference", *_label_cols(by, facet), "bin_end_ms", "packets"])
    data = con.execute(f"SELECT {cols} FROM sojourn WHERE link = ?", [link]).df()
    data = data[~data["reference"]]
    facets = _facet_values(axes, facet)
    fig, panels = _panels(len(facets))
    for ax, fv in zip(panels, facets):
        here = data if fv is None else data[data[f"{facet}_label"] == fv]
        for bv in axes[by] if by else [None]:
            part = here if bv is None else here[here[f"{by}_label"] == bv]
            curve = analysis.queueing_delay_cdf(part)
            if not curve.empty:
                ax.step(curve["delay_ms"], 100 * curve["p"], where="post", label=bv or "all runs")
        ax.set_xlabel(f"queueing delay at {link} (ms)")
        ax.set_ylabel("cumulative probability (%)")
        ax.set_ylim(0, 100)
        ax.set_xlim(left=0)
        ax.set_title(f"{facet} = {fv}" if facet else "queueing delay")
        _legend(ax, title=by)
    return fig


# --- goodput and fairness ---------------------------------------------------------------------


@_literal_text
def goodput_by_group(
    con: duckdb.DuckDBPyConnection,
    by: str | None = None,
    *,
    group: str = "workload",
) -> Figure:
    """Mean goodput per flow, by flow group (default: workload) and ``by`` axis, with
    Student-t 95% intervals across seeds (seed 001 Figs. 7-9)."""
    by, _, axes = _choose(con, by, None)
    label = f"{by}_label" if by else None
    cols = ", ".join(["run_id", *([label] if label else []), group, "goodput_bytes"])
    flows = con.execute(f"SELECT {cols} FROM flows WHERE NOT reference").df()
    window = dict(con.execute("SELECT run_id, window_s FROM runs").fetchall())
    flows["goodput_bps"] = flows["goodput_bytes"] * 8 / flows["run_id"].map(window)
    keys = [*([label] if label else []), group]
    per_run = flows.groupby([*keys, "run_id"], dropna=False)["goodput_bps"].mean().reset_index()
    stats = analysis.mean_ci(per_run, "goodput_bps", keys)
    groups = sorted(stats[group].unique())
    xs = axes[by] if by else ["all runs"]
    fig = Figure(
        figsize=(max(_PANEL_W, 1.2 * len(xs) * len(groups)), _PANEL_H), layout="constrained"
    )
    ax = fig.subplots()
    width = 0.8 / max(len(groups), 1)
    for i, g in enumerate(groups):
        part = stats[stats[group] == g]
        if label:
            part = part.set_index(label).reindex(xs)
        means = part["goodput_bps_mean"].to_numpy(dtype=float) / 1e6
        errors = np.nan_to_num(part["goodput_bps_ci"].to_numpy(dtype=float) / 1e6)
        positions = np.arange(len(xs)) + (i - (len(groups) - 1) / 2) * width
        ax.bar(positions, means, width, yerr=errors, capsize=3, label=f"{group} {g}")
    ax.set_xticks(np.arange(len(xs)), xs)
    ax.set_xlabel(by or "")
    ax.set_ylabel("mean goodput per flow (Mb/s)")
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


@_literal_text
def fairness_vs_flows(con: duckdb.DuckDBPyConnection, by: str | None = None) -> Figure:
    """Jain's index of per-flow goodput against the number of flows in the run (seed 001
    Fig. 6), one line per ``by`` value, mean and 95% interval across seeds."""
    by, _, axes = _choose(con, by, None)
    label = f"{by}_label" if by else None
    cols = ", ".join(["run_id", *([label] if label else []), "goodput_bytes"])
    flows = con.execute(f"SELECT {cols} FROM flows WHERE NOT reference").df()
    keys = [*([label] if label else []), "run_id"]
    per_run = analysis.fairness(flows, keys)
    stats = analysis.mean_ci(per_run, "jain", [*([label] if label else []), "flows"])
    fig = Figure(figsize=(_PANEL_W * 1.2, _PANEL_H), layout="constrained")
    ax = fig.subplots()
    for bv in axes[by] if by else [None]:
        part = stats if bv is None else stats[stats[label] == bv]
        part = part.sort_values("flows")
        ax.errorbar(
            part["flows"],
            part["jain_mean"],
            yerr=np.nan_to_num(part["jain_ci"].to_numpy(dtype=float)),
            marker="o",
            capsize=3,
            label=bv or "all runs",
        )
    ax.set_xlabel("number of flows")
    ax.set_ylabel("Jain's fairness index")
    ax.set_ylim(0, 1.05)
    ax.grid(True, alpha=0.3)
    _legend(ax, title=by)
    return fig


# --- normalized throughput ---------------------------------------------------------------------


def throughput_frame(
    con: duckdb.DuckDBPyConnection, rows: str | None = None, cols: str | None = None
) -> pd.DataFrame:
    """Normalized throughput (%) of the down bottleneck, mean across seeds, as a table with
    one row per ``rows`` label and one column per ``cols`` label (seed 000 Table 1)."""
    cols, rows, axes = _choose(con, cols, rows)
    labels = _label_cols(cols, rows)
    columns = ["run_id", *labels, "t_start_s", "t_end_s", "link", "delivered_bytes"]
    select = ", ".join(f"l.{c}" for c in columns)
    links = con.execute(
        f"SELECT {select}, r.bottleneck_rate_bps FROM links l JOIN runs r USING (run_id) "
        "WHERE NOT l.reference"
    ).df()
    per_run = analysis.normalized_throughput(links, "bottleneck_rate_bps", [*labels, "run_id"])
    stats = analysis.mean_ci(per_run, "normalized_throughput", labels)
    stats["value"] = 100 * stats["normalized_throughput_mean"]
    if not labels:
        return pd.DataFrame({"normalized throughput (%)": stats["value"]}, index=["all runs"])
    if rows is None:
        table = stats.set_index(labels[0])[["value"]].T
        table.index = ["normalized throughput (%)"]
        return table.reindex(columns=axes[cols] if cols else None)
    table = stats.pivot(index=f"{rows}_label", columns=f"{cols}_label", values="value")
    table = table.reindex(index=axes[rows], columns=axes[cols] if cols else None)
    table.index.name, table.columns.name = rows, cols
    return table


@_literal_text
def normalized_throughput_table(
    con: duckdb.DuckDBPyConnection, rows: str | None = None, cols: str | None = None
) -> Figure:
    """:func:`throughput_frame` drawn as a table figure."""
    frame = throughput_frame(con, rows, cols)
    fig = Figure(figsize=(1.6 + 1.3 * len(frame.columns), 0.6 + 0.35 * len(frame)))
    ax = fig.subplots()
    ax.axis("off")
    cells = [[f"{v:.2f}" if np.isfinite(v) else "-" for v in row] for row in frame.to_numpy()]
    table = ax.table(
        cellText=cells,
        rowLabels=[str(i) for i in frame.index],
        colLabels=[str(c) for c in frame.columns],
        loc="center",
    )
    table.scale(1, 1.3)
    ax.set_title("normalized throughput (%)")
    return fig


# --- by name -----------------------------------------------------------------------------

KINDS: dict[str, Callable[..., Figure]] = {
    "cdf": response_time_cdf,
    "ccdf": response_time_ccdf,
    "queue": queueing_delay_cdf,
    "goodput": goodput_by_group,
    "fairness": fairness_vs_flows,
    "throughput": normalized_throughput_table,
}


def plot(
    con: duckdb.DuckDBPyConnection, kind: str, by: str | None = None, facet: str | None = None
) -> Figure:
    """Draw figure ``kind`` (one of :data:`KINDS`)."""
    try:
        function = KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown plot kind {kind!r}; kinds are {', '.join(KINDS)}") from None
    if kind in ("goodput", "fairness"):
        if facet is not None:
            raise ValueError(f"plot kind {kind!r} has no facets")
        return function(con, by)
    if kind == "throughput":
        return function(con, facet, by)
    return function(con, by, facet)
