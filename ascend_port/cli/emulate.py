"""`ascend-port emulate` (a command on the emulated NPU) and `ascend-port verify` (the ported project's own
commands under it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ascend_port.cli.common import ColorOpt, QuietOpt, Terminal, VerboseOpt, app


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def emulate(
    ctx: typer.Context,
    devices: Annotated[int, typer.Option("--devices", help="Number of emulated npu devices (npu:0..N-1).")] = 1,
    report: Annotated[
        Path | None, typer.Option("--report", help="Write the torch_npu calls and missing APIs as JSON to this file.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Run even where a real torch_npu is installed.")] = False,
    torch_npu: Annotated[
        str | None,
        typer.Option("--torch-npu", help="The torch_npu release whose API the stand-in has (default: the newest)."),
    ] = None,
) -> None:
    """Run a Python command (python, -m, pytest, torchrun) with an emulated npu device on CPU and a stand-in
    torch_npu: `ascend-port emulate [--devices N] -- python train.py`. Exits with the command's exit code."""
    from ascend_port.emulate.runner import run_emulated

    raise typer.Exit(run_emulated(list(ctx.args), devices, report, force, torch_npu))


@app.command()
def verify(
    path: Annotated[
        Path | None, typer.Argument(help="The ported project (default: the current folder).", show_default=False)
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds each command may run (then killed).")] = 120.0,
    torch_npu: Annotated[
        str | None,
        typer.Option(
            "--torch-npu",
            metavar="VERSION",
            help="The torch_npu release to emulate (default: the port's target, from the configuration or the torch "
            "pin, else the newest).",
        ),
    ] = None,
    devices: Annotated[int, typer.Option("--devices", help="Number of emulated npu devices.")] = 1,
    compare: Annotated[
        bool, typer.Option("--compare", help="Also run the original on plain CPU with the same seed; compare losses.")
    ] = False,
    original: Annotated[
        Path | None, typer.Option("--original", help="--compare: the project before the port (a folder).")
    ] = None,
    base: Annotated[
        str | None,
        typer.Option("--base", metavar="REF", help="--compare: the git ref before the port (default: found)."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="--compare: the seed of both runs.")] = 0,
    losses: Annotated[int, typer.Option("--losses", help="Losses recorded and compared per command.")] = 20,
    reference: Annotated[
        Path | None,
        typer.Option("--reference", help="--compare: where the reference JSON goes (default: .ascend-port/ in PATH)."),
    ] = None,
    kit: Annotated[
        Path | None, typer.Option("--kit", metavar="DIR", help="Write a kit to run the commands on an Ascend host.")
    ] = None,
    output_format: Annotated[str, typer.Option("--format", help="Report format: text, md or json.")] = "text",
    output: Annotated[Path | None, typer.Option("--output", help="Write the report to this file.")] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = "auto",
) -> None:
    """Run the ported project's commands under the emulator and say what starts and what stops the rest: the
    commands of `[tool.ascend-port.verify]`, else the import of the ported modules, `--help` of its scripts and
    its pytest suite. Exits 1 while a command fails to start."""
    from ascend_port.verify.main import VerifyError, VerifyOptions, run_verify

    term = Terminal.for_flags(quiet, verbose, color, "verifying")
    options = VerifyOptions(
        path or Path("."),
        timeout,
        torch_npu,
        devices,
        compare,
        original,
        base,
        seed,
        losses,
        reference,
        kit,
        output_format,
        output,
        verbose,
    )
    try:
        code = run_verify(options, None if quiet else lambda line: term.err.print(escape(line), soft_wrap=True))
    except VerifyError as error:
        raise term.fail(escape(str(error))) from None
    raise typer.Exit(code)
