"""Native core of ecnlab (Rust, PyO3).

This module is the thin binding over the Rust simulator. Most users want
:func:`ecnlab.run`, which drives :class:`Simulation` in chunks, shows progress and converts
the result tables to pyarrow; the functions here are the building blocks it uses.

Scenarios cross the boundary as JSON text: the Rust core owns the schema
(``docs/scenario.md``), validates every field and refuses unknown ones.
"""

from typing import Any

__version__: str
"""Version of the ecnlab crate this module was built from."""

built_with_pgo: bool
"""Whether the simulator was built with its profile-guided optimization profile
(``crates/ecnlab/pgo``; ``ECNLAB_PGO=0`` at build time leaves it out)."""

def schema() -> str:
    """Return the JSON Schema of a scenario, as pretty-printed JSON text."""

def normalize(config_json: str) -> str:
    """Validate a scenario and return it with every default filled in.

    Args:
        config_json: the scenario as JSON text (a TOML file parsed and re-encoded as JSON).

    Returns:
        The normalized scenario as JSON text: every optional field present with its value,
        TCP profile values expanded.

    Raises:
        ValueError: the scenario is invalid. The message names the field, the value and the
            rule, e.g. ``topology.bottleneck.rate_bps (-5) must be positive``.
    """

def estimate(config_json: str) -> dict[str, Any]:
    """Estimate what a run of a valid scenario needs, before it starts.

    Returns:
        ``{"memory_bytes": float, "events": float, "terms": [(path, value, what, bytes)]}``,
        the terms (the fields that drive the estimate) largest first.

    Raises:
        ValueError: the scenario is invalid.
    """

def bytes_text(b: float) -> str:
    """Bytes in the units of the estimate's messages: ``6.5 GB``, ``12.0 kB``, ``512 B``."""

def check_budget(config_json: str, memory_budget: float) -> None:
    """Raise ValueError, naming the fields that drive the estimate, if a run of the scenario
    is estimated (:func:`estimate`) to need more than ``memory_budget`` bytes."""

def workload_plan(config_json: str, index: int, seed: int) -> str:
    """The offered traffic of workload ``index`` in a run of ``seed``, drawn by the workload's
    own generator with no network (the simulator's draws), as JSON text. Times are integer
    nanoseconds; hosts are the scenario's indices.

    ``packmime_http``: ``{"kind", "connections": [{"arrival_ns", "client", "server", "rtt_ns"
    (null: the path's), "rwnd_bytes", "exchanges": [{"request_bytes", "response_bytes",
    "server_delay_ns", "think_ns"}]}]}`` in arrival order. ``web_sessions``: ``{"kind",
    "inter_page_from", "sessions": [{"arrival_ns", "client", "pages": [{"server", "gap_ns",
    "objects": [{"at_ns" (after the page's start), "client", "server", "rtt_ns",
    "rwnd_bytes", "exchanges": [one]}]}]}]}`` in arrival order.

    Raises:
        ValueError: an invalid scenario, or a workload of another kind (the field named).
    """

def hold_benchmark(pending: int, events: int, seed: int) -> tuple[float, int]:
    """Time the event queue alone: the hold model (pop the earliest event, push one 1 ns to
    1 ms after it) on the simulator's calendar queue with ``pending`` events of 16 bytes (the
    size of the simulator's event), ``events`` pop-and-push steps, random stream ``seed``.
    Runs with the GIL released.

    Returns:
        ``(seconds, checksum)``: the wall time of the timed steps (filling the queue is not
        timed) and the sum of the sequence numbers popped (the same for the same arguments).

    Raises:
        ValueError: ``pending`` is 0.
    """

def write_parquet(path: str, columns: dict[str, Any]) -> tuple[int, int]:
    """Write one result table to ``path`` as a Parquet file, with the GIL released.

    ``columns`` is one table of :meth:`Simulation.results` (column name to ``(dtype, bytes)``
    or ``("dict", dictionary, codes)``, in order). The file reads back with pyarrow as the
    file ``pyarrow.parquet.write_table`` writes for the table :func:`ecnlab._result.
    tables_from_native` makes of it (same schema, same values; Snappy pages), so storing a
    run needs no pyarrow. The caller syncs the file.

    Returns:
        ``(rows, bytes)``: the table's row count and the file's size.

    Raises:
        ValueError: malformed columns (unknown dtype, a buffer that is not a whole number of
            values, columns of different lengths, a string code outside its dictionary, or no
            column at all).
        OSError: the file cannot be written.
    """

class Simulation:
    """One simulation run of one scenario with one seed.

    The simulation is advanced explicitly with :meth:`run_until` (the GIL is released while
    it runs), then finalized with :meth:`results`. All randomness derives from ``seed``: the
    same scenario and seed give identical results.
    """

    def __init__(self, config_json: str, seed: int, memory_budget: float | None = None) -> None:
        """Build the network and workloads of a scenario.

        Args:
            config_json: the scenario as JSON text.
            seed: the run seed (an unsigned 64-bit integer).
            memory_budget: bytes; refuse a scenario whose :func:`estimate` exceeds it.

        Raises:
            ValueError: the scenario is invalid (same messages as :func:`normalize`), or its
                estimate exceeds ``memory_budget`` (the message names the fields).
        """

    @property
    def now_ns(self) -> int:
        """Current simulated time, in nanoseconds."""

    @property
    def end_ns(self) -> int:
        """Simulated time at which the run ends (``duration_s``), in nanoseconds."""

    @property
    def events(self) -> int:
        """Number of events processed so far."""

    def run_until(self, t_ns: int, max_events: int = 2**64 - 1) -> bool:
        """Advance the simulation to ``min(t_ns, end_ns)``, or by at most ``max_events``
        events, releasing the GIL (a bounded call keeps Ctrl-C prompt).

        Returns:
            True once the end of the run has been reached.
        """

    def results(
        self,
    ) -> dict[str, dict[str, tuple[str, bytes] | tuple[str, list[str], bytes]]]:
        """Finalize the run and return its tables.

        A column is ``(dtype, little-endian bytes)`` for numbers and booleans, or
        ``("dict", dictionary, little-endian u32 codes)`` for strings.

        Call once, after the end is reached; called earlier it stops the run and finalizes
        the measurements at ``now_ns``. The tables are handed over once: the simulation is
        dropped before they are copied and each column freed once copied, so the run's state,
        its tables and their copies are never all held at once. Afterwards ``now_ns``,
        ``end_ns``, ``events`` and :meth:`summary` still answer; ``run_until`` and a second
        call raise RuntimeError.

        Returns:
            Table name (``exchanges``, ``flows``, ``links``, ``queue_counts``,
            ``queue_samples``, ``aqm_samples``, ``sojourn``) to column name to either a ``(dtype, data)`` pair,
            with ``dtype`` one of ``"f64"``, ``"i64"``, ``"u64"``, ``"bool"`` and ``data`` the
            little-endian values (one byte per bool), or a list of strings. See
            ``docs/results.md`` for the columns.
        """

    def summary(self) -> dict[str, float | int | str]:
        """Return the run's summary (a flat dictionary, ``docs/results.md``).

        Valid after :meth:`results`. Includes ``events`` but not ``wall_s``, which the
        Python side measures and adds.
        """
