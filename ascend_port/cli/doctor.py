"""`ascend-port doctor`: checks the Ascend host it runs on; each problem with the command that fixes it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ascend_port.cli.common import EXIT_CLEAN, EXIT_FINDINGS, Terminal, app


@app.command("doctor")
def doctor(
    full: Annotated[
        bool, typer.Option("--full", help="Also the slower checks: each NPU's health, torch_npu imported.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON (schema_version 1).")] = False,
    python: Annotated[
        str | None,
        typer.Option(
            "--python", help="The Python whose torch and torch-npu to check (default: this one).", show_default=False
        ),
    ] = None,
    # a recorded host instead of this one (a folder as tests/data/doctor/ holds: env.json, root/, commands/)
    recorded: Annotated[Path | None, typer.Option("--recorded", hidden=True)] = None,
) -> None:
    """Check this Ascend host: driver and firmware, the CANN toolkit and its set_env.sh, the torch / torch-npu / CANN
    pairing, the visible devices, HCCL settings for several hosts and variables left from CUDA. Each problem comes
    with the command that fixes it. Exits 1 when a check fails; on a host without an NPU it says what it would
    check and exits 0."""
    from ascend_port.doctor.checks import diagnose
    from ascend_port.doctor.environment import real_environment, recorded_environment
    from ascend_port.doctor.render import as_json as render_json
    from ascend_port.doctor.render import as_text

    term = Terminal()
    if recorded is not None and not (recorded / "root").is_dir():
        raise term.fail(f"not a recorded host (no root/ folder): {escape(str(recorded))}")
    env = recorded_environment(recorded) if recorded is not None else real_environment(python)
    report = diagnose(env, full=full)
    if as_json:
        typer.echo(render_json(report), nl=False)
    else:
        for line in as_text(report):
            typer.echo(line)
    raise typer.Exit(EXIT_FINDINGS if report.failed else EXIT_CLEAN)
