"""The machinery every reproduction shares: parts run as sweeps, claims, figures, the report.

A study (one module per seed paper, :data:`ecnlab.reproduce.STUDIES`) declares:

* which sweeps to run for a mode (``quick`` or ``full``): :meth:`Study.sweeps` returns sweep
  definitions as dicts (the contents of a sweep file, ``docs/sweeps.md``), each with a
  ``name`` and no ``seeds`` (the study's :class:`SeedPlan` sets them); a definition's
  ``base`` may be the scenario itself or a file beside the study's data folder;
* its claims, fixed before any run: :attr:`Study.claims`, a table of
  :class:`~ecnlab.reproduce.verdict.ClaimSpec` (the paper's words, where it says them, its
  number, the per-seed quantity and the region the claim puts it in);
* what each run measured: :meth:`Study.measures`, one frame of per-run measures per part;
* the operating point its runs reached: :meth:`Study.operating_point` (offered and delivered
  load per configuration, checked against the calibration);
* figures, tables and notes: :meth:`Study.analyze`.

:func:`reproduce` runs every part into ``OUT/sweeps/<name>/``, a look's parts through one pool
of workers (:func:`~ecnlab.sweep.run_sweeps`, so an interrupted reproduction resumes where it
stopped, locally or on Dask, with identical results), decides every claim by the one rule of
:mod:`.verdict`, adds seeds to the parts that feed unresolved claims (up to the plan's cap),
then writes ``OUT/claims.json``, ``OUT/figures/*.png``, ``OUT/tables/*.csv`` and the
self-contained page ``OUT/report.html``.
"""

from __future__ import annotations

import html
import json
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
from matplotlib.figure import Figure

from .. import store
from ..report import figure_html, html_page, html_table, versions_html, write_page
from ..sweep import Sweep, SweepError, SweepReport, run_sweeps, sweep_from_dict
from .verdict import CONFIDENCE, ClaimSpec, t_interval, verdict_counts

__all__ = [
    "LOAD_TOLERANCE",
    "MODES",
    "Findings",
    "OperatingPoint",
    "Results",
    "SeedPlan",
    "Study",
    "StudyReport",
    "calibrated_load",
    "format_estimate",
    "format_value",
    "part_sweeps",
    "reproduce",
]

MODES = ("quick", "full")

LOAD_TOLERANCE = 0.03
"""How far (relative) a reference run's delivered load may be from its calibrated target."""

DECISION_RULE = (
    "Each claim is decided on a per-seed quantity (seeds are independent replications; every "
    "configuration of a seed is offered the same traffic, so comparisons are paired by seed): "
    "it holds when the two-sided Student-t confidence interval of the quantity's mean lies "
    "inside the region the claim names, is reversed when the interval lies wholly outside it, "
    "and is unresolved otherwise. A claim of several tests holds when all hold and is reversed "
    "when any is."
)
"""How one look decides a claim (:mod:`.verdict`)."""
RULE = DECISION_RULE + (
    " Seeds are added to the parts that feed unresolved claims, up to a cap; each "
    "interval is computed at the Bonferroni level 1 - 0.05 / looks, so that over all looks a "
    "wrong verdict has a chance of at most 5%."
)


@dataclass
class Findings:
    """What a study's analysis produced: named figures and tables, and notes.

    Figures and tables are keyed by a file-name stem (``fig2-red``); their titles say what
    they show. A claim whose ``figure`` names a key is shown beside that figure. The notes are
    short paragraphs printed in the report above the claims.
    """

    figures: dict[str, tuple[str, Figure]] = field(default_factory=dict)
    tables: dict[str, tuple[str, pd.DataFrame]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def figure(self, key: str, title: str, fig: Figure) -> None:
        self.figures[key] = (title, fig)

    def table(self, key: str, title: str, frame: pd.DataFrame) -> None:
        self.tables[key] = (title, frame)


@dataclass(frozen=True)
class SeedPlan:
    """How many seeds a mode runs: ``start`` at first, ``step`` more to the parts of claims
    still unresolved, at most ``cap``."""

    start: int
    step: int
    cap: int

    def __post_init__(self) -> None:
        if (
            not (1 <= self.start <= self.cap)
            or self.step < 0
            or (self.step == 0) != (self.start == self.cap)
        ):
            raise ValueError(
                f"invalid seed plan {self}: need 1 <= start <= cap, step > 0 "
                "exactly when start < cap"
            )

    @property
    def looks(self) -> int:
        """How many times the claims may be decided on this part's seeds."""
        return 1 if self.step == 0 else 1 + math.ceil((self.cap - self.start) / self.step)


def interval_confidence(looks: int) -> float:
    """The level of each interval when claims may be decided ``looks`` times: the Bonferroni
    level ``1 - (1 - CONFIDENCE) / looks``, so that all looks together err at most
    ``1 - CONFIDENCE``."""
    return 1.0 - (1.0 - CONFIDENCE) / looks


@dataclass
class OperatingPoint:
    """The load a study's runs reached, beside the load they were meant to reach.

    ``rows``: one row per configuration (and reference), with at least the columns
    ``part``, ``configuration``, ``reference``, ``seeds`` and the measured loads; ``checks``:
    each ``{"check", "target", "measured", "tolerance", "ok"}`` (``measured`` a summary over
    seeds); ``note``: how the loads are defined.
    """

    rows: pd.DataFrame
    checks: list[dict[str, Any]]
    note: str = ""

    @property
    def ok(self) -> bool:
        return all(c["ok"] for c in self.checks)

    @staticmethod
    def combine(points: Iterable[OperatingPoint]) -> OperatingPoint:
        """Several parts' operating points as one (the first note is kept)."""
        ps = list(points)
        rows = pd.concat([p.rows for p in ps], ignore_index=True) if ps else pd.DataFrame()
        return OperatingPoint(rows, [c for p in ps for c in p.checks], ps[0].note if ps else "")

    def record(self) -> dict[str, Any]:
        rows = json.loads(self.rows.to_json(orient="records"))
        return {
            "reached": self.ok,
            "note": self.note,
            "checks": self.checks,
            "configurations": rows,
        }


def calibrated_load(
    results: Results,
    part: str,
    labels: Sequence[str],
    target_mbps: Callable[[Mapping[str, Any]], float],
    *,
    direction: str = "down",
) -> OperatingPoint:
    """The operating point of one part of a study whose load is calibrated (seeds 000, 004).

    Per configuration (the ``labels`` of a run, reference runs apart), over the seeds of this
    look: the load offered (payload the workloads asked to send in the window, Mb/s), the
    goodput (payload delivered), and the wire load the bottleneck delivered (what a calibration
    measures), in ``direction``. ``target_mbps(labels)`` is the calibrated load of a
    configuration (labels as a dict, e.g. ``{"load_label": "90%"}``).

    Checks, on the reference (uncongested) runs, where the calibration applies: the delivered
    wire load is within :data:`LOAD_TOLERANCE` of the target, and the goodput is within it of
    the offered payload (the runs are past their transient: what is asked for gets delivered).
    Each check compares the mean over seeds and shows its Student-t interval.
    """
    n = results.seeds.get(part)
    cols = ", ".join(labels)
    d = direction
    frame = (
        results.open(part)
        .execute(
            f"SELECT seed, reference, {cols + ', ' if cols else ''}"
            f"offered_bps_{d} / 1e6 AS offered, goodput_bps_{d} / 1e6 AS goodput, "
            f"delivered_bps_{d} / 1e6 AS delivered FROM runs WHERE status = 'done'"
        )
        .df()
    )
    if n is not None:
        frame = frame[frame["seed"].between(1, n)]
    ref_label = results.open(part).execute("SELECT reference_label FROM sweep").fetchone()
    ref_name = (ref_label[0] if ref_label else None) or "reference"
    rows, checks = [], []
    keys = ["reference", *labels]
    for key, g in frame.groupby(keys, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        named = dict(zip(keys, key))
        reference = bool(named.pop("reference"))
        # A reference run has labels only for the axes it varies with.
        named = {k: v for k, v in named.items() if not pd.isna(v)}
        config = ", ".join(str(v) for v in named.values())
        if reference:
            config = f"{ref_name}, {config}" if config else ref_name
        config = config or "all"
        target = float(target_mbps(named))
        row: dict[str, Any] = {
            "part": part,
            "configuration": config,
            "reference": reference,
            "target_mbps": target,
            "seeds": len(g),
        }
        for col in ("offered", "goodput", "delivered"):
            row[f"{col}_mbps"] = float(g[col].mean())
            row[f"{col}_sd"] = float(g[col].std(ddof=1)) if len(g) > 1 else math.nan
        row["delivered_vs_target"] = row["delivered_mbps"] / target - 1
        rows.append(row)
        if not reference:
            continue
        for what, measured, goal in (
            ("delivered wire load vs calibrated target", g["delivered"], target),
            ("goodput vs offered payload", g["goodput"], float(g["offered"].mean())),
        ):
            mean, lo, hi = t_interval(measured.tolist(), CONFIDENCE)
            checks.append(
                {
                    "check": f"{part}, {config}: {what} ({direction}, Mb/s)",
                    "target": goal,
                    "measured": mean,
                    "interval": [_finite(lo), _finite(hi)],
                    "seeds": len(g),
                    "tolerance": LOAD_TOLERANCE,
                    "ok": bool(abs(mean / goal - 1) <= LOAD_TOLERANCE),
                }
            )
    note = (
        "Offered: payload the workloads asked to send in the measurement window; goodput: "
        "payload delivered in order; delivered: wire bytes through the bottleneck (the "
        "calibration's measure). Checked on the uncongested reference runs, means over seeds "
        f"within {100 * LOAD_TOLERANCE:g}%."
    )
    return OperatingPoint(pd.DataFrame(rows), checks, note)


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


@dataclass(frozen=True)
class Results:
    """The stored runs of a reproduction, handed to the study's methods."""

    out: Path
    mode: str
    parts: tuple[str, ...]
    seeds: Mapping[str, int] = field(default_factory=dict)
    """Seeds 1..n of each part decided on in this look (runs of later seeds are ignored)."""
    _connections: dict[str, duckdb.DuckDBPyConnection] = field(
        default_factory=dict, compare=False, repr=False
    )

    def open(self, part: str) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection on one part's sweep folder (tables as in ``docs/results.md``),
        opened once: later calls return the same connection.

        The runs are not verified again here: :func:`reproduce` has just passed every part
        through :func:`~ecnlab.sweep.run_sweeps`, which checks each stored run of the look against
        its manifest (recomputing a damaged one) and writes the new ones with their hashes. (A
        full mode's parts hold tens of gigabytes: hashing them once more took minutes a look.)"""
        if part not in self.parts:
            raise KeyError(f"no part {part!r} in this reproduction ({', '.join(self.parts)})")
        if part not in self._connections:
            self._connections[part] = store.open_results(self.out / "sweeps" / part, check=False)
        return self._connections[part]

    def run_dir(self, part: str, run_id: str) -> Path:
        """The folder of one stored run of ``part``."""
        return store.SweepDir(self.out / "sweeps" / part).runs / run_id

    def run_table(
        self, part: str, run_id: str, table: str, columns: Sequence[str]
    ) -> pd.DataFrame:
        """``columns`` of one stored table of one run of ``part``, read from that run's own
        file (a query on the part's view of the table reads every run's file)."""
        return store.read_table(self.run_dir(part, run_id), table, columns).to_pandas()


class Study:
    """A reproduction of one seed study. Subclasses set the attributes and methods."""

    name: str = ""
    """The CLI name (``ecnlab reproduce NAME``)."""
    title: str = ""
    """The paper, as cited in the write-up."""
    doc: str = ""
    """The write-up, relative to the project root (``docs/reproduction/NAME.md``)."""
    data_dir: Path = Path(".")
    """Where relative ``base`` paths and calibration files of the sweeps are found."""
    seeds: Mapping[str, SeedPlan] = {"quick": SeedPlan(3, 2, 7), "full": SeedPlan(5, 5, 15)}
    """Seeds per mode (:meth:`seed_plan` may give a part its own)."""
    claims: Sequence[ClaimSpec] = ()
    """The claims, fixed before the runs."""

    def sweeps(self, mode: str) -> list[dict[str, Any]]:
        """The sweep definitions of ``mode`` (each a dict with a unique ``name``)."""
        raise NotImplementedError

    def seed_plan(self, mode: str, part: str) -> SeedPlan:
        """The seeds of one part in ``mode`` (default: :attr:`seeds`)."""
        return self.seeds[mode]

    def measures(self, results: Results) -> dict[str, pd.DataFrame]:
        """Per part, one row per run (columns ``seed``, the labels, the measures)."""
        return {}

    def operating_point(
        self, results: Results, frames: Mapping[str, pd.DataFrame]
    ) -> OperatingPoint | None:
        """The load the runs reached (None: the study has no calibrated load)."""
        return None

    def analyze(self, results: Results, frames: Mapping[str, pd.DataFrame]) -> Findings:
        """Figures, tables and notes."""
        return Findings()


@dataclass
class StudyReport:
    """What :func:`reproduce` did: the decided claims, where everything went, and the sweeps'
    reports (runs summed over the looks)."""

    study: str
    mode: str
    out: Path
    claims: list[dict[str, Any]]
    operating_point: OperatingPoint | None
    seeds: dict[str, int]
    sweeps: dict[str, SweepReport]
    wall_s: float
    looks: int = 1
    """How many times the claims could be decided (the Bonferroni divisor)."""
    looks_run: int = 1
    """How many of those looks were made (fewer when the claims resolved early or the caller
    stopped at ``max_looks``)."""
    confidence: float = CONFIDENCE
    """The level of every interval: :func:`interval_confidence` of ``looks``."""

    @property
    def failed_runs(self) -> int:
        return sum(r.failed for r in self.sweeps.values())

    def counts(self, origin: str = "paper") -> dict[str, int]:
        """Verdicts of the claims of ``origin`` (``paper`` or ``ours``)."""
        return verdict_counts(c for c in self.claims if c["origin"] == origin)


def reproduce(
    study: Study,
    mode: str = "quick",
    out: str | Path | None = None,
    *,
    jobs: int | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    progress: bool | None = None,
    on_part: Callable[[int, int, str, int, int], None] | None = None,
    max_looks: int | None = None,
    new_definition: bool = False,
) -> StudyReport:
    """Run (or resume) every part of ``study`` in ``mode``, decide its claims, write the report.

    Args:
        study: the study (:func:`ecnlab.reproduce.get_study`).
        mode: ``"quick"`` or ``"full"``.
        out: the output folder (default ``results/<study>-<mode>``), created or resumed.
        jobs, backend, scheduler, progress: as :func:`ecnlab.run_sweep`.
        on_part: called as ``on_part(index, count, name, runs, look)`` for each part before
            a look's runs start (the look runs its parts through one pool:
            :func:`~ecnlab.sweep.run_sweeps`).
        max_looks: stop after this many looks (default: all the mode's seed plans allow).
            Claims still unresolved then are reported unresolved; the intervals stay at the
            level of the whole plan (:func:`interval_confidence` of its looks), so a decision
            made at an early stop is the one the full sequence would have made at that look.
        new_definition: replace the parts ``out`` holds even if this version of ecnlab
            defines their runs differently (the study's scenarios or ecnlab's defaults
            changed: other run ids); their runs not in the new definition move to each part's
            ``superseded/``. Without it such a folder is refused.

    Returns:
        A :class:`StudyReport`. The claims are written even if some runs failed (a failed
        run's seed shows in each claim it feeds as a value that is not finite); ``failed_runs``
        says how many.

    Raises:
        SweepError: ``mode`` is unknown, ``max_looks`` is below 1, a part is invalid (nothing
            has run), or ``out`` holds another reproduction's parts.
        ecnlab.sweep.DiskFullError: a run could not be stored for want of disk space; the look
            stopped without deciding (the stored runs are kept; the same call resumes).
    """
    if mode not in MODES:
        raise SweepError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    if max_looks is not None and max_looks < 1:
        raise SweepError(f"max_looks ({max_looks}) must be at least 1")
    root = Path(out) if out is not None else Path("results") / f"{study.name}-{mode}"
    definitions = study.sweeps(mode)
    names = [d.get("name") for d in definitions]
    if len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
        raise SweepError(f"study {study.name!r}: every part needs a unique name ({names})")
    plans = {n: study.seed_plan(mode, n) for n in names}
    looks = max(p.looks for p in plans.values())
    confidence = interval_confidence(looks)
    if any("seeds" in d for d in definitions):
        raise SweepError(f"study {study.name!r}: parts take their seeds from the seed plan")
    _check_claims(study, names)
    # Expand every part at the cap first (each scenario checked by the core) so a bad one
    # stops the reproduction before anything runs.
    at_cap = {
        name: {r.run_id for r in s.runs()}
        for name, s in part_sweeps(study, mode, at="cap").items()
    }
    _check_mode(root, study.name, mode)
    start = time.perf_counter()
    seeds = {n: plans[n].start for n in names}
    reports: dict[str, SweepReport] = {}
    last = looks if max_looks is None else min(looks, max_looks)
    for look in range(1, last + 1):
        parts = []
        for i, d in enumerate(definitions):
            s = sweep_from_dict(
                {**d, "seeds": seeds[d["name"]]}, study.data_dir / f"{d['name']}.toml"
            )
            if on_part is not None:
                on_part(i + 1, len(definitions), s.name, len({r.run_id for r in s.runs()}), look)
            parts.append((s, root / "sweeps" / s.name))
        # One pool for the look's parts: no worker waits for the end of a part.
        look_reports = run_sweeps(
            parts,
            jobs=jobs,
            backend=backend,
            scheduler=scheduler,
            progress=progress,
            # The first look replaces an earlier definition, keeping the stored runs of the
            # seeds later looks may ask for; later looks add seeds.
            new_definition=new_definition and look == 1,
            keep=[at_cap[s.name] for s, _ in parts],
        )
        for (s, _), r in zip(parts, look_reports):
            reports[s.name] = _merge(reports.get(s.name), r)
        results = Results(root, mode, tuple(names), dict(seeds))
        frames = _restrict(study.measures(results), seeds)
        records = [c.evaluate(frames, confidence) for c in study.claims]
        grow = {
            p
            for c, rec in zip(study.claims, records)
            if rec["verdict"] == "unresolved"
            for p in c.parts
            if seeds[p] < plans[p].cap
        }
        if not grow or look == last:
            break
        for p in grow:
            seeds[p] = min(plans[p].cap, seeds[p] + plans[p].step)
    findings = study.analyze(results, frames)
    op = study.operating_point(results, frames)
    report = StudyReport(
        study=study.name,
        mode=mode,
        out=root,
        claims=records,
        operating_point=op,
        seeds=dict(seeds),
        sweeps=reports,
        wall_s=time.perf_counter() - start,
        looks=looks,
        looks_run=look,
        confidence=confidence,
    )
    _write(root, study, plans, findings, report)
    return report


def part_sweeps(study: Study, mode: str, *, at: str = "start") -> dict[str, Sweep]:
    """The parts of ``study`` in ``mode`` as sweeps, with the seeds of their plan's ``start``
    or ``cap`` (part name -> sweep)."""
    if at not in ("start", "cap"):
        raise ValueError(f"at ({at!r}) must be 'start' or 'cap'")
    out = {}
    for d in study.sweeps(mode):
        n = getattr(study.seed_plan(mode, d["name"]), at)
        out[d["name"]] = sweep_from_dict({**d, "seeds": n}, study.data_dir / f"{d['name']}.toml")
    return out


def _check_claims(study: Study, parts: Sequence[str]) -> None:
    ids = [c.id for c in study.claims]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate:
        raise ValueError(f"study {study.name!r}: two claims have the id {duplicate!r}")
    for c in study.claims:
        unknown = c.parts - set(parts)
        if unknown:
            raise ValueError(f"claim {c.id!r} reads parts the study lacks: {sorted(unknown)}")


def _restrict(
    frames: Mapping[str, pd.DataFrame], seeds: Mapping[str, int]
) -> dict[str, pd.DataFrame]:
    """Only the seeds decided on in this look (a resumed folder may hold more)."""
    out = {}
    for part, frame in frames.items():
        n = seeds.get(part)
        out[part] = (
            frame if n is None else frame[frame["seed"].between(1, n)].reset_index(drop=True)
        )
    return out


def _merge(a: SweepReport | None, b: SweepReport) -> SweepReport:
    """One part's report over two looks: ``b``'s runs include ``a``'s (seeds only grow), so
    the runs found stored are ``b``'s less those ``a`` computed."""
    if a is None:
        return b
    return SweepReport(
        out=b.out,
        total=b.total,
        skipped=b.skipped - a.done,
        damaged=a.damaged + b.damaged,
        superseded=a.superseded + b.superseded,
        done=a.done + b.done,
        failed=b.failed,
        retried=a.retried + b.retried,
        wall_s=a.wall_s + b.wall_s,
        errors=b.errors,
    )


def _check_mode(root: Path, name: str, mode: str) -> None:
    """Refuse to mix two studies or two modes in one folder (their runs would be pooled)."""
    marker = root / "reproduction.json"
    wanted = {"study": name, "mode": mode}
    if marker.exists():
        try:
            found = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise SweepError(
                f"{marker}: unreadable ({e}); remove it or use another --out"
            ) from None
        if {k: found.get(k) for k in wanted} != wanted:
            raise SweepError(
                f"{root} holds the {found.get('study')} reproduction in {found.get('mode')} "
                f"mode, not {name} in {mode} mode; use another --out"
            )
        return
    root.mkdir(parents=True, exist_ok=True)
    store._write_json_atomic(marker, wanted)


def _write(
    root: Path,
    study: Study,
    plans: Mapping[str, SeedPlan],
    findings: Findings,
    report: StudyReport,
) -> None:
    from .. import __version__

    ids = [c["id"] for c in report.claims]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate:
        raise ValueError(f"study {study.name!r}: two claims have the id {duplicate!r}")
    document = {
        "study": study.name,
        "title": study.title,
        "mode": report.mode,
        "ecnlab": __version__,
        "rule": RULE,
        "confidence": CONFIDENCE,
        "looks": report.looks,
        "looks_run": report.looks_run,
        "interval_confidence": report.confidence,
        "seed_plans": {
            n: {"start": p.start, "step": p.step, "cap": p.cap} for n, p in plans.items()
        },
        "seeds": report.seeds,
        "counts": {"paper": report.counts("paper"), "ours": report.counts("ours")},
        "operating_point": report.operating_point.record() if report.operating_point else None,
        "runs": {
            name: {"runs": r.total, "failed": r.failed, "errors": r.errors}
            for name, r in report.sweeps.items()
        },
        "claims": report.claims,
    }
    json.dumps(document, allow_nan=False)  # fail here, naming nothing half-written
    store._write_json_atomic(root / "claims.json", document)
    (root / "figures").mkdir(exist_ok=True)
    for key, (_, fig) in findings.figures.items():
        fig.savefig(root / "figures" / f"{key}.png", dpi=120)
    (root / "tables").mkdir(exist_ok=True)
    for key, (_, frame) in findings.tables.items():
        frame.to_csv(root / "tables" / f"{key}.csv")
    if report.operating_point is not None:
        report.operating_point.rows.to_csv(root / "tables" / "operating-point.csv", index=False)
    write_page(root / "report.html", _page(study, findings, report))


def format_value(value: Any, limit: int | None = None) -> str:
    """A claim's ``paper`` or ``ours`` in a few characters, cut to
    ``limit`` characters with an ellipsis when given (``claims.json`` keeps everything)."""
    text = _format(value)
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 0)] + "…"
    return text


def _format(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_format(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:.4g}"
    if value is None:
        return "-"
    return str(value)


def format_estimate(record: Mapping[str, Any], limit: int | None = None) -> str:
    """A decided claim's estimate with its interval, ``1.23 [0.9, 1.6]`` (one per test for a
    claim of several tests)."""
    tests = record.get("tests") or []
    if not tests:
        return format_value(record.get("ours"), limit)
    parts = []
    for t in tests:
        lo, hi = t["interval"]
        iv = f"[{_num(lo)}, {_num(hi)}]"
        parts.append((f"{t['name']}: " if t["name"] else "") + f"{_num(t['estimate'])} {iv}")
    text = "; ".join(parts)
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 0)] + "…"
    return text


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.3g}"


_VERDICT_STYLE = {
    "holds": "background:#d7f0d7",
    "reversed": "background:#f5d0d0",
    "unresolved": "background:#f3ecc8",
}


def _page(study: Study, findings: Findings, report: StudyReport) -> str:
    title = f"ecnlab reproduction: {study.title} ({report.mode})"
    paper, ours = report.counts("paper"), report.counts("ours")
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        "<p>"
        + html.escape(
            f"Paper claims: {paper['holds']} hold, {paper['reversed']} reversed, "
            f"{paper['unresolved']} unresolved"
            + (
                f"; our own comparisons: {ours['holds']} hold, {ours['reversed']} reversed, "
                f"{ours['unresolved']} unresolved"
                if sum(ours.values())
                else ""
            )
            + f". Write-up: {study.doc}."
        )
        + "</p>",
        (
            f"<p>{html.escape(RULE)} Here: {report.looks_run} of {report.looks} look(s) made, "
            f"intervals at {100 * report.confidence:.2f}%, seeds per part: "
            f"{html.escape(', '.join(f'{k} {v}' for k, v in report.seeds.items()))}.</p>"
        ),
    ]
    parts += [f"<p>{html.escape(n)}</p>" for n in findings.notes]
    op = report.operating_point
    if op is not None:
        parts.append("<h2>Operating point</h2>")
        status = "reached" if op.ok else "NOT reached"
        parts.append(f"<p><b>{status}</b>. {html.escape(op.note)}</p>")
        parts.append(html_table(pd.DataFrame(op.checks)))
        parts.append("<details><summary>every configuration</summary>")
        parts.append(html_table(op.rows.set_index(["part", "configuration"])))
        parts.append("</details>")
    parts.append("<h2>Claims</h2>")
    shown: set[str] = set()
    for c in report.claims:
        parts.append(_claim_html(c, findings, shown))
    for key, (heading, frame) in findings.tables.items():
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts.append(html_table(frame))
    for key, (heading, fig) in findings.figures.items():
        if key in shown:
            continue
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts.append(figure_html(fig, key))
    parts.append("<h2>Runs</h2>")
    parts.append(
        f"<p>This invocation took {report.wall_s:.0f} s of wall time; each look ran its parts' "
        "runs through one pool of workers.</p>"
    )
    sweep_rows = [
        {
            "part": name,
            "runs": r.total,
            "run now": r.done,
            "already stored": r.skipped,
            "failed": r.failed,
        }
        for name, r in report.sweeps.items()
    ]
    columns = ["part", "runs", "run now", "already stored", "failed"]
    parts.append(html_table(pd.DataFrame(sweep_rows, columns=columns).set_index("part")))
    parts.append("<h2>Versions</h2>")
    parts.append(versions_html())
    return html_page(title, parts)


def _claim_html(c: Mapping[str, Any], findings: Findings, shown: set[str]) -> str:
    """One claim: a summary line (verdict, paper, ours with its interval), the evidence folded
    under it, and its figure the first time that figure is named."""
    verdict = c["verdict"]
    origin = " (ours)" if c["origin"] == "ours" else ""
    line = (
        f"<span style='{_VERDICT_STYLE[verdict]};padding:0 0.4em'>{verdict}</span> "
        f"<b>{html.escape(c['id'])}</b>{origin}: {html.escape(c['claim'])} "
        f"&mdash; paper: {html.escape(format_value(c['paper']))}; ours: "
        f"{html.escape(format_estimate(c))}"
        + (f" (n = {c['n_seeds']})" if c.get("n_seeds") is not None else "")
    )
    body = []
    if c.get("quote"):
        body.append(
            f"<p><i>&ldquo;{html.escape(c['quote'])}&rdquo;</i> ({html.escape(c['location'])})</p>"
        )
    body.append(f"<p><b>Criterion:</b> {html.escape(c['criterion'])}</p>")
    if c.get("justification"):
        body.append(f"<p><b>Why:</b> {html.escape(c['justification'])}</p>")
    if c.get("changed_after_runs"):
        body.append(f"<p><b>Changed after the runs:</b> {html.escape(c['changed_after_runs'])}</p>")
    if c.get("tests"):
        rows = [
            {
                "test": t["name"] or c["id"],
                "verdict": t["verdict"],
                "estimate": _num(t["estimate"]),
                "interval": f"[{_num(t['interval'][0])}, {_num(t['interval'][1])}]",
                "n": t["n_seeds"],
                "per seed": ", ".join(f"{k}: {_num(v)}" for k, v in t["values"].items()),
                "not finite": ", ".join(f"{k}: {v}" for k, v in t["not_finite"].items()),
            }
            for t in c["tests"]
        ]
        body.append(html_table(pd.DataFrame(rows).set_index("test")))
    elif c.get("ours") is not None:
        body.append(f"<pre>{html.escape(json.dumps(c['ours'], indent=1))}</pre>")
    key = c.get("figure")
    if key and key in findings.figures and key not in shown:
        shown.add(key)
        heading, fig = findings.figures[key]
        body.append(f"<h3>{html.escape(heading)}</h3>" + figure_html(fig, key))
    return (
        f"<details style='margin:0.4em 0'><summary>{line}</summary>"
        f"<div style='margin-left:1.5em'>{''.join(body)}</div></details>"
    )
