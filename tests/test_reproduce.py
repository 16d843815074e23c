"""The reproduction machinery: parts as resumable sweeps, claims.json, figures, report, CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, assert_one_line_error, invoke
from ecnlab import reproduce as repro
from ecnlab._scenario import _read_toml
from ecnlab.sweep import SweepError
from matplotlib.figure import Figure


class Toy(repro.Study):
    """Two buffer sizes of a short bulk dumbbell; claims about drops against buffer size."""

    name = "toy"
    title = "Toy study"
    doc = "docs/reproduction/toy.md"
    data_dir = EXAMPLES

    def sweeps(self, mode: str) -> list[dict[str, Any]]:
        base = _read_toml(EXAMPLES / "dumbbell-bulk.toml")
        return [
            {
                "name": "buffers",
                "base": base,
                "seeds": 3 if mode == "full" else 2,
                "set": {"duration_s": 2, "warmup_s": 0.5, "workloads.0.flows": 4},
                "axes": [
                    {
                        "name": "buffer",
                        "path": "topology.bottleneck.queue.limit_pkts",
                        "values": [10, 200],
                    }
                ],
            }
        ]

    def analyze(self, results: repro.Results) -> repro.Findings:
        con = results.open("buffers")
        runs = con.execute("SELECT seed, buffer, mean_queue_pkts_down FROM runs ORDER BY seed").df()
        by = repro.per_seed(runs, "mean_queue_pkts_down", ["buffer"])
        small, large = by[(10,)], by[(200,)]
        found = repro.Findings()
        found.claims.append(
            repro.claim(
                "queue-grows",
                "a larger buffer holds a longer queue",
                paper=None,
                ours={"10": repro.summary(small), "200": repro.summary(large)},
                criterion="mean queue at 200 packets > at 10 packets (summed over seeds)",
                passed=sum(large) > sum(small),
            )
        )
        fig = Figure()
        fig.add_subplot().bar(["10", "200"], [sum(small), sum(large)])
        found.figure("drops", "Mean queue against buffer size", fig)
        found.table("drops", "Mean queue per seed", runs)
        found.notes.append("A toy study for the tests.")
        return found


def test_reproduce_writes_claims_figures_tables_report_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "toy"
    first = repro.reproduce(Toy(), "quick", out, jobs=2, progress=False)
    assert first.sweeps["buffers"].done == 4 and first.failed_runs == 0
    claims = json.loads((out / "claims.json").read_text())
    assert [sorted(c) for c in claims] == [sorted(repro._study.CLAIM_KEYS)]
    assert claims[0]["passed"] is True  # a 10-packet queue cannot average more than 10
    assert claims[0]["ours"]["10"]["n"] == 2
    assert (out / "figures" / "drops.png").stat().st_size > 1000
    assert (out / "tables" / "drops.csv").read_text().count("\n") == 5
    page = (out / "report.html").read_text()
    assert "1 of 1 claims hold" in page and "data:image/png;base64" in page

    again = repro.reproduce(Toy(), "quick", out, jobs=2, progress=False)
    assert again.sweeps["buffers"].skipped == 4 and again.sweeps["buffers"].done == 0
    assert json.loads((out / "claims.json").read_text()) == claims


def test_reproduce_refuses_another_mode_in_the_same_folder(tmp_path: Path) -> None:
    repro.reproduce(Toy(), "quick", tmp_path, jobs=1, progress=False)
    with pytest.raises(SweepError, match="toy reproduction in quick mode"):
        repro.reproduce(Toy(), "full", tmp_path, jobs=1, progress=False)
    assert (tmp_path / "claims.json").exists()


def test_reproduce_rejects_unknown_mode_and_bad_parts(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="mode 'fast'"):
        repro.reproduce(Toy(), "fast", tmp_path)

    class Bad(Toy):
        def sweeps(self, mode: str) -> list[dict[str, Any]]:
            parts = super().sweeps(mode)
            parts[0]["set"]["topology.bottleneck.rate_bps"] = -1
            return parts

    with pytest.raises(SweepError, match="rate_bps"):
        repro.reproduce(Bad(), "quick", tmp_path / "bad")
    assert not (tmp_path / "bad").exists()  # nothing ran, nothing written


def test_summary_mean_and_spread() -> None:
    s = repro.summary([1.0, 2.0, 3.0, float("nan")])
    assert (s["mean"], s["sd"], s["min"], s["max"], s["n"]) == (2.0, 1.0, 1.0, 3.0, 3)
    assert s["values"][-1] is None
    assert repro.format_value(s) == "2 ± 1"
    nested = {"RED": s, "PI": {"verdict": "holds", "a": s}}
    assert repro.format_value(nested) == "RED: 2 ± 1; PI: verdict: holds; a: 2 ± 1"
    assert repro.format_value(nested, limit=12) == "RED: 2 ± 1;…"


def test_cli_reproduce_unknown_study_is_one_line_error() -> None:
    result = invoke("reproduce", "nosuch")
    assert_one_line_error(result, "unknown study 'nosuch'")
    result = invoke("reproduce", "nosuch", "--quick", "--full")
    assert_one_line_error(result, "--quick and --full exclude each other")
