"""`ascend-port scan`: what a port would change and where manual work is needed, as a report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from ascend_port.cli.common import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    AttentionOpt,
    ChangedSinceOpt,
    ColorOpt,
    ExcludeOpt,
    ExitZeroOpt,
    IgnoreOpt,
    JobsOpt,
    MinConfidenceOpt,
    NoCacheOpt,
    OtherDevicesOpt,
    QuietOpt,
    SelectOpt,
    Terminal,
    TorchNpuOpt,
    VerboseOpt,
    app,
    default_format,
    make_config,
    print_concise,
    report_errors,
    run_port,
    settings_for,
    totals_line,
)
from ascend_port.run import config as project_config
from ascend_port.run.engine import RunResult


@app.command()
def scan(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to scan.", show_default=False)],
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    min_confidence: MinConfidenceOpt = None,
    jobs: JobsOpt = 0,
    exclude: ExcludeOpt = None,
    exit_zero: ExitZeroOpt = False,
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="concise (a finding a line; the default in a pipe or a terminal under 100 columns), text (table; the "
            "default on a wide terminal), md (assessment), json, sarif, csv (change list) or github (annotations).",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the report to this file instead of printing it.")
    ] = None,
    sarif: Annotated[
        Path | None,
        typer.Option(
            "--sarif",
            help="Also write the SARIF report to this file (one scan for two reports, e.g. --format github in CI).",
            show_default=False,
        ),
    ] = None,
    attention_backend: AttentionOpt = None,
    other_devices: OtherDevicesOpt = None,
    changed_since: ChangedSinceOpt = None,
    no_cache: NoCacheOpt = False,
    torch_npu: TorchNpuOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = "auto",
) -> None:
    """Report what a port would change and where manual work is needed. Writes nothing (but --output)."""
    from ascend_port.reports import FORMATS

    term = Terminal.for_flags(quiet, verbose, color, "scanning")
    if output_format is not None and output_format not in FORMATS:
        raise term.fail(f"--format {escape(output_format)!r}: use one of {', '.join(FORMATS)}")
    flags = project_config.Flags(
        select, ignore, min_confidence, exclude, attention_backend, other_devices=other_devices, torch_npu=torch_npu
    )
    settings = settings_for(paths, flags, term, cached_rules=not no_cache)
    result = run_port(paths, make_config(settings, jobs, term, no_cache), term, changed_since)
    if output_format is None:
        output_format = "concise" if output is not None else default_format(result, term)
    _print_scan(result, output_format, output, term)
    if sarif is not None:
        _write_report(result, "sarif", sarif, term)
    # information (NPU407: SDPA runs natively) is nothing to do: it never fails a scan
    findings = any(f.kind != "info" for file in result.files for f in file.findings)
    raise typer.Exit(EXIT_ERROR if result.errors else EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _print_scan(result: RunResult, output_format: str, output: Path | None, term: Terminal) -> None:
    """The report, the errors and the totals: the console formats on stdout with their totals after them, the
    others (or a report written to a file) with their totals on stderr, out of the report."""
    if output_format in ("text", "concise") and output is None:
        if output_format == "text":
            from ascend_port.reports.text import print_text

            print_text(result, term.out)
        else:
            print_concise(result, term)
        report_errors(result, term)
        if not term.quiet:
            term.out.print(totals_line(result), soft_wrap=True)
        return
    _write_report(result, output_format, output, term)
    report_errors(result, term)
    if not term.quiet:
        term.err.print(totals_line(result))


def _write_report(result: RunResult, output_format: str, output: Path | None, term: Terminal) -> None:
    """Print the report, or write it to ``output``."""
    if output_format == "text":
        import io

        from ascend_port.reports.text import print_text

        buffer = io.StringIO()
        print_text(result, Console(file=buffer, width=160, highlight=False))
        text = buffer.getvalue()
    elif output_format == "concise":
        from ascend_port.reports.text import concise_lines

        text = "".join(concise_lines(result))
    else:
        from ascend_port.reports import render

        text = render(result, output_format)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        output.write_text(text, "utf-8", newline="")
    except OSError as error:
        raise term.fail(f"cannot write {escape(str(output))}: {escape(error.strerror or str(error))}") from None
