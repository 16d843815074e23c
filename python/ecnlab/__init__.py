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

from ._core import __version__
from ._result import TABLES, Result
from ._run import run
from ._scenario import load_scenario
from .store import read_run, write_run

__all__ = [
    "TABLES",
    "Result",
    "__version__",
    "load_scenario",
    "read_run",
    "run",
    "write_run",
]
