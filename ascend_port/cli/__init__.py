"""The ``ascend-port`` command line: one module per command (scan, apply, emulate and verify, rules, config, doctor,
errors, scaffold),
what they share in ``common``. Exit codes follow ruff and black: 0 clean, 1 findings or pending changes, 2 usage
or tool error (including files that could not be read or parsed)."""

from __future__ import annotations

from typing import Annotated

import typer

from ascend_port import __version__
from ascend_port.cli import common
from ascend_port.cli.common import DEFAULT_BRANCH, Terminal, app

# One module per command; importing it registers its commands, in the order `--help` lists them.
from ascend_port.cli import scan, apply, run, emulate, rules, config, doctor, errors, scaffold  # noqa: F401  isort: skip

__all__ = ["DEFAULT_BRANCH", "app", "main"]


def _version_callback(value: bool) -> None:
    if value:
        Terminal().out.print(f"ascend-port {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_version_callback, is_eager=True, help="Show the version and exit."),
    ] = False,
) -> None:
    pass


def main() -> None:
    common.standalone = True
    app()
