"""One statistical rule for every claim of every reproduction.

A claim of a paper is tested on a **per-seed quantity**: a number computed from each seed's
runs (a measure of one configuration, the paired difference of two configurations of the same
seed, their ratio...). Seeds are independent replications, and every configuration of a seed is
offered the same traffic (common random numbers), so differences are paired by seed.

The claim says where that quantity should lie, a :class:`Region`: above a margin (an ordering),
inside a band around the paper's number (a magnitude), or within a margin of zero (two things
are "close", an equivalence test). The rule:

* take the Student-t confidence interval of the quantity's mean over the seeds;
* **holds** when the whole interval lies inside the region;
* **reversed** when the whole interval lies outside it (the data establish the opposite);
* **unresolved** otherwise, including with fewer than two seeds.

A claim made of several tests ("for every AQM...") holds when every test holds, is reversed
when any test is reversed, and is unresolved otherwise.

Intervals are two-sided at :data:`CONFIDENCE` (95 %) for the whole procedure. A reproduction
may look at the claims more than once, adding seeds to the parts that feed unresolved claims
(``_study.reproduce``); with at most ``k`` looks, each interval is computed at the Bonferroni
level ``1 - (1 - CONFIDENCE) / k``, so the chance that any look of a claim gives a wrong
"holds" or "reversed" stays at most 5 %. ``confidence`` in ``claims.json`` is the level of
the interval shown; ``looks`` says how many there could be.

Everything here is pure arithmetic on per-seed values; the studies build their quantities with
:func:`measure` and the operators of :class:`Quantity`, which is also how tests feed synthetic
runs to a study's claims (``tests/test_verdict.py`` and each study's tests).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..analysis import t_quantile

__all__ = [
    "CONFIDENCE",
    "VERDICTS",
    "ClaimSpec",
    "Outcome",
    "Quantity",
    "Region",
    "Test",
    "above",
    "below",
    "between",
    "combine",
    "constant",
    "decide",
    "measure",
    "near",
    "spread",
    "t_interval",
    "verdict_counts",
]

CONFIDENCE = 0.95
"""Overall confidence of every verdict (two-sided intervals)."""

VERDICTS = ("holds", "reversed", "unresolved")

Frames = Mapping[str, pd.DataFrame]
"""A study's per-run measures: part name -> one row per run (columns ``seed``, the
configuration labels, the measures)."""


# --- regions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Region:
    """An interval of the real line where a claim puts its quantity (ends may be infinite)."""

    low: float = -math.inf
    high: float = math.inf

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"region [{self.low}, {self.high}] is empty")

    def contains(self, lo: float, hi: float) -> bool:
        """The interval [lo, hi] lies inside the region (strictly beyond finite ends)."""
        return lo > self.low and hi < self.high

    def excludes(self, lo: float, hi: float) -> bool:
        """The interval [lo, hi] lies wholly outside the region."""
        return hi <= self.low or lo >= self.high

    def text(self) -> str:
        if math.isinf(self.high):
            return f"> {self.low:g}"
        if math.isinf(self.low):
            return f"< {self.high:g}"
        return f"in ({self.low:g}, {self.high:g})"


def above(x: float) -> Region:
    """The quantity exceeds ``x`` (an ordering: ``above(0)`` for a paired difference)."""
    return Region(low=x)


def below(x: float) -> Region:
    return Region(high=x)


def between(low: float, high: float) -> Region:
    """A band, e.g. around the paper's number."""
    return Region(low, high)


def near(x: float, margin: float) -> Region:
    """Within ``margin`` of ``x``: an equivalence test when ``x`` is 0."""
    if margin <= 0:
        raise ValueError(f"margin ({margin}) must be positive")
    return Region(x - margin, x + margin)


# --- per-seed quantities ------------------------------------------------------------------------


@dataclass(frozen=True)
class Quantity:
    """A number per seed, computed from a study's per-run measures.

    ``text`` says in words what it is (it becomes part of the claim's criterion); ``parts``
    are the study parts it reads (seeds are added to those when a claim stays unresolved).
    Arithmetic between quantities pairs them by seed: ``a - b`` is defined on the seeds both
    have.
    """

    text: str
    parts: frozenset[str]
    fn: Callable[[Frames], dict[int, float]] = field(compare=False, repr=False)

    def values(self, frames: Frames) -> dict[int, float]:
        """Seed -> value (non-finite values kept: :func:`decide` reports them)."""
        return self.fn(frames)

    def _pair(
        self, other: Quantity | float, op: Callable[[float, float], float], sym: str
    ) -> Quantity:
        o = other if isinstance(other, Quantity) else constant(float(other))
        return combine([self, o], lambda xs: op(xs[0], xs[1]), f"({self.text}) {sym} ({o.text})")

    def __sub__(self, other: Quantity | float) -> Quantity:
        return self._pair(other, lambda x, y: x - y, "-")

    def __add__(self, other: Quantity | float) -> Quantity:
        return self._pair(other, lambda x, y: x + y, "+")

    def __mul__(self, other: Quantity | float) -> Quantity:
        return self._pair(other, lambda x, y: x * y, "*")

    def __truediv__(self, other: Quantity | float) -> Quantity:
        return self._pair(other, _divide, "/")

    def map(self, f: Callable[[float], float], text: str) -> Quantity:
        """Apply ``f`` to each seed's value; ``text`` names the result ("log10 of {q}")."""
        return Quantity(
            text.format(q=self.text),
            self.parts,
            lambda frames: {s: _safe(f, v) for s, v in self.values(frames).items()},
        )

    def log10(self) -> Quantity:
        """For ratio claims: a band on log10(a / b) is a band on the ratio, and the
        t-interval of a log ratio is the usual one for multiplicative effects."""
        return self.map(math.log10, "log10 of {q}")

    def named(self, text: str) -> Quantity:
        """The same quantity, described as ``text``."""
        return Quantity(text, self.parts, self.fn)


def _divide(x: float, y: float) -> float:
    return x / y if y != 0 else math.nan


def _safe(f: Callable[[Any], float], x: Any) -> float:
    """``f(x)``, or NaN where it is undefined (a log of a negative, a division by zero)."""
    try:
        return float(f(x))
    except (ValueError, ZeroDivisionError, OverflowError):
        return math.nan


_EVERY_SEED = -1
"""The key under which a constant holds its value (seeds are >= 0)."""


def constant(x: float) -> Quantity:
    """The same number for every seed (a paper's figure, a margin)."""
    return Quantity(f"{x:g}", frozenset(), lambda frames: {_EVERY_SEED: x})


def measure(part: str, column: str, text: str | None = None, **where: Any) -> Quantity:
    """``column`` of the run of ``part`` whose label columns equal ``where``, per seed.

    Exactly one row per seed must match (else ``ValueError`` naming the selection): a claim
    that silently averaged two configurations would test something else than it says.
    """
    label = text or f"{column} [{part}: {', '.join(f'{k}={v}' for k, v in where.items())}]"

    def fn(frames: Frames) -> dict[int, float]:
        if part not in frames:
            raise KeyError(f"no measures of part {part!r} (have {', '.join(frames)})")
        frame = frames[part]
        mask = pd.Series(True, index=frame.index)
        for k, v in where.items():
            if k not in frame.columns:
                raise KeyError(f"part {part!r} has no column {k!r}")
            mask &= frame[k] == v
        rows = frame[mask]
        if column not in rows.columns:
            raise KeyError(f"part {part!r} has no measure {column!r}")
        if rows["seed"].duplicated().any():
            raise ValueError(
                f"{label}: several runs per seed match; name every configuration label"
            )
        return {int(s): float(v) for s, v in zip(rows["seed"], rows[column])}

    return Quantity(label, frozenset({part}), fn)


def combine(
    quantities: Mapping[str, Quantity] | Iterable[Quantity],
    f: Callable[[list[float]], float],
    text: str,
) -> Quantity:
    """A per-seed function of several quantities, paired by seed.

    A seed that some quantity lacks (a run that failed or was not run) gets NaN, so that
    :func:`decide` reports it instead of the pairing hiding it. Constants apply to every seed.
    """
    qs = list(quantities.values() if isinstance(quantities, Mapping) else quantities)

    def fn(frames: Frames) -> dict[int, float]:
        vals = [q.values(frames) for q in qs]
        seeds = sorted(set().union(*(set(v) for q, v in zip(qs, vals) if q.parts)))

        def at(v: dict[int, float], s: int) -> float:
            return v.get(s, v.get(_EVERY_SEED, math.nan))

        return {s: _safe(f, [at(v, s) for v in vals]) for s in seeds}

    parts = frozenset().union(*(q.parts for q in qs))
    return Quantity(text, parts, fn)


def spread(quantities: Mapping[str, Quantity], text: str) -> Quantity:
    """Per seed, the best minus the worst of ``quantities``."""
    return combine(quantities, lambda xs: max(xs) - min(xs), text)


# --- the decision -------------------------------------------------------------------------------


def t_interval(values: Iterable[float], confidence: float) -> tuple[float, float, float]:
    """Mean and two-sided Student-t interval of the mean: ``(mean, low, high)``.

    With one value the interval is unbounded; with zero spread it is the point.
    """
    xs = [float(v) for v in values]
    n = len(xs)
    if n == 0:
        return math.nan, -math.inf, math.inf
    mean = statistics.fmean(xs)
    if n == 1:
        return mean, -math.inf, math.inf
    half = t_quantile(0.5 + confidence / 2, n - 1) * statistics.stdev(xs) / math.sqrt(n)
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class Outcome:
    """The decision on one per-seed quantity."""

    verdict: str
    estimate: float
    low: float
    high: float
    n_seeds: int
    confidence: float
    values: dict[int, float]
    dropped: dict[int, Any]
    """Seeds whose value was not finite (a configuration without a measure): kept out of the
    interval and reported, never hidden."""

    def record(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "estimate": _json_float(self.estimate),
            "interval": [_json_float(self.low), _json_float(self.high)],
            "n_seeds": self.n_seeds,
            "confidence": self.confidence,
            "values": {str(s): _json_float(v) for s, v in self.values.items()},
            "not_finite": {str(s): str(v) for s, v in self.dropped.items()},
        }


def _json_float(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def decide(values: Mapping[int, float], region: Region, confidence: float = CONFIDENCE) -> Outcome:
    """The verdict on ``values`` (seed -> value) for ``region`` at ``confidence``."""
    finite = {s: float(v) for s, v in values.items() if math.isfinite(v)}
    dropped = {s: v for s, v in values.items() if not math.isfinite(v)}
    mean, lo, hi = t_interval(finite.values(), confidence)
    if len(finite) < 2:
        verdict = "unresolved"
    elif region.contains(lo, hi):
        verdict = "holds"
    elif region.excludes(lo, hi):
        verdict = "reversed"
    else:
        verdict = "unresolved"
    return Outcome(verdict, mean, lo, hi, len(finite), confidence, finite, dropped)


def verdict_counts(claims: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many of ``claims`` (``claims.json`` entries) hold, are reversed, are unresolved."""
    verdicts = [c["verdict"] for c in claims]
    return {v: verdicts.count(v) for v in VERDICTS}


def overall(verdicts: Iterable[str]) -> str:
    """Several tests of one claim: all hold -> holds; any reversed -> reversed."""
    vs = list(verdicts)
    if vs and all(v == "holds" for v in vs):
        return "holds"
    if any(v == "reversed" for v in vs):
        return "reversed"
    return "unresolved"


@dataclass(frozen=True)
class Test:
    """One quantity and the region the claim puts it in."""

    quantity: Quantity
    region: Region

    def criterion(self) -> str:
        return f"{self.quantity.text} {self.region.text()}"


@dataclass(frozen=True)
class ClaimSpec:
    """A claim of a paper (or of ours), stated before any run.

    Attributes:
        id: stable identifier (``claims.json``, the write-up, tests).
        statement: the claim in our words.
        quote: the paper's own words.
        location: where in the paper (section, figure, table).
        paper: the paper's number(s) (None when it states only an ordering).
        tests: the test, or several named tests that must all hold.
        justification: why this quantity and region test the statement (units, the band's
            width, the margin of a "close").
        origin: ``"paper"``, or ``"ours"`` for comparisons of our own design (kept out of the
            paper's count).
        figure: the key of the figure that shows it, if any.
        changed: a criterion changed after seeing results: what changed and why (listed in the
            write-up); None for criteria fixed before the runs.
    """

    id: str
    statement: str
    quote: str
    location: str
    paper: Any
    tests: Test | Mapping[str, Test]
    justification: str
    origin: str = "paper"
    figure: str | None = None
    changed: str | None = None

    def __post_init__(self) -> None:
        if self.origin not in ("paper", "ours"):
            raise ValueError(f"claim {self.id}: origin {self.origin!r} is not 'paper' or 'ours'")

    @property
    def named_tests(self) -> dict[str, Test]:
        return dict(self.tests) if isinstance(self.tests, Mapping) else {"": self.tests}

    @property
    def parts(self) -> frozenset[str]:
        return frozenset().union(*(t.quantity.parts for t in self.named_tests.values()))

    def evaluate(self, frames: Frames, confidence: float = CONFIDENCE) -> dict[str, Any]:
        """Decide every test on ``frames``: the claim's entry of ``claims.json``."""
        outcomes = {
            name: decide(t.quantity.values(frames), t.region, confidence)
            for name, t in self.named_tests.items()
        }
        verdict = overall(o.verdict for o in outcomes.values())
        tests = [
            {"name": name, "criterion": self.named_tests[name].criterion(), **o.record()}
            for name, o in outcomes.items()
        ]
        single = len(tests) == 1
        return {
            "id": self.id,
            "claim": self.statement,
            "quote": self.quote,
            "location": self.location,
            "origin": self.origin,
            "paper": self.paper,
            "ours": tests[0]["estimate"] if single else {t["name"]: t["estimate"] for t in tests},
            "interval": tests[0]["interval"]
            if single
            else {t["name"]: t["interval"] for t in tests},
            "n_seeds": min((o.n_seeds for o in outcomes.values()), default=0),
            "confidence": confidence,
            "verdict": verdict,
            "criterion": "; ".join(
                (f"{t['name']}: " if t["name"] else "") + t["criterion"] for t in tests
            ),
            "justification": self.justification,
            "changed_after_runs": self.changed,
            "figure": self.figure,
            "tests": tests,
        }
