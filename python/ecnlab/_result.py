"""The result of a run: pyarrow tables, a summary, the normalized scenario and the seed."""

from __future__ import annotations

import array
import hashlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TABLES", "Result", "run_id", "tables_from_native"]

TABLES = (
    "exchanges",
    "flows",
    "links",
    "queue_counts",
    "queue_samples",
    "aqm_samples",
    "sojourn",
    "flow_samples",
)
"""The tables every run returns (``docs/results.md``), in their usual order."""

# dtype tag from the native module -> (arrow type, bytes per value)
_FIXED_WIDTH: dict[str, tuple[pa.DataType, int]] = {
    "f64": (pa.float64(), 8),
    "i64": (pa.int64(), 8),
    "u64": (pa.uint64(), 8),
    "bool": (pa.uint8(), 1),  # one byte per value; cast to bit-packed bool below
}

NativeColumn = Union[tuple[str, bytes], tuple[str, list[str], bytes]]


@dataclass(frozen=True, eq=False)
class Result:
    """Everything a run produced.

    Attributes:
        tables: table name to pyarrow Table (columns in ``docs/results.md``).
        summary: flat summary dictionary, ``wall_s`` included.
        scenario: the scenario as run, every default filled in (normalized by the core).
        seed: the run seed.

    Each table is also an attribute: ``result.exchanges``, ``result.flows``...
    """

    tables: dict[str, pa.Table]
    summary: dict[str, Any]
    scenario: dict[str, Any]
    seed: int

    def __getattr__(self, name: str) -> pa.Table:
        # Only called when normal lookup fails: expose tables as attributes.
        tables = self.__dict__.get("tables")
        if tables is not None and name in tables:
            return tables[name]
        raise AttributeError(f"{type(self).__name__!r} has no attribute or table {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.tables))

    # Explicit properties for the documented tables, for type checkers and completion.
    @property
    def exchanges(self) -> pa.Table:
        """One row per request/response exchange that started in the window."""
        return self.tables["exchanges"]

    @property
    def flows(self) -> pa.Table:
        """One row per connection that started before the end of the run."""
        return self.tables["flows"]

    @property
    def links(self) -> pa.Table:
        """One row per bottleneck direction and measurement interval."""
        return self.tables["links"]

    @property
    def queue_counts(self) -> pa.Table:
        """The window's queue outcomes by link, packet kind, outcome and reason."""
        return self.tables["queue_counts"]

    @property
    def queue_samples(self) -> pa.Table:
        """Periodic samples of the bottleneck queue lengths."""
        return self.tables["queue_samples"]

    @property
    def aqm_samples(self) -> pa.Table:
        """Periodic samples of the bottleneck AQMs' control variables (long format)."""
        return self.tables["aqm_samples"]

    @property
    def sojourn(self) -> pa.Table:
        """Histogram of the time packets waited in each bottleneck queue."""
        return self.tables["sojourn"]

    @property
    def flow_samples(self) -> pa.Table:
        """Per-flow window, RTT and bytes every ``metrics.flow_sample_ms`` (empty when off)."""
        return self.tables["flow_samples"]

    @property
    def run_id(self) -> str:
        """Hash of the normalized scenario and the seed: equal ids mean the same run."""
        return run_id(self.scenario, self.seed)

    def to_pandas(self, name: str) -> pd.DataFrame:
        """Return table ``name`` as a pandas DataFrame (needs pandas installed)."""
        try:
            table = self.tables[name]
        except KeyError:
            raise KeyError(f"no table {name!r}; tables are {', '.join(self.tables)}") from None
        return table.to_pandas()

    def __repr__(self) -> str:
        rows = ", ".join(f"{k}={v.num_rows}" for k, v in self.tables.items())
        name = self.scenario.get("name", "?")
        return f"Result(scenario={name!r}, seed={self.seed}, rows: {rows})"


def run_id(scenario: Mapping[str, Any], seed: int) -> str:
    """Identify a run by its normalized scenario and seed (16 hex digits of SHA-256).

    Two runs with the same id produce bit-identical tables, so a sweep can skip runs it has
    already stored.
    """
    canonical = json.dumps(
        {"scenario": scenario, "seed": seed}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def tables_from_native(
    native: Mapping[str, Mapping[str, NativeColumn]],
) -> dict[str, pa.Table]:
    """Convert :meth:`ecnlab._core.Simulation.results` output to pyarrow tables.

    Fixed-width columns are wrapped without a copy of the values (bools are bit-packed).

    Raises:
        RuntimeError: the native data is malformed (a bug in the core): unknown dtype,
            a buffer whose size is not a multiple of the value width, or columns of
            different lengths in one table.
    """
    return {name: _table(name, columns) for name, columns in native.items()}


def _table(name: str, columns: Mapping[str, NativeColumn]) -> pa.Table:
    arrays = {col: _column(name, col, data) for col, data in columns.items()}
    lengths = {col: len(a) for col, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise RuntimeError(f"native table {name!r} has columns of different lengths: {lengths}")
    if not arrays:
        return pa.table({})
    return pa.table(arrays)


def _column(table: str, col: str, data: NativeColumn) -> pa.Array:
    if isinstance(data, tuple) and len(data) == 3 and data[0] == "dict":
        return _strings(table, col, data[1], data[2])
    if not (isinstance(data, tuple) and len(data) == 2):
        raise RuntimeError(
            f"native column {table}.{col}: expected (dtype, bytes) or "
            f"('dict', list[str], codes), got {type(data).__name__}"
        )
    dtype, raw = data
    try:
        arrow_type, width = _FIXED_WIDTH[dtype]
    except KeyError:
        raise RuntimeError(f"native column {table}.{col}: unknown dtype {dtype!r}") from None
    if len(raw) % width:
        raise RuntimeError(
            f"native column {table}.{col}: {len(raw)} bytes is not a whole number of {dtype} values"
        )
    if width > 1 and sys.byteorder != "little":  # pragma: no cover - no big-endian CI
        raise RuntimeError("ecnlab result conversion assumes a little-endian host")
    array = pa.Array.from_buffers(arrow_type, len(raw) // width, [None, pa.py_buffer(raw)])
    if dtype == "bool":
        array = array.cast(pa.bool_())
    return array


def _strings(table: str, col: str, dictionary: list[str], raw: bytes) -> pa.Array:
    """A dictionary-encoded string column, decoded to plain strings by Arrow (no Python str
    per row)."""
    if len(raw) % 4:
        raise RuntimeError(
            f"native column {table}.{col}: {len(raw)} code bytes is not a multiple of 4"
        )
    codes = pa.Array.from_buffers(pa.uint32(), len(raw) // 4, [None, pa.py_buffer(raw)])
    if len(codes) and pc.max(codes).as_py() >= len(dictionary):
        raise RuntimeError(f"native column {table}.{col}: a code is outside its dictionary")
    encoded = pa.DictionaryArray.from_arrays(codes, _string_array(dictionary))
    return encoded.cast(pa.string())


def _string_array(values: list[str]) -> pa.Array:
    """A string array built from its buffers: ``pa.array`` on Python objects would import
    pandas (0.25 s) to check whether they are pandas objects."""
    data = [v.encode("utf-8") for v in values]
    offsets = array.array("i", [0])
    for d in data:
        offsets.append(offsets[-1] + len(d))
    buffers = [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(data))]
    return pa.Array.from_buffers(pa.string(), len(values), buffers)
