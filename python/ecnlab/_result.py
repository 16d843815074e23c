"""The result of a run: pyarrow tables, a summary, the normalized scenario and the seed."""

from __future__ import annotations

import array
import hashlib
import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

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

# dtype tag from the native module -> bytes per value (the arrow types: _arrow_type)
_WIDTH = {"f64": 8, "i64": 8, "u64": 8, "bool": 1}

NativeColumn = Union[tuple[str, bytes], tuple[str, list[str], bytes]]
NativeTables = Mapping[str, Mapping[str, NativeColumn]]


class Result:
    """Everything a run produced.

    Attributes:
        tables: table name to pyarrow Table (columns in ``docs/results.md``).
        summary: flat summary dictionary, ``wall_s`` included.
        scenario: the scenario as run, every default filled in (normalized by the core).
        seed: the run seed.

    Each table is also an attribute: ``result.exchanges``, ``result.flows``...

    A result of :func:`ecnlab.run` keeps the core's columns and makes the pyarrow tables on
    first access (importing pyarrow then), so a run that is only stored
    (:func:`ecnlab.write_run` writes the core's columns as Parquet natively) never loads
    pyarrow. The result is immutable: its attributes cannot be reassigned.
    """

    tables: dict[str, pa.Table]  # a property below; declared for type checkers
    summary: dict[str, Any]
    scenario: dict[str, Any]
    seed: int

    def __init__(
        self,
        tables: dict[str, pa.Table],
        summary: dict[str, Any],
        scenario: dict[str, Any],
        seed: int,
    ) -> None:
        self._set(tables=tables, summary=summary, scenario=scenario, seed=seed, native=None)

    @classmethod
    def from_native(
        cls, native: NativeTables, summary: dict[str, Any], scenario: dict[str, Any], seed: int
    ) -> Result:
        """A result holding the core's columns (:meth:`ecnlab._core.Simulation.results`);
        the pyarrow tables are made when first used. The columns are checked now (the same
        checks as :func:`tables_from_native`), without pyarrow."""
        for name, columns in native.items():
            _native_rows(name, columns)
        result = cls.__new__(cls)
        result._set(tables=None, summary=summary, scenario=scenario, seed=seed, native=native)
        return result

    def _set(self, **values: Any) -> None:
        d = self.__dict__
        d["summary"] = values["summary"]
        d["scenario"] = values["scenario"]
        d["seed"] = values["seed"]
        d["_tables"] = values["tables"]
        d["_native"] = values["native"]
        # The tables as converted from the native columns, to tell whether they are still
        # the run's own when the result is stored (see native_tables).
        d["_converted"] = None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    @property  # type: ignore[no-redef]
    def tables(self) -> dict[str, pa.Table]:
        """Table name to pyarrow Table (made from the core's columns on first access)."""
        d = self.__dict__
        if d["_tables"] is None:
            d["_tables"] = tables_from_native(d["_native"])
            d["_converted"] = dict(d["_tables"])
        return d["_tables"]  # type: ignore[no-any-return]

    @property
    def table_names(self) -> list[str]:
        """The names of the tables, in order, without making the tables."""
        d = self.__dict__
        return list(d["_native"] if d["_tables"] is None else d["_tables"])

    def native_tables(self) -> NativeTables | None:
        """The core's columns of each table when the result still holds them and its
        ``tables`` (if made) are the ones converted from them, unchanged; else None."""
        d = self.__dict__
        native = d["_native"]
        if native is None or d["_tables"] is None:
            return native  # type: ignore[no-any-return]
        converted, tables = d["_converted"], d["_tables"]
        if tables.keys() != converted.keys() or any(tables[k] is not converted[k] for k in tables):
            return None
        return native  # type: ignore[no-any-return]

    def num_rows(self, name: str) -> int:
        """The row count of table ``name``, without making the tables."""
        d = self.__dict__
        if d["_tables"] is None:
            return _native_rows(name, d["_native"][name])
        return int(d["_tables"][name].num_rows)

    def __getattr__(self, name: str) -> pa.Table:
        # Only called when normal lookup fails: expose tables as attributes.
        d = self.__dict__
        if not name.startswith("_") and "_tables" in d and name in self.table_names:
            return self.tables[name]
        raise AttributeError(f"{type(self).__name__!r} has no attribute or table {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.table_names))

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

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
        rows = ", ".join(f"{k}={self.num_rows(k)}" for k in self.table_names)
        name = self.scenario.get("name", "?")
        return f"Result(scenario={name!r}, seed={self.seed}, rows: {rows})"


def run_id(scenario: Mapping[str, Any], seed: int, mode: str | None = None,
           mode_options: Mapping[str, Any] | None = None) -> str:
    """Identify a run by its normalized scenario and seed (16 hex digits of SHA-256).

    Two runs with the same id produce bit-identical tables, so a sweep can skip runs it has
    already stored. ``mode`` is None for a simulation; another mode (``"testbed"``: the
    scenario on real TCP stacks, docs/testbed.md) is part of the hash, so a testbed run never
    takes a simulation's id; so are ``mode_options`` when given (a testbed run's non-default
    choices: ``{"database": "mariadb"}``), so a run on MariaDB never takes the id of the same
    run on SQLite.
    """
    key: dict[str, Any] = {"scenario": scenario, "seed": seed}
    if mode is not None:
        key["mode"] = mode
    if mode_options:
        key["mode_options"] = dict(mode_options)
    canonical = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def tables_from_native(native: NativeTables) -> dict[str, pa.Table]:
    """Convert :meth:`ecnlab._core.Simulation.results` output to pyarrow tables.

    Fixed-width columns are wrapped without a copy of the values (bools are bit-packed).

    Raises:
        RuntimeError: the native data is malformed (a bug in the core): unknown dtype,
            a buffer whose size is not a multiple of the value width, or columns of
            different lengths in one table.
    """
    return {name: _table(name, columns) for name, columns in native.items()}


def native_column_values(data: NativeColumn) -> Any:
    """The values of a fixed-width native column as a Python sequence (``array.array`` of
    float or int; bytes of 0/1 for bools), without pyarrow."""
    dtype, raw = data[0], data[-1]
    if dtype == "bool":
        return raw
    if sys.byteorder != "little":  # pragma: no cover - no big-endian CI
        raise RuntimeError("ecnlab result conversion assumes a little-endian host")
    codes = {"f64": "d", "i64": "q", "u64": "Q"}
    if dtype not in codes:
        raise ValueError(f"not a fixed-width numeric column: {dtype!r}")
    return array.array(codes[dtype], raw)


def _native_rows(table: str, columns: Mapping[str, NativeColumn]) -> int:
    """The row count of a native table, checking its columns' shapes (no pyarrow)."""
    lengths = {col: _native_length(table, col, data) for col, data in columns.items()}
    if len(set(lengths.values())) > 1:
        raise RuntimeError(f"native table {table!r} has columns of different lengths: {lengths}")
    return next(iter(lengths.values()), 0)


def _native_length(table: str, col: str, data: NativeColumn) -> int:
    if isinstance(data, tuple) and len(data) == 3 and data[0] == "dict":
        raw = data[2]
        if len(raw) % 4:
            raise RuntimeError(
                f"native column {table}.{col}: {len(raw)} code bytes is not a multiple of 4"
            )
        return len(raw) // 4
    if not (isinstance(data, tuple) and len(data) == 2):
        raise RuntimeError(
            f"native column {table}.{col}: expected (dtype, bytes) or "
            f"('dict', list[str], codes), got {type(data).__name__}"
        )
    dtype, raw = data
    if dtype not in _WIDTH:
        raise RuntimeError(f"native column {table}.{col}: unknown dtype {dtype!r}")
    if len(raw) % _WIDTH[dtype]:
        raise RuntimeError(
            f"native column {table}.{col}: {len(raw)} bytes is not a whole number of {dtype} values"
        )
    return len(raw) // _WIDTH[dtype]


def _table(name: str, columns: Mapping[str, NativeColumn]) -> pa.Table:
    import pyarrow as pa

    _native_rows(name, columns)  # shapes first: a clear error before any conversion
    arrays = {col: _column(name, col, data) for col, data in columns.items()}
    if not arrays:
        return pa.table({})
    return pa.table(arrays)


def _column(table: str, col: str, data: NativeColumn) -> pa.Array:
    import pyarrow as pa

    if data[0] == "dict":
        return _strings(table, col, data[1], data[2])  # type: ignore[misc]
    dtype, raw = data
    if sys.byteorder != "little":  # pragma: no cover - no big-endian CI
        raise RuntimeError("ecnlab result conversion assumes a little-endian host")
    # bools: one byte per value, cast to bit-packed bool below
    arrow_type = {"f64": pa.float64(), "i64": pa.int64(), "u64": pa.uint64(), "bool": pa.uint8()}
    width = _WIDTH[dtype]
    array = pa.Array.from_buffers(arrow_type[dtype], len(raw) // width, [None, pa.py_buffer(raw)])
    if dtype == "bool":
        array = array.cast(pa.bool_())
    return array


def _strings(table: str, col: str, dictionary: list[str], raw: bytes) -> pa.Array:
    """A dictionary-encoded string column, decoded to plain strings by Arrow (no Python str
    per row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    codes = pa.Array.from_buffers(pa.uint32(), len(raw) // 4, [None, pa.py_buffer(raw)])
    if len(codes) and pc.max(codes).as_py() >= len(dictionary):
        raise RuntimeError(f"native column {table}.{col}: a code is outside its dictionary")
    encoded = pa.DictionaryArray.from_arrays(codes, _string_array(dictionary))
    return encoded.cast(pa.string())


def _string_array(values: list[str]) -> pa.Array:
    """A string array built from its buffers: ``pa.array`` on Python objects would import
    pandas (0.25 s) to check whether they are pandas objects."""
    import pyarrow as pa

    data = [v.encode("utf-8") for v in values]
    offsets = array.array("i", [0])
    for d in data:
        offsets.append(offsets[-1] + len(d))
    buffers = [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(b"".join(data))]
    return pa.Array.from_buffers(pa.string(), len(values), buffers)
