"""``python -m ecnlab``: the command-line interface."""

from .cli import app

app(prog_name="ecnlab")
