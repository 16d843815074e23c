"""The measures the seed studies report, computed from the result tables.

Every function takes pandas DataFrames shaped like the tables of ``docs/results.md`` (one
run's table, or the view of a whole sweep from :func:`ecnlab.open_results`, which adds ``run_id``,
``seed`` and the axis columns) and returns a DataFrame. ``by`` names the columns to compute
separately for (e.g. ``["aqm", "load"]``); pooling over seeds is the caller's choice: put
``run_id`` in ``by`` to get one value per run, then :func:`mean_ci` across seeds.

Definitions (sources in brackets):

* response-time CDF and CCDF, ``P(X <= x)`` and ``P(X > x)`` [seed 000 Figs. 2-6 and 12;
  seed 004 Figs. 5-8, 19-20], as the Kaplan-Meier estimate: an exchange unfinished at the end
  of the run is a right-censored observation (its response takes at least ``elapsed_s``), so
  it is neither dropped nor counted as done [Kaplan and Meier, JASA 1958]; the mean response
  time restricted to a horizon is the area under that estimate's survival curve;
* normalized throughput: bytes delivered by the bottleneck over what its capacity could carry
  in the same time [seed 000 Table 1];
* goodput (in-order payload delivered) against throughput (payload sent, retransmissions
  included) [seed 001 Figs. 9-10];
* loss and mark rates by packet kind: dropped (marked) packets over arrivals, arrivals being
  enqueued + marked + dropped [DESIGN: every queue counts by kind];
* Jain's fairness index ``(sum x)^2 / (n sum x^2)`` [Jain, Chiu, Hawe, DEC TR-301, 1984],
  overall and per group; the running index ``F(t)`` on cumulative bytes since a start time and
  the convergence time to 0.95 [seed 002 section C];
* goodput gap between flow groups and lock-outs, flows with no goodput [seed 001];
* queueing-delay distribution from the sojourn histogram [seed 002 Figs. 4-5];
* means with Student-t confidence intervals across seeds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Union

import numpy as np
import pandas as pd

__all__ = [
    "ccdf",
    "cdf",
    "convergence_time",
    "fairness",
    "goodput_gap",
    "goodput_vs_throughput",
    "jain",
    "kaplan_meier",
    "lockouts",
    "loss_mark_rates",
    "mean_ci",
    "normalized_throughput",
    "queueing_delay_cdf",
    "response_time_cdf",
    "response_time_summary",
    "restricted_mean",
    "running_jain",
    "t_quantile",
]

By = Union[str, Sequence[str], None]


def _by(by: By) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def _groups(df: pd.DataFrame, by: By):  # type: ignore[no-untyped-def]
    keys = _by(by)
    if not keys:
        yield (), df
        return
    for key, part in df.groupby(keys, sort=True, dropna=False):
        yield (key if isinstance(key, tuple) else (key,)), part


def _frame(rows: list[dict[str, object]], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=columns)


# --- distributions ------------------------------------------------------------------------


def cdf(values: Sequence[float] | np.ndarray | pd.Series) -> pd.DataFrame:
    """Empirical CDF: columns ``x`` (sorted values, NaN dropped) and ``p = P(X <= x)``.

    With ties, every tied value gets the fraction up to and including the last of them.
    """
    x = np.sort(np.asarray(values, dtype=float))
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        return pd.DataFrame({"x": [], "p": []})
    # Index of the last occurrence of each value + 1, over n.
    last = np.searchsorted(x, x, side="right")
    p = last / n
    keep = np.r_[x[1:] != x[:-1], True]
    return pd.DataFrame({"x": x[keep], "p": p[keep]})


def ccdf(values: Sequence[float] | np.ndarray | pd.Series) -> pd.DataFrame:
    """Empirical complementary CDF: ``x`` and ``p = P(X > x)``, the last (zero) point dropped
    so the curve can be drawn on log-log axes."""
    c = cdf(values)
    out = pd.DataFrame({"x": c["x"], "p": 1.0 - c["p"]})
    return out[out["p"] > 0].reset_index(drop=True)


def kaplan_meier(
    times: Sequence[float] | np.ndarray | pd.Series,
    observed: Sequence[bool] | np.ndarray | pd.Series,
) -> pd.DataFrame:
    """Kaplan-Meier estimate of the distribution of a duration with right-censoring.

    ``times`` are the durations of the completed observations and the censoring times of the
    others (``observed`` False: the duration is at least that long). Returns the steps of the
    estimate: columns ``x`` (the distinct completion times, sorted), ``p`` = ``P(X <= x)``
    and ``at_risk`` (observations not yet completed nor censored just before ``x``). Without
    censoring ``p`` is the empirical CDF (:func:`cdf`). At a tie, completions come before
    censorings (the usual convention). NaN times are an error: an observation without a time
    cannot be placed.
    """
    t = np.asarray(times, dtype=float)
    d = np.asarray(observed, dtype=bool)
    if t.shape != d.shape:
        raise ValueError(f"times ({t.shape}) and observed ({d.shape}) differ in length")
    if np.isnan(t).any():
        raise ValueError(f"{int(np.isnan(t).sum())} observations have no time (NaN)")
    if len(t) == 0:
        return pd.DataFrame({"x": [], "p": [], "at_risk": []})
    # The steps are at the distinct completion times; those at risk just before one are the
    # observations at or after it: all but the completions and the censorings before it. The
    # completed and the censored times sorted apart give both (a sort of values is several
    # times faster than an argsort, and the censored are usually few).
    done = np.sort(t[d])
    censored = np.sort(t[~d])
    starts = np.empty(len(done), dtype=bool)
    starts[:1] = True
    np.not_equal(done[1:], done[:-1], out=starts[1:])
    first = np.flatnonzero(starts)
    x = done[first]
    events = np.diff(first, append=len(done))
    at_risk = len(t) - first - np.searchsorted(censored, x, side="left")
    survival = np.cumprod(1.0 - events / at_risk)
    # Fresh arrays: no copy into a consolidated block.
    return pd.DataFrame({"x": x, "p": 1.0 - survival, "at_risk": at_risk}, copy=False)


def restricted_mean(
    times: Sequence[float] | np.ndarray | pd.Series,
    observed: Sequence[bool] | np.ndarray | pd.Series,
    horizon: float,
) -> float:
    """Mean duration restricted to ``horizon``: ``E[min(X, horizon)]`` under the Kaplan-Meier
    estimate, the area under its survival curve from 0 to ``horizon`` (beyond the last
    completion the survival stays at its last value). Equals the plain mean of
    ``min(x, horizon)`` when nothing is censored."""
    if not horizon > 0:
        raise ValueError(f"horizon ({horizon}) must be positive")
    return _restricted_mean(kaplan_meier(times, observed), horizon)


def _restricted_mean(km: pd.DataFrame, horizon: float) -> float:
    """:func:`restricted_mean` of an estimate of :func:`kaplan_meier`."""
    x = km["x"].to_numpy()
    s = 1.0 - km["p"].to_numpy()
    keep = x < horizon
    edges = np.r_[0.0, x[keep], horizon]
    levels = np.r_[1.0, s[keep]]
    return float(np.sum(levels * np.diff(edges)))


def _observations(exchanges: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(time, completed) of every exchange: the response time, or for an unfinished exchange
    the time it was observed for (``elapsed_s``)."""
    if "elapsed_s" not in exchanges.columns:
        raise ValueError(
            "the exchanges have no elapsed_s column (results of an older ecnlab): unfinished "
            "exchanges cannot be placed; run them again"
        )
    done = exchanges["completed"].to_numpy(dtype=bool)
    t = exchanges["elapsed_s"].to_numpy(dtype=float)
    if np.isnan(t).any():
        raise ValueError(
            f"{int(np.isnan(t).sum())} exchanges have no elapsed_s (results of an older "
            "ecnlab mixed in?); run them again"
        )
    return t, done


def response_time_cdf(
    exchanges: pd.DataFrame, by: By = None, *, complementary: bool = False
) -> pd.DataFrame:
    """CDF (or CCDF) of the response time, per group: the Kaplan-Meier estimate, in which an
    exchange unfinished at the end of the run counts as a response of at least ``elapsed_s``.

    Returns columns ``*by``, ``response_time_s``, ``p`` (``P(X <= x)``, or ``P(X > x)`` with
    ``complementary``; the CCDF's points where it reaches zero are dropped for log axes),
    ``at_risk``.
    """
    parts = []
    for key, part in _groups(exchanges, by):
        t, done = _observations(part)
        curve = kaplan_meier(t, done)
        if complementary:
            curve["p"] = 1.0 - curve["p"]
            curve = curve[curve["p"] > 0]
        for name, value in zip(_by(by), key):
            curve[name] = value
        parts.append(curve)
    columns = [*_by(by), "response_time_s", "p", "at_risk"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True).rename(columns={"x": "response_time_s"})[columns]


def response_time_summary(
    exchanges: pd.DataFrame,
    by: By = None,
    *,
    at_s: Sequence[float] = (0.5, 1.0, 2.0),
    horizon_s: float,
) -> pd.DataFrame:
    """Per group: exchanges, completed, unfinished (right-censored), ``F(x)`` at each of
    ``at_s`` (columns ``F_<x>``, Kaplan-Meier), ``mean_s`` (the mean restricted to
    ``horizon_s``, Kaplan-Meier) and ``mean_lower_s`` (the mean of ``min(time, horizon_s)``
    with unfinished exchanges counted at their elapsed time: never above ``mean_s``, and
    equal to it when nothing is unfinished)."""
    if not horizon_s > 0:
        raise ValueError(f"horizon_s ({horizon_s}) must be positive")
    rows = []
    for key, part in _groups(exchanges, by):
        t, done = _observations(part)
        km = kaplan_meier(t, done)
        row: dict[str, object] = dict(zip(_by(by), key))
        row.update(exchanges=len(t), completed=int(done.sum()), unfinished=int((~done).sum()))
        for x in at_s:
            i = np.searchsorted(km["x"].to_numpy(), x, side="right")
            row[f"F_{x:g}"] = float(km["p"].iloc[i - 1]) if i > 0 else (0.0 if len(t) else math.nan)
        row["mean_s"] = _restricted_mean(km, horizon_s) if len(t) else math.nan
        row["mean_lower_s"] = float(np.minimum(t, horizon_s).mean()) if len(t) else math.nan
        rows.append(row)
    cols = [*_by(by), "exchanges", "completed", "unfinished"]
    cols += [f"F_{x:g}" for x in at_s] + ["mean_s", "mean_lower_s"]
    return _frame(rows, cols)


def queueing_delay_cdf(sojourn: pd.DataFrame, by: By = None) -> pd.DataFrame:
    """CDF of the queueing delay from the ``sojourn`` histogram, per group (and link).

    Each bin contributes its packets at its upper edge: ``p`` at ``delay_ms = bin_end_ms`` is
    the fraction of packets that waited less than ``bin_end_ms``. Returns ``*by``,
    ``delay_ms``, ``p``.
    """
    rows = []
    for key, part in _groups(sojourn, by):
        hist = part.groupby("bin_end_ms", sort=True)["packets"].sum()
        total = hist.sum()
        if total == 0:
            continue
        cum = hist.cumsum() / total
        for edge, p in cum.items():
            rows.append({**dict(zip(_by(by), key)), "delay_ms": float(edge), "p": float(p)})
    return _frame(rows, [*_by(by), "delay_ms", "p"])


# --- throughput and rates -------------------------------------------------------------------


def normalized_throughput(
    links: pd.DataFrame,
    rate_bps: float | str,
    by: By = None,
    *,
    link: str = "bottleneck_down",
) -> pd.DataFrame:
    """Bytes the link delivered over the bytes its capacity could carry in the same intervals.

    Args:
        links: the ``links`` table.
        rate_bps: the link rate, or the name of a column holding it (the sweep views have
            ``bottleneck_rate_bps``).
        by: groups; put ``run_id`` in it for one value per run.
        link: which direction.

    Returns columns ``*by``, ``delivered_bytes``, ``capacity_bytes``, ``normalized_throughput``.
    """
    rows = []
    for key, part in _groups(links[links["link"] == link], by):
        rate = part[rate_bps] if isinstance(rate_bps, str) else rate_bps
        seconds = part["t_end_s"] - part["t_start_s"]
        capacity = float((rate * seconds / 8).sum())
        delivered = float(part["delivered_bytes"].sum())
        rows.append(
            {
                **dict(zip(_by(by), key)),
                "delivered_bytes": delivered,
                "capacity_bytes": capacity,
                "normalized_throughput": delivered / capacity if capacity > 0 else math.nan,
            }
        )
    return _frame(rows, [*_by(by), "delivered_bytes", "capacity_bytes", "normalized_throughput"])


def goodput_vs_throughput(flows: pd.DataFrame, duration_s: float, by: By = None) -> pd.DataFrame:
    """Aggregate goodput and throughput of the flows over the whole run, per group.

    Throughput counts every payload byte sent (retransmissions included), goodput the
    payload delivered in order; both over ``duration_s``. Returns ``*by``, ``flows``,
    ``throughput_bps``, ``goodput_bps``, ``retx_share`` (retransmitted over sent).
    """
    rows = []
    for key, part in _groups(flows, by):
        sent = float(part["bytes_sent"].sum())
        rows.append(
            {
                **dict(zip(_by(by), key)),
                "flows": len(part),
                "throughput_bps": sent * 8 / duration_s,
                "goodput_bps": float(part["delivered_bytes"].sum()) * 8 / duration_s,
                "retx_share": float(part["retx_bytes"].sum()) / sent if sent else math.nan,
            }
        )
    return _frame(rows, [*_by(by), "flows", "throughput_bps", "goodput_bps", "retx_share"])


def loss_mark_rates(queue_counts: pd.DataFrame, by: By = None) -> pd.DataFrame:
    """Loss and mark rates per link and packet kind (and group).

    Returns ``*by``, ``link``, ``kind``, ``arrivals``, ``dropped``, ``marked``, ``loss_rate``
    (dropped over arrivals), ``mark_rate`` (marked over arrivals).
    """
    keys = [*_by(by), "link", "kind"]
    wide = (
        queue_counts.groupby([*keys, "outcome"], dropna=False)["packets"]
        .sum()
        .unstack("outcome", fill_value=0)
    )
    for outcome in ("enqueued", "marked", "dropped"):
        if outcome not in wide.columns:
            wide[outcome] = 0
    out = wide.reset_index()
    out["arrivals"] = out["enqueued"] + out["marked"] + out["dropped"]
    out["loss_rate"] = out["dropped"] / out["arrivals"]
    out["mark_rate"] = out["marked"] / out["arrivals"]
    out.columns.name = None
    return out[[*keys, "arrivals", "dropped", "marked", "loss_rate", "mark_rate"]]


# --- fairness -----------------------------------------------------------------------------


def jain(values: Sequence[float] | np.ndarray | pd.Series) -> float:
    """Jain's fairness index ``(sum x)^2 / (n sum x^2)``: 1 when all equal, 1/n when one
    takes everything. NaN for no values or all zero."""
    x = np.asarray(values, dtype=float)
    square_sum = float((x**2).sum())
    if len(x) == 0 or square_sum == 0:
        return math.nan
    return float(x.sum() ** 2 / (len(x) * square_sum))


def fairness(
    flows: pd.DataFrame,
    by: By = None,
    *,
    group: str | None = None,
    value: str = "goodput_bytes",
) -> pd.DataFrame:
    """Jain's index of ``value`` over the flows, per ``by`` (and per ``group`` within it).

    With ``group`` (e.g. ``"workload"`` for the seed-001 fragile/average/robust groups),
    one row per group. Returns ``*by``, [``group``], ``flows``, ``jain``.
    """
    keys = [*_by(by), *([group] if group else [])]
    rows = [
        {**dict(zip(keys, key)), "flows": len(part), "jain": jain(part[value])}
        for key, part in _groups(flows, keys)
    ]
    return _frame(rows, [*keys, "flows", "jain"])


def running_jain(
    samples: pd.DataFrame,
    *,
    start_s: float = 0.0,
    t: str = "t_s",
    flow: str = "flow",
    value: str = "bytes",
) -> pd.DataFrame:
    """The running fairness index ``F(t)`` of seed 002 (section C).

    ``samples`` holds cumulative byte counts per flow over time (columns ``t``, ``flow``,
    ``value``). For every sample time ``t >= start_s``, ``x_i(t)`` is flow i's bytes since
    ``start_s`` (its last sample at or before ``start_s`` subtracted) and ``F(t)`` is Jain's
    index over the flows with a sample at or before ``t``. Returns ``t_s``, ``jain``.
    """
    wide = samples.pivot_table(index=t, columns=flow, values=value, aggfunc="last").sort_index()
    wide = wide.ffill()
    before = wide[wide.index <= start_s]
    baseline = before.iloc[-1].fillna(0) if len(before) else pd.Series(0.0, index=wide.columns)
    after = wide[wide.index >= start_s]
    # Vectorised over sample times: each row's index over its flows with a sample so far.
    x = after.sub(baseline.reindex(after.columns).fillna(0), axis=1)
    n = x.notna().sum(axis=1)
    square_sum = (x**2).sum(axis=1)
    value = x.sum(axis=1) ** 2 / (n * square_sum)
    value[(n == 0) | (square_sum == 0)] = math.nan
    return pd.DataFrame(
        {"t_s": after.index.to_numpy(dtype=float), "jain": value.to_numpy(dtype=float)}
    )


def convergence_time(
    running: pd.DataFrame, *, start_s: float = 0.0, threshold: float = 0.95
) -> float:
    """Time from ``start_s`` until the running index first reaches ``threshold`` (seed 002's
    T, theta = 0.95); NaN if it never does."""
    reached = running[(running["t_s"] >= start_s) & (running["jain"] >= threshold)]
    if reached.empty:
        return math.nan
    return float(reached["t_s"].iloc[0] - start_s)


def goodput_gap(
    flows: pd.DataFrame, group: str = "workload", by: By = None, *, value: str = "goodput_bytes"
) -> pd.DataFrame:
    """Mean goodput per group and the gap between the best and worst group (seed 001).

    Returns ``*by``, ``best``, ``worst`` (group names), ``best_mean``, ``worst_mean``,
    ``gap`` (difference) and ``ratio`` (worst over best).
    """
    rows = []
    for key, part in _groups(flows, by):
        means = part.groupby(group)[value].mean().sort_values()
        if means.empty:
            continue
        best, worst = means.index[-1], means.index[0]
        rows.append(
            {
                **dict(zip(_by(by), key)),
                "best": best,
                "worst": worst,
                "best_mean": float(means.iloc[-1]),
                "worst_mean": float(means.iloc[0]),
                "gap": float(means.iloc[-1] - means.iloc[0]),
                "ratio": float(means.iloc[0] / means.iloc[-1]) if means.iloc[-1] else math.nan,
            }
        )
    return _frame(rows, [*_by(by), "best", "worst", "best_mean", "worst_mean", "gap", "ratio"])


def lockouts(flows: pd.DataFrame, by: By = None, *, value: str = "goodput_bytes") -> pd.DataFrame:
    """Flows locked out: no goodput at all in the window (seed 001). Returns ``*by``,
    ``flows``, ``locked_out``, ``share``."""
    rows = []
    for key, part in _groups(flows, by):
        locked = int((part[value] == 0).sum())
        rows.append(
            {
                **dict(zip(_by(by), key)),
                "flows": len(part),
                "locked_out": locked,
                "share": locked / len(part) if len(part) else math.nan,
            }
        )
    return _frame(rows, [*_by(by), "flows", "locked_out", "share"])


# --- across seeds -------------------------------------------------------------------------


def mean_ci(
    df: pd.DataFrame, value: str | Sequence[str], by: By = None, *, confidence: float = 0.95
) -> pd.DataFrame:
    """Mean of ``value`` per group with a Student-t confidence interval.

    Give it one row per run (e.g. the ``runs`` view): the interval is across those rows,
    typically the seeds. Returns ``*by``, and per value ``<v>_mean``, ``<v>_ci`` (the
    half-width; NaN with fewer than two rows), ``<v>_n``.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence ({confidence}) must be between 0 and 1")
    values = [value] if isinstance(value, str) else list(value)
    rows = []
    for key, part in _groups(df, by):
        row: dict[str, object] = dict(zip(_by(by), key))
        for v in values:
            x = part[v].dropna().astype(float)
            n = len(x)
            half = math.nan
            if n >= 2:
                half = t_quantile(0.5 + confidence / 2, n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
            row.update({f"{v}_mean": float(x.mean()) if n else math.nan, f"{v}_ci": half})
            row[f"{v}_n"] = n
        rows.append(row)
    return _frame(rows, [*_by(by), *(f"{v}_{s}" for v in values for s in ("mean", "ci", "n"))])


def t_quantile(q: float, df: int) -> float:
    """Quantile of Student's t distribution with ``df`` degrees of freedom (bisection on the
    CDF, which is a regularized incomplete beta function)."""
    if not 0 < q < 1 or df < 1:
        raise ValueError(f"t_quantile needs 0 < q < 1 and df >= 1, got q={q}, df={df}")
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -t_quantile(1 - q, df)
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < q:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2


def _t_cdf(t: float, df: int) -> float:
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2, 0.5, x)
    return 1 - tail if t >= 0 else tail


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) (continued fraction, Numerical Recipes 6.4)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(log_front + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h
