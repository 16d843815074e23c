"""Cross-validation against ns-2.35, the simulator the seed studies ran on.

``ecnlab crosscheck ns2 SCENARIO.toml`` (:func:`crosscheck_ns2`) translates a scenario into an
ns-2 Tcl script (:mod:`.translate`), runs ``ns`` on it, reads its outputs into tables shaped
like ecnlab's (:mod:`.ns2tables`), runs ecnlab on the same scenario and seed, and compares the
measures of both (:mod:`.compare`). What ns-2.35 cannot express is refused with one line naming
the field (:class:`Untranslatable`). docs/validation.md has the validation suite built on it.
"""

from __future__ import annotations

from .compare import Comparison, Row, compare, measures, relative_difference
from .run import Crosscheck, Ns2Error, Ns2NotFound, crosscheck_ns2, find_ns, run_ns2
from .translate import BulkFlow, Translation, Untranslatable, check, translate

__all__ = [
    "BulkFlow",
    "Comparison",
    "Crosscheck",
    "Ns2Error",
    "Ns2NotFound",
    "Row",
    "Translation",
    "Untranslatable",
    "check",
    "compare",
    "crosscheck_ns2",
    "find_ns",
    "measures",
    "relative_difference",
    "run_ns2",
    "translate",
]
