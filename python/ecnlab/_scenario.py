"""Loading scenarios from TOML files or dicts, and ``path=value`` overrides.

Validation is not done here: the Rust core owns the schema and checks every field (unknown
fields included) when the scenario reaches it. This module only parses and edits the tree,
so an override with a misspelt path is passed through and refused by Rust with a message
naming the field.
"""

from __future__ import annotations

import datetime
import json
import math
import numbers
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from . import _load

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = [
    "ScenarioSource",
    "apply_override",
    "aqm_variable_kept",
    "load_scenario",
    "parse_value",
    "scenario_json",
    "set_path",
]

MAX_FILE_BYTES = 16 * 2**20
"""Largest scenario or sweep file read (16 MiB; the largest shipped is under 10 kB)."""
MAX_DEPTH = 64
"""Deepest nesting of tables and arrays in a scenario (the deepest valid one is under 10)."""

ScenarioSource = Union[str, Path, Mapping[str, Any]]
"""A scenario: the path of a TOML file, or a mapping of the same shape."""


def load_scenario(
    source: ScenarioSource, overrides: Sequence[str] = (), *, resolve_load: bool = True
) -> dict[str, Any]:
    """Load a scenario and apply overrides.

    Args:
        source: path of a TOML file (``str`` or ``Path``), or a mapping of the same shape
            (deep-copied, never modified).
        overrides: ``path=value`` strings applied in order, for example
            ``topology.bottleneck.rate_bps=10e6`` or ``workloads.0.flows=30``. The path is
            dotted; integer segments index arrays; missing tables along the path are created.
            The value is parsed as a TOML value (``10e6``, ``true``, ``"text"``,
            ``{ dist = "constant", value = 5 }``), falling back to the raw string
            (``droptail``).
        resolve_load: replace a ``[load]`` table (``offered_load_mbps`` and a
            ``calibration`` file, relative to the scenario file) by the rate knobs the
            calibration gives (:func:`ecnlab.resolve_load`).

    Returns:
        The scenario as a plain dict, not yet validated (:func:`ecnlab.run` validates it).

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: the file is not valid TOML, or an override is malformed or goes through
            a value that is neither a table nor an array.
    """
    base_dir = Path()
    if isinstance(source, Mapping):
        scenario: dict[str, Any] = plain(source)
    elif isinstance(source, (str, Path)):
        scenario = _read_toml(Path(source))
        base_dir = Path(source).parent
    else:
        raise TypeError(f"scenario must be a TOML file path or a dict, not {type(source).__name__}")
    if isinstance(overrides, str):
        # A lone string would otherwise be applied character by character.
        overrides = [overrides]
    if not isinstance(overrides, Sequence):
        raise TypeError(
            f"overrides must be a list of 'path=value' strings, not {type(overrides).__name__}"
        )
    for override in overrides:
        if not isinstance(override, str):
            raise TypeError(
                f"overrides must be 'path=value' strings; {override!r} is a "
                f"{type(override).__name__}"
            )
        apply_override(scenario, override)
    if resolve_load and "load" in scenario:
        scenario = _load.resolve_load(scenario, base_dir)
    return scenario


def _read_toml(path: Path) -> dict[str, Any]:
    """Read a TOML file of at most :data:`MAX_FILE_BYTES` (a device or pipe is read no
    further than that)."""
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise ValueError(
                f"{path}: larger than {MAX_FILE_BYTES // 2**20} MiB, not a scenario file"
            )
        return tomllib.loads(data.decode("utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"scenario file not found: {path}") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: is a directory, not a scenario file") from None
    except PermissionError as e:
        raise ValueError(f"{path}: cannot be read ({e.strerror})") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: invalid TOML: {e}") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: invalid TOML: not UTF-8 text ({e})") from None


def parse_value(text: str) -> Any:
    """Parse an override value as a TOML value, falling back to the string itself.

    Dates and times are kept as strings: they have no place in a scenario and are not
    JSON-serializable.
    """
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    if isinstance(value, (datetime.date, datetime.time)):
        return text
    return value


def apply_override(scenario: dict[str, Any], override: str) -> None:
    """Apply one ``path=value`` override to ``scenario`` in place.

    Raises:
        ValueError: naming the override, if it has no ``=``, an empty path segment, an array
            index that is not an integer or out of range, or a path through a scalar value.
    """
    path_text, sep, value_text = override.partition("=")
    if not sep or not path_text.strip():
        raise ValueError(f"override {override!r}: expected path=value")
    set_path(scenario, path_text, parse_value(value_text.strip()), context=f"override {override!r}")


def set_path(scenario: dict[str, Any], path: str, value: Any, *, context: str = "") -> None:
    """Set the field at dotted ``path`` (integer segments index arrays) to ``value``, in place.

    Missing tables along the path are created; the Rust core refuses them later if they are
    not fields of the scenario. ``context`` starts every error message (default: the path).

    Raises:
        ValueError: an empty path segment, an array index that is not an integer or out of
            range, or a path through a scalar value.
    """
    path = path.strip()
    context = context or f"path {path!r}"
    keys = [k.strip() for k in path.split(".")]
    if not path or any(not k for k in keys):
        raise ValueError(f"{context}: empty segment in path {path!r}")

    node: Any = scenario
    for depth, key in enumerate(keys):
        last = depth == len(keys) - 1
        where = ".".join(keys[:depth]) or "the scenario"
        if isinstance(node, list):
            index = _list_index(key, len(node), context, where)
            if last:
                node[index] = value
            else:
                node = node[index]
        elif isinstance(node, dict):
            if last:
                node[key] = value
            else:
                node = node.setdefault(key, {})
        else:
            # A user input error, reported like the other override errors (not TypeError).
            raise ValueError(  # noqa: TRY004
                f"{context}: {where} is {node!r}, not a table or array"
            )


def _list_index(key: str, length: int, context: str, where: str) -> int:
    try:
        index = int(key)
    except ValueError:
        raise ValueError(f"{context}: {where} is an array; {key!r} is not an index") from None
    if not 0 <= index < length:
        raise ValueError(f"{context}: index {index} out of range, {where} has {length} entries")
    return index


def plain(value: Any, path: str = "") -> Any:
    """A deep copy of ``value`` made of JSON types only, checked on the way.

    Mappings become dicts (string keys), sequences lists; numpy scalars and arrays become
    Python numbers and lists. A float that is not finite, a value of another type or a tree
    deeper than :data:`MAX_DEPTH` raises ValueError naming the field, e.g.
    ``topology.bottleneck.rate_bps (nan) must be a finite number``.
    """
    return _plain(value, path, 0)


def _plain(value: Any, path: str, depth: int) -> Any:
    where = path or "scenario"
    if depth > MAX_DEPTH:
        raise ValueError(f"{where}: nested deeper than {MAX_DEPTH} tables and arrays")
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value).__module__ == "numpy":
        # numpy scalars and arrays: their Python equivalents.
        value = value.tolist() if hasattr(value, "tolist") else value
        if value is None or isinstance(value, (bool, str)):
            return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"{where} ({number}) must be a finite number")
        return number
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{where}: key {key!r} must be a string")  # noqa: TRY004
            out[key] = _plain(item, f"{path}.{key}" if path else key, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value)]
    raise ValueError(
        f"{where} ({value!r}) must be a number, string, boolean, table or array, "
        f"not {type(value).__name__}"
    )


def aqm_variable_kept(scenario: Mapping[str, Any], name: str) -> bool:
    """Whether the ``aqm_samples`` table keeps AQM variable ``name``
    (``metrics.aqm_variables``; absent: every variable)."""
    kept = scenario.get("metrics", {}).get("aqm_variables")
    return kept is None or name in kept


def scenario_json(scenario: Mapping[str, Any]) -> str:
    """The scenario as JSON text for the core; ValueError names a field that JSON cannot
    carry (see :func:`plain`)."""
    return json.dumps(plain(scenario), allow_nan=False)
