"""Cross-validation against ns-2.35: every case of cases.py, every check (docs/validation.md).

Rerun one case: ``python -m pytest tests/crosscheck -k CASE``; or in both simulators by hand with
the command in the case's row of docs/validation.md (``ecnlab crosscheck ns2 ...``).
"""

from __future__ import annotations

import pytest
from cases import CASES, Case, run_case


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case: Case, ns2: str) -> None:
    result = run_case(case)
    failed = [r for r in result["rows"] if not r["ok"]]
    assert not failed, "; ".join(
        f"{r['measure']}: ns-2 {r['ns2']:.5g}, ecnlab {r['ecnlab']:.5g} ({r['verdict']}; "
        f"criterion {r['criterion']})"
        for r in failed
    )
