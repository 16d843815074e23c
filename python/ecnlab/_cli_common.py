"""What every ``ecnlab`` command group shares: consoles, exit codes, the one-line error."""

import contextlib
from collections.abc import Iterator
from typing import NoReturn

import typer
from rich.console import Console
from rich.markup import escape

EXIT_FAILED = 1
"""The work failed: runs that failed, damaged results, a disk that is full or unwritable."""
EXIT_ERROR = 2
"""Bad input: an invalid scenario or option, a missing file, existing results."""
EXIT_INTERRUPTED = 130

out_console = Console()
err_console = Console(stderr=True)


def command_group(name: str, help: str) -> typer.Typer:
    """A typer app with the CLI's settings: no completion, plain help, no pretty tracebacks."""
    return typer.Typer(
        name=name,
        help=help,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )


def fail(message: str, code: int = EXIT_ERROR) -> NoReturn:
    """Print one red ``error:`` line on stderr and exit with ``code`` (default
    :data:`EXIT_ERROR`). Control characters in the message (a newline or an escape sequence
    in a field name given by the user) are shown escaped, so the line stays one line."""
    err_console.print(f"[bold red]error:[/] [red]{escape(one_line(message))}[/]", soft_wrap=True)
    raise typer.Exit(code)


@contextlib.contextmanager
def reported(
    subject: object = None,
    errors: tuple[type[BaseException], ...] = (OSError, ValueError),
    interrupted: str = "interrupted",
) -> Iterator[None]:
    """Run a command's work: an error of ``errors`` becomes one ``error:`` line (prefixed with
    ``subject``, the file the input came from, when given) and Ctrl-C a yellow ``interrupted``
    line and exit code :data:`EXIT_INTERRUPTED`."""
    try:
        yield
    except errors as e:
        fail(str(e) if subject is None else f"{subject}: {e}")
    except KeyboardInterrupt:
        err_console.print(f"[yellow]{interrupted}[/]")
        raise typer.Exit(EXIT_INTERRUPTED) from None


def one_line(text: str) -> str:
    """``text`` with every non-printable character written as its escape (``\\n``...)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
