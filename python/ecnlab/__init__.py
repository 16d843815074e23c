"""ecnlab: a packet-level laboratory for ECN, AQM and TCP congestion control.

The simulator is written in Rust (``ecnlab._core``); this package loads scenarios, runs them
and returns the results as pyarrow tables::

    import ecnlab

    scenario = ecnlab.load_scenario("examples/dumbbell-bulk.toml", ["duration_s=10"])
    result = ecnlab.run(scenario, seed=1)
    result.flows.to_pandas()
    ecnlab.write_run(result, "runs/bulk")

Sweeps (``docs/sweeps.md``) run many scenarios and store them together::

    ecnlab.run_sweep("examples/sweeps/web-load.toml", "results/web-load", jobs=2)
    con = ecnlab.open_results("results/web-load")      # DuckDB views: runs, exchanges, flows...
    con.sql("SELECT load_label, avg(utilization_down) FROM runs GROUP BY ALL").show()

Scenario format: ``docs/scenario.md``; result tables: ``docs/results.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._core import __version__

if TYPE_CHECKING:
    from ._load import resolve_load
    from ._result import TABLES, Result
    from ._run import run
    from ._scenario import load_scenario
    from .calibration import calibrate, calibrate_directions
    from .store import open_results, read_run, write_run
    from .sweep import load_sweep, run_sweep

# The public names load their modules on first use (PEP 562), so ``import ecnlab._core`` or a
# CLI command that needs no tables does not pay for importing pyarrow.
_LAZY = {
    "TABLES": "._result",
    "Result": "._result",
    "run": "._run",
    "load_scenario": "._scenario",
    "calibrate": ".calibration",
    "calibrate_directions": ".calibration",
    "resolve_load": "._load",
    "read_run": ".store",
    "write_run": ".store",
    "open_results": ".store",
    "load_sweep": ".sweep",
    "run_sweep": ".sweep",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        hint = " (it is ecnlab.open_results)" if name == "open" else ""
        raise AttributeError(f"module 'ecnlab' has no attribute {name!r}{hint}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "TABLES",
    "Result",
    "__version__",
    "calibrate",
    "calibrate_directions",
    "load_scenario",
    "load_sweep",
    "open_results",
    "read_run",
    "resolve_load",
    "run",
    "run_sweep",
    "write_run",
]
