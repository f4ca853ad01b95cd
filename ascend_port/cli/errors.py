"""`ascend-port error CODE|LOGFILE|-`: decodes CANN / ACL / HCCL / torch_npu errors into cause and fix."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ascend_port.cli.common import EXIT_CLEAN, EXIT_FINDINGS, Terminal, app

ERROR_FORMATS = ("text", "json")


@app.command("error")
def error(
    what: Annotated[
        str,
        typer.Argument(
            metavar="CODE|LOGFILE|-",
            help="A code (507035, EZ9999, ERR00100, EI0002, an ACL_ERROR_* name), a log file, or - for stdin.",
            show_default=False,
        ),
    ],
    output_format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Decode a CANN/ACL runtime code, an aclnn, HCCL or out-of-memory message into its cause and fix, with the
    source of each. Given a log (a file, or - for stdin), every known error in it, root cause first, with the
    operator and your line from the traceback. Exits 0 when something was decoded, 1 when nothing was recognised,
    2 on a usage error (a missing file)."""
    from ascend_port.verify import cann_errors

    term = Terminal()
    if output_format not in ERROR_FORMATS:
        raise term.fail(f"--format {escape(output_format)!r}: use one of {', '.join(ERROR_FORMATS)}")
    path = Path(what)
    if what != "-" and not path.is_file() and cann_errors.looks_like_code(what):
        found = cann_errors.lookup(what)
        if output_format == "json":
            typer.echo(json.dumps(cann_errors.code_json(what, found), indent=2, ensure_ascii=False))
        elif found:
            typer.echo("\n".join(cann_errors.render_entry(e, what) for e in found), nl=False)
        else:
            term.err.print(f"{escape(what)}: not a code this table knows")
        raise typer.Exit(EXIT_CLEAN if found else EXIT_FINDINGS)
    if what == "-":
        text = sys.stdin.read()
    elif path.is_file():
        text = path.read_text("utf-8", errors="replace")
    else:
        raise term.fail(f"{escape(what)}: no such file, and not a code (507035, EZ9999, ERR00100...)")
    findings, frame = cann_errors.decode_log(text)
    if output_format == "json":
        typer.echo(json.dumps(cann_errors.log_json(findings, frame), indent=2, ensure_ascii=False))
    elif findings:
        typer.echo(cann_errors.render_log(findings, frame), nl=False)
    else:
        term.err.print("no known CANN, ACL, HCCL or torch_npu error in the log")
    raise typer.Exit(EXIT_CLEAN if findings else EXIT_FINDINGS)
