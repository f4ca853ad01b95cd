"""`ascend-port run`: a CUDA program run unchanged, its project's modules ported as they are imported
(ascend_port/onthefly/)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ascend_port.cli.common import (
    EXIT_ERROR,
    ColorOpt,
    IgnoreOpt,
    NoCacheOpt,
    QuietOpt,
    SelectOpt,
    Terminal,
    TorchNpuOpt,
    VerboseOpt,
    app,
    make_config,
    run_port,
    settings_for,
)
from ascend_port.run import config as project_config

_PACKAGE_PROBE = (
    "import importlib.util, sys\n"
    "spec = importlib.util.find_spec(sys.argv[1])\n"
    "print(spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else "
    "(spec.origin if spec and spec.has_location else ''))\n"
)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: typer.Context,
    project: Annotated[
        Path, typer.Option("--project", metavar="DIR", help="The project whose modules are ported (default: .).")
    ] = Path("."),
    include: Annotated[
        list[str] | None,
        typer.Option(
            "--include",
            metavar="PACKAGE",
            help="An installed package to port too (repeatable); installed packages and the standard library are "
            "otherwise left alone.",
        ),
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", metavar="FILE", help="Write what ran ported, as JSON, to this file.")
    ] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    no_cache: NoCacheOpt = False,
    torch_npu: TorchNpuOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = "auto",
) -> None:
    """Run a CUDA program unchanged on the NPU: `ascend-port run -- python train.py ...` (also -m MODULE, pytest,
    torchrun) ports each module of the project in memory as it is imported, with the rules and configuration of
    `apply`; no file is changed and torch.cuda is left as it is. At exit it lists the modules ported on the fly, their
    TODOs, and the `apply` command that makes the port permanent. Exits with the program's exit code."""
    from ascend_port.emulate.runner import UsageError
    from ascend_port.onthefly.command import launch_command
    from ascend_port.onthefly.launch import NotStarted, apply_command, launch, summary
    from ascend_port.onthefly.launch import report as run_report

    term = Terminal.for_flags(quiet, verbose, color, "porting")
    command = list(ctx.args)
    if command[:1] == ["--"]:
        command = command[1:]
    try:
        argv, interpreter, notes = launch_command(command)
    except UsageError as error:
        raise term.fail(escape(str(error))) from None
    if not project.is_dir():
        raise term.fail(escape(f"--project {project}: not a folder"))
    paths = [project, *(_package_folder(name, interpreter, term) for name in include or ())]
    flags = project_config.Flags(select=select, ignore=ignore, torch_npu=torch_npu)
    settings = settings_for([project], flags, term, cached_rules=not no_cache)
    result = run_port(paths, make_config(settings, 0, term, no_cache), term)
    for file in result.errors:
        term.error(escape(f"{file.path}: {file.error} (imported as it is)"))
    permanent = apply_command(project, {"--torch-npu": torch_npu})
    try:
        prepared, ran = launch(argv, notes, result)
    except NotStarted:
        raise typer.Exit(EXIT_ERROR) from None
    if not quiet:
        for line in summary(prepared, ran, permanent, verbose):
            term.err.print(escape(line), soft_wrap=True)
    if report is not None:
        data = run_report(prepared, ran, command, permanent)
        try:
            report.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
        except OSError as error:
            term.error(escape(f"cannot write {report}: {error.strerror or error}"))
    raise typer.Exit(ran.exit_code)


def _package_folder(name: str, interpreter: str, term: Terminal) -> Path:
    """Where the program's Python finds package ``name`` (found, not imported)."""
    try:
        found = subprocess.run(
            [interpreter, "-c", _PACKAGE_PROBE, name], capture_output=True, text=True, timeout=60
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        found = ""
    if not found:
        raise term.fail(escape(f"--include {name}: {interpreter} finds no such package"))
    return Path(found)
