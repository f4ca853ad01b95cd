"""`ascend-port config` (the effective configuration) and `check-api` (the torch_npu names the target lacks)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ascend_port.cli.common import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    AttentionOpt,
    ExcludeOpt,
    ExitZeroOpt,
    IgnoreOpt,
    MinConfidenceOpt,
    OtherDevicesOpt,
    SelectOpt,
    Terminal,
    TorchNpuOpt,
    app,
    settings_for,
)
from ascend_port.run import config as project_config


@app.command("config")
def show_config(
    path: Annotated[
        Path | None,
        typer.Argument(help="Where to look for pyproject.toml (default: the current folder).", show_default=False),
    ] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    min_confidence: MinConfidenceOpt = None,
    exclude: ExcludeOpt = None,
    attention_backend: AttentionOpt = None,
    other_devices: OtherDevicesOpt = None,
    branch: Annotated[str | None, typer.Option("--branch", help="Branch `apply` creates.")] = None,
    torch_npu: TorchNpuOpt = None,
) -> None:
    """Print the effective configuration: [tool.ascend-port] of the nearest pyproject.toml, with the defaults and
    the flags given here (flags override the file), each value with where it comes from."""
    term = Terminal()
    target = path or Path(".")
    if not target.exists():
        raise term.fail(f"no such file or directory: {escape(str(target))}")
    flags = project_config.Flags(
        select, ignore, min_confidence, exclude, attention_backend, branch, other_devices, torch_npu
    )
    settings = settings_for([target], flags, term)
    typer.echo(project_config.render(settings), nl=False)


@app.command("check-api")
def check_api(
    paths: Annotated[
        list[Path], typer.Argument(help="Files or folders to check (their Python files).", show_default=False)
    ],
    torch_npu: TorchNpuOpt = None,
    exclude: ExcludeOpt = None,
    exit_zero: ExitZeroOpt = False,
) -> None:
    """Check that every torch_npu / torch.npu name of the Python files exists in the target torch-npu release
    (--torch-npu, else the configuration's or the project's torch pin's). Exits 1 while a name is missing."""
    from ascend_port.run.api_check import check_api as run_check
    from ascend_port.run.api_check import render

    term = Terminal()
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise term.fail(f"no such file or directory: {missing[0]}")
    settings = settings_for(paths, project_config.Flags(exclude=exclude, torch_npu=torch_npu), term)
    report = run_check(paths, settings.target, settings.exclude_globs)
    origin = settings.origins.get(project_config.TARGET_KEY, project_config.DEFAULT)
    term.err.print(escape(f"target: torch_npu {settings.target} ({project_config.origin_name(settings, origin)})"))
    for line in render(report):
        typer.echo(line)
    for path, reason in report.errors:
        term.error(f"{escape(path)}: {escape(reason)}")
    found = EXIT_FINDINGS if report.missing and not exit_zero else EXIT_CLEAN
    raise typer.Exit(EXIT_ERROR if report.errors else found)
