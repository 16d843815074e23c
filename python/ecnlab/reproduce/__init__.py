"""Reproductions of the seed studies: ``ecnlab reproduce NAME [--quick | --full]``.

Each study is a module with a ``STUDY`` object (:class:`Study`); :data:`STUDIES` maps the CLI
name to the module, imported only when asked for. The shared machinery (parts run as
resumable sweeps, ``claims.json``, figures, the HTML report) is in :mod:`._study`; the
write-ups are in ``docs/reproduction/``.
"""

from __future__ import annotations

import importlib

from ._study import (
    LOAD_TOLERANCE,
    MODES,
    Findings,
    OperatingPoint,
    Results,
    SeedPlan,
    Study,
    StudyReport,
    calibrated_load,
    format_estimate,
    format_value,
    part_sweeps,
    reproduce,
)
from .verdict import ClaimSpec, Test

__all__ = [
    "LOAD_TOLERANCE",
    "MODES",
    "STUDIES",
    "ClaimSpec",
    "Findings",
    "OperatingPoint",
    "Results",
    "SeedPlan",
    "Study",
    "StudyReport",
    "Test",
    "calibrated_load",
    "format_estimate",
    "format_value",
    "get_study",
    "part_sweeps",
    "reproduce",
]

STUDIES: dict[str, str] = {
    "ecn-plus": ".ecn_plus",
    "heterogeneous": ".heterogeneous",
    "dcn": ".dcn",
    "abe": ".abe",
    "l4s": ".l4s",
}
"""CLI name -> module (relative to this package) defining ``STUDY``."""


def get_study(name: str) -> Study:
    """The study called ``name``.

    Raises:
        KeyError: no such study; the message lists the known ones.
    """
    if name not in STUDIES:
        known = ", ".join(sorted(STUDIES)) or "none yet"
        raise KeyError(f"unknown study {name!r} (known: {known})")
    module = importlib.import_module(STUDIES[name], __name__)
    study: Study = module.STUDY
    return study
