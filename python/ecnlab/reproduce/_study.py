"""The machinery every reproduction shares: parts run as sweeps, claims, figures, the report.

A study (one module per seed paper, :data:`ecnlab.reproduce.STUDIES`) says two things:

* which sweeps to run for a mode (``quick`` or ``full``): :meth:`Study.sweeps` returns sweep
  definitions as dicts (the contents of a sweep file, ``docs/sweeps.md``), each with a
  ``name``; a definition's ``base`` may be the scenario itself or a file beside the study's
  data folder;
* what the runs show: :meth:`Study.analyze` reads the stored results and returns
  :class:`Findings` (claims, figures, tables).

:func:`reproduce` runs every part into ``OUT/sweeps/<name>/`` through :func:`run_sweep` (so an
interrupted reproduction resumes where it stopped, locally or on Dask, with identical
results), then writes ``OUT/claims.json``, ``OUT/figures/*.png``, ``OUT/tables/*.csv`` and the
self-contained page ``OUT/report.html``.
"""

from __future__ import annotations

import html
import json
import math
import statistics
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
from ..sweep import SweepError, SweepReport, run_sweep, sweep_from_dict

__all__ = [
    "MODES",
    "Claim",
    "Findings",
    "Results",
    "Study",
    "StudyReport",
    "claim",
    "format_value",
    "per_seed",
    "reproduce",
    "summary",
]

MODES = ("quick", "full")

CLAIM_KEYS = ("id", "claim", "paper", "ours", "criterion", "passed")


def summary(values: Iterable[float]) -> dict[str, Any]:
    """Mean and spread of one figure over seeds: ``{mean, sd, min, max, n, values}``.

    ``sd`` is the sample standard deviation (None for one value). Non-finite values are kept
    in ``values`` (as None, so the JSON stays valid) and left out of the statistics.
    """
    raw = [float(v) for v in values]
    finite = [v for v in raw if math.isfinite(v)]
    return {
        "mean": statistics.fmean(finite) if finite else None,
        "sd": statistics.stdev(finite) if len(finite) > 1 else None,
        "min": min(finite) if finite else None,
        "max": max(finite) if finite else None,
        "n": len(finite),
        "values": [v if math.isfinite(v) else None for v in raw],
    }


@dataclass(frozen=True)
class Claim:
    """One claim of the paper tested by the runs (one entry of ``claims.json``).

    ``paper`` is the paper's figure or statement (a number, a string, or None when the paper
    states only an ordering); ``ours`` is what ecnlab measured, usually :func:`summary` of
    per-seed values or a dict of them; ``criterion`` says in words how ``passed`` was decided.
    """

    id: str
    claim: str
    paper: Any
    ours: Any
    criterion: str
    passed: bool

    def record(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in CLAIM_KEYS}


def claim(id: str, text: str, *, paper: Any, ours: Any, criterion: str, passed: bool) -> Claim:
    """A :class:`Claim`, with ``passed`` coerced to a plain bool (numpy bools are not JSON)."""
    return Claim(id, text, paper, ours, criterion, bool(passed))


@dataclass
class Findings:
    """What a study's analysis produced: claims, named figures and tables, and notes.

    Figures and tables are keyed by a file-name stem (``fig2-red``); their titles say what
    they show. The notes are short paragraphs printed in the report above the claims.
    """

    claims: list[Claim] = field(default_factory=list)
    figures: dict[str, tuple[str, Figure]] = field(default_factory=dict)
    tables: dict[str, tuple[str, pd.DataFrame]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def figure(self, key: str, title: str, fig: Figure) -> None:
        self.figures[key] = (title, fig)

    def table(self, key: str, title: str, frame: pd.DataFrame) -> None:
        self.tables[key] = (title, frame)


@dataclass(frozen=True)
class Results:
    """The stored runs of a reproduction, handed to :meth:`Study.analyze`."""

    out: Path
    mode: str
    parts: tuple[str, ...]

    def open(self, part: str) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection on one part's sweep folder (tables as in ``docs/results.md``)."""
        if part not in self.parts:
            raise KeyError(f"no part {part!r} in this reproduction ({', '.join(self.parts)})")
        return store.open_results(self.out / "sweeps" / part)


class Study:
    """A reproduction of one seed study. Subclasses set the attributes and two methods."""

    name: str = ""
    """The CLI name (``ecnlab reproduce NAME``)."""
    title: str = ""
    """The paper, as cited in the write-up."""
    doc: str = ""
    """The write-up, relative to the project root (``docs/reproduction/NAME.md``)."""
    data_dir: Path = Path(".")
    """Where relative ``base`` paths and calibration files of the sweeps are found."""

    def sweeps(self, mode: str) -> list[dict[str, Any]]:
        """The sweep definitions of ``mode`` (each a dict with a unique ``name``)."""
        raise NotImplementedError

    def analyze(self, results: Results) -> Findings:
        """Read the stored runs and return the claims, figures and tables."""
        raise NotImplementedError


@dataclass
class StudyReport:
    """What :func:`reproduce` did: the claims, where everything went, and the sweeps' reports."""

    study: str
    mode: str
    out: Path
    claims: list[Claim]
    sweeps: dict[str, SweepReport]
    wall_s: float

    @property
    def failed_runs(self) -> int:
        return sum(r.failed for r in self.sweeps.values())


def reproduce(
    study: Study,
    mode: str = "quick",
    out: str | Path | None = None,
    *,
    jobs: int | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    progress: bool | None = None,
    on_part: Callable[[int, int, str, int], None] | None = None,
) -> StudyReport:
    """Run (or resume) every part of ``study`` in ``mode`` and write its claims and report.

    Args:
        study: the study (:func:`ecnlab.reproduce.get_study`).
        mode: ``"quick"`` or ``"full"``.
        out: the output folder (default ``results/<study>-<mode>``), created or resumed.
        jobs, backend, scheduler, progress: as :func:`ecnlab.run_sweep`.
        on_part: called as ``on_part(index, count, name, runs)`` before each part runs.

    Returns:
        A :class:`StudyReport`. The claims are written even if some runs failed (their
        analysis then sees fewer runs); ``failed_runs`` says how many.

    Raises:
        SweepError: ``mode`` is unknown, a part is invalid (nothing has run), or ``out`` holds
            another reproduction's parts.
    """
    if mode not in MODES:
        raise SweepError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    root = Path(out) if out is not None else Path("results") / f"{study.name}-{mode}"
    definitions = study.sweeps(mode)
    names = [d.get("name") for d in definitions]
    if len(set(names)) != len(names) or not all(isinstance(n, str) and n for n in names):
        raise SweepError(f"study {study.name!r}: every part needs a unique name ({names})")
    # Expand every part first (each scenario checked by the core) so a bad one stops the
    # reproduction before anything runs.
    sweeps = [sweep_from_dict(d, study.data_dir / f"{d['name']}.toml") for d in definitions]
    run_counts = [len({r.run_id for r in s.runs()}) for s in sweeps]
    _check_mode(root, study.name, mode)
    start = time.perf_counter()
    reports: dict[str, SweepReport] = {}
    for i, (s, count) in enumerate(zip(sweeps, run_counts)):
        if on_part is not None:
            on_part(i + 1, len(sweeps), s.name, count)
        reports[s.name] = run_sweep(
            s,
            root / "sweeps" / s.name,
            jobs=jobs,
            backend=backend,
            scheduler=scheduler,
            progress=progress,
        )
    findings = study.analyze(Results(root, mode, tuple(names)))
    _write(root, study, mode, findings, reports)
    return StudyReport(
        study=study.name,
        mode=mode,
        out=root,
        claims=findings.claims,
        sweeps=reports,
        wall_s=time.perf_counter() - start,
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
    mode: str,
    findings: Findings,
    reports: Mapping[str, SweepReport],
) -> None:
    for c in findings.claims:
        json.dumps(c.record(), allow_nan=False)  # fail here, naming nothing half-written
    ids = [c.id for c in findings.claims]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate:
        raise ValueError(f"study {study.name!r}: two claims have the id {duplicate!r}")
    store._write_json_atomic(root / "claims.json", [c.record() for c in findings.claims])
    (root / "figures").mkdir(exist_ok=True)
    for key, (_, fig) in findings.figures.items():
        fig.savefig(root / "figures" / f"{key}.png", dpi=120)
    (root / "tables").mkdir(exist_ok=True)
    for key, (_, frame) in findings.tables.items():
        frame.to_csv(root / "tables" / f"{key}.csv")
    write_page(root / "report.html", _page(study, mode, findings, reports))


def format_value(value: Any, limit: int | None = None) -> str:
    """A claim's ``paper`` or ``ours`` in a few characters (mean ± sd for a summary), cut to
    ``limit`` characters with an ellipsis when given (``claims.json`` keeps everything)."""
    text = _format(value)
    if limit is not None and len(text) > limit:
        return text[: max(limit - 1, 0)] + "…"
    return text


def _format(value: Any) -> str:
    if isinstance(value, dict) and "mean" in value and "n" in value:
        mean, sd = value["mean"], value["sd"]
        if mean is None:
            return "-"
        return f"{mean:.4g} ± {sd:.2g}" if sd is not None else f"{mean:.4g}"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_format(v)}" for k, v in value.items())
    if isinstance(value, float):
        return f"{value:.4g}"
    if value is None:
        return "-"
    return str(value)


def _page(study: Study, mode: str, findings: Findings, reports: Mapping[str, SweepReport]) -> str:
    title = f"ecnlab reproduction: {study.title} ({mode})"
    passed = sum(c.passed for c in findings.claims)
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        (
            f"<p>{passed} of {len(findings.claims)} claims hold. Write-up: "
            f"<code>{html.escape(study.doc)}</code>.</p>"
        ),
    ]
    parts += [f"<p>{html.escape(n)}</p>" for n in findings.notes]
    parts.append("<h2>Claims</h2>")
    rows = [
        {
            "id": c.id,
            "claim": c.claim,
            "paper": format_value(c.paper),
            "ours (mean ± sd over seeds)": format_value(c.ours),
            "criterion": c.criterion,
            "holds": "yes" if c.passed else "NO",
        }
        for c in findings.claims
    ]
    parts.append(html_table(pd.DataFrame(rows).set_index("id")) if rows else "<p>none</p>")
    for key, (heading, frame) in findings.tables.items():
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts.append(html_table(frame))
    for key, (heading, fig) in findings.figures.items():
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        parts.append(figure_html(fig, key))
    parts.append("<h2>Runs</h2>")
    sweep_rows = [
        {
            "part": name,
            "runs": r.total,
            "run now": r.done,
            "already stored": r.skipped,
            "failed": r.failed,
            "wall (s)": round(r.wall_s, 1),
        }
        for name, r in reports.items()
    ]
    parts.append(html_table(pd.DataFrame(sweep_rows).set_index("part")))
    parts.append("<h2>Versions</h2>")
    parts.append(versions_html())
    return html_page(title, parts)


def per_seed(
    frame: pd.DataFrame, value: str, keys: Sequence[str], *, seed: str = "seed"
) -> dict[tuple[Any, ...], list[float]]:
    """Group ``frame`` by ``keys`` and list ``value`` in seed order: key tuple -> values."""
    out: dict[tuple[Any, ...], list[float]] = {}
    for key, part in frame.sort_values(seed).groupby(list(keys), sort=False, dropna=False):
        out[key if isinstance(key, tuple) else (key,)] = [float(v) for v in part[value]]
    return out
