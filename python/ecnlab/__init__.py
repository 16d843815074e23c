"""ecnlab: a packet-level laboratory for ECN, AQM and TCP congestion control.

The simulator is written in Rust (``ecnlab._core``); this package loads scenarios, runs them
and returns the results as pyarrow tables::

    import ecnlab

    scenario = ecnlab.load_scenario("examples/dumbbell-bulk.toml", ["duration_s=10"])
    result = ecnlab.run(scenario, seed=1)
    result.flows.to_pandas()
    ecnlab.write_run(result, "runs/bulk")

Scenario format: ``docs/scenario.md``; result tables: ``docs/results.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._core import __version__

if TYPE_CHECKING:
    from ._result import TABLES, Result
    from ._run import run
    from ._scenario import load_scenario
    from .store import read_run, write_run

# The public names load their modules on first use (PEP 562), so ``import ecnlab._core`` or a
# CLI command that needs no tables does not pay for importing pyarrow.
_LAZY = {
    "TABLES": "._result",
    "Result": "._result",
    "run": "._run",
    "load_scenario": "._scenario",
    "read_run": ".store",
    "write_run": ".store",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ecnlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value

__all__ = [
    "TABLES",
    "Result",
    "__version__",
    "load_scenario",
    "read_run",
    "run",
    "write_run",
]
