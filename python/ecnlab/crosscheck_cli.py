"""``ecnlab crosscheck ns2 ...``: one scenario in ns-2.35 and in ecnlab, side by side.

Registered in ``ecnlab.cli`` with ``app.add_typer(crosscheck_app, name="crosscheck")``. A
scenario ns-2.35 cannot express prints one red line naming the field and exits with code 2.
The module lives outside the ``ecnlab.crosscheck`` package, whose ``__init__`` imports the
translator and the comparison, so that the command line loads them only for this command
(issue 21: the fixed cost of ``ecnlab run``).
"""
# ruff: noqa: FA100

import math
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from ._cli_common import command_group, err_console, out_console, reported
from ._cli_common import fail as _fail

__all__ = ["comparison_table", "crosscheck_app"]

crosscheck_app = command_group(
    "crosscheck", "Run a scenario in another simulator and in ecnlab, and compare them."
)


@crosscheck_app.command("ns2")
def ns2_cmd(
    scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.", show_default=False)],
    out: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            "-o",
            help="Folder for both sides' tables, the comparison and the Tcl script (new or "
            "empty). Default: nothing kept.",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Run seed of both.")] = 1,
    sets: Annotated[
        Optional[list[str]],
        typer.Option(
            "--set",
            "-s",
            metavar="PATH=VALUE",
            help="Override a scenario field, e.g. topology.bottleneck.rate_bps=10e6 (repeatable).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Translate a scenario into an ns-2.35 script, run ns and ecnlab, compare the measures."""
    from .crosscheck.run import Ns2Error, Ns2NotFound, crosscheck_ns2

    try:
        with reported(scenario):
            result = crosscheck_ns2(scenario, seed, out, sets or ())
    except (Ns2Error, Ns2NotFound) as e:
        _fail(str(e))
    name = result.scenario.get("name", "scenario")
    out_console.print(
        comparison_table(result.comparison, f"{name} (seed {seed}): ns-2.35 / ecnlab")
    )
    for note in result.notes:
        err_console.print(f"[dim]note: {escape(note)}[/]", soft_wrap=True)
    if out is not None:
        err_console.print(f"written to {escape(str(out))} (Tcl script: ns2/scenario.tcl)")


def comparison_table(comparison, title: str) -> Table:
    """The side-by-side table: measure, ns-2, ecnlab, relative difference."""
    table = Table(title=escape(title))
    table.add_column("measure", no_wrap=True)
    table.add_column("ns-2.35", justify="right")
    table.add_column("ecnlab", justify="right")
    table.add_column("difference", justify="right")
    for row in comparison.rows:
        if math.isnan(row.ns2) and math.isnan(row.ecnlab):
            continue
        d = row.difference
        table.add_row(
            row.measure,
            _cell(row.ns2),
            _cell(row.ecnlab),
            "-" if math.isnan(d) else f"{100 * d:+.1f} %",
        )
    table.caption = "difference: (ecnlab - ns-2) / |ns-2|"
    return table


def _cell(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.4g}"
