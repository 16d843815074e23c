"""``ecnlab model ...``: the analytical models from the command line.

Registered in ``ecnlab.cli`` with ``app.add_typer(model_app, name="model")``. Same habits as
the rest of the CLI: units in option names, ``--json`` for a machine-readable object, and a
bad value prints one red line and exits with code 2.
"""
# ruff: noqa: FA100

import json
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer
from rich.markup import escape
from rich.table import Table

from .._cli_common import command_group, err_console, out_console, reported
from .._cli_common import fail as _fail

__all__ = ["model_app"]

model_app = command_group(
    "model", "Analytical models: M^[X]/M/1 queueing, buffer sizing, TCP throughput."
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def _emit(compute: Callable[[], dict[str, Any]], as_json: bool, title: str) -> None:
    try:
        result = compute()
    except ValueError as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps(result, indent=2, allow_nan=False))
        return
    table = Table(title=title, show_header=False)
    table.add_column("quantity", style="bold")
    table.add_column("value", justify="right")
    for key, value in result.items():
        if key == "model":
            continue
        table.add_row(key, f"{value:.6g}" if isinstance(value, float) else str(value))
    out_console.print(table)


@model_app.command("mx-m-1")
def mx_m_1_cmd(
    capacity_mbps: Annotated[float, typer.Option("--capacity-mbps", help="Link rate, Mb/s.")],
    load: Annotated[float, typer.Option("--load", help="Utilisation rho, in (0, 1).")],
    sizes: Annotated[
        str, typer.Option("--sizes", help="Flow sizes: web or general (workloads spec 3).")
    ] = "web",
    flow_segments: Annotated[
        Optional[int],
        typer.Option("--flow-segments", help="Every flow this many segments (seed 000 Fig. 7)."),
    ] = None,
    delay_ms: Annotated[
        float, typer.Option("--delay-ms", help="Queueing-delay threshold for p_delay_gt, ms.")
    ] = 5.0,
    mss_bytes: Annotated[int, typer.Option("--mss-bytes", help="Segment payload, bytes.")] = 1460,
    initial_window_segments: Annotated[
        int, typer.Option("--initial-window-segments", help="First burst of a flow.")
    ] = 2,
    as_json: JsonOpt = False,
) -> None:
    """Mean queue and P(queue delay > threshold) of the M^[X]/M/1 model (seed 000 5.2.2)."""
    from . import mx_m_1  # numpy and scipy load only for the model commands

    _emit(
        lambda: mx_m_1(
            capacity_mbps,
            load,
            sizes=sizes,
            flow_segments=flow_segments,
            delay_ms=delay_ms,
            mss_bytes=mss_bytes,
            initial_window=initial_window_segments,
        ),
        as_json,
        f"M^[X]/M/1, {capacity_mbps:g} Mb/s at load {load:g}",
    )


@model_app.command("buffer")
def buffer_cmd(
    capacity_mbps: Annotated[
        float, typer.Option("--capacity-mbps", help="Link rate, Mb/s.")
    ] = 10.0,
    rtt_ms: Annotated[float, typer.Option("--rtt-ms", help="Path round-trip time, ms.")] = 100.0,
    beta: Annotated[float, typer.Option("--beta", help="Multiplicative decrease, (0, 1).")] = 0.5,
    buffer_pkts: Annotated[
        Optional[float], typer.Option("--buffer-pkts", help="Also give the utilisation here.")
    ] = None,
    packet_bytes: Annotated[int, typer.Option("--packet-bytes", help="Wire size.")] = 1500,
    as_json: JsonOpt = False,
) -> None:
    """Buffer for full utilisation, b >= delta (1 - beta) / beta (seed 002 eq. 1)."""
    from . import buffer as buffer_model

    _emit(
        lambda: buffer_model(
            capacity_mbps=capacity_mbps,
            rtt_ms=rtt_ms,
            beta=beta,
            buffer_pkts=buffer_pkts,
            packet_bytes=packet_bytes,
        ),
        as_json,
        f"buffer sizing, {capacity_mbps:g} Mb/s, RTT {rtt_ms:g} ms, beta {beta:g}",
    )


@model_app.command("tcp-throughput")
def tcp_throughput_cmd(
    loss: Annotated[float, typer.Option("--loss", help="Packet loss probability, (0, 1).")],
    rtt_ms: Annotated[float, typer.Option("--rtt-ms", help="Round-trip time, ms.")] = 100.0,
    mss_bytes: Annotated[int, typer.Option("--mss-bytes", help="Segment payload.")] = 1460,
    rto_s: Annotated[float, typer.Option("--rto-s", help="Retransmission timeout (PFTK).")] = 1.0,
    acked_per_ack: Annotated[
        int, typer.Option("--acked-per-ack", help="Segments per ACK (2: delayed ACKs).")
    ] = 2,
    as_json: JsonOpt = False,
) -> None:
    """Mathis and PFTK throughput of one long-lived flow under random loss."""
    from . import tcp_throughput

    _emit(
        lambda: tcp_throughput(
            loss, rtt_ms=rtt_ms, mss_bytes=mss_bytes, rto_s=rto_s, acked_per_ack=acked_per_ack
        ),
        as_json,
        f"TCP throughput, loss {loss:g}, RTT {rtt_ms:g} ms",
    )


@model_app.command("figures")
def figures_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for PNGs and JSON data.")],
    quick: Annotated[
        bool, typer.Option("--quick", help="Short simulations, one seed (minutes, not tens).")
    ] = False,
    only: Annotated[
        Optional[list[str]],
        typer.Option("--only", help="queue-web, queue-general, flow-length, buffer, tcp."),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Parallel runs.")] = 2,
) -> None:
    """Run the model-vs-simulation experiments and plot them."""
    from .figures import EXPERIMENTS, run_experiments

    chosen = list(only) if only else list(EXPERIMENTS)
    unknown = [c for c in chosen if c not in EXPERIMENTS]
    if unknown:
        _fail(f"--only ({', '.join(unknown)}) must be among {', '.join(EXPERIMENTS)}")
    with reported(errors=(OSError,)):
        written = run_experiments(out, chosen, quick=quick, workers=workers, log=err_console.print)
    for path in written:
        out_console.print(escape(str(path)))
