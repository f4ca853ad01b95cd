"""The verify report as text, markdown or JSON."""

from __future__ import annotations

import json

from ascend_port.verify.classify import CAUSES
from ascend_port.verify.session import Result, Verification

FORMATS = ("text", "md", "json")
FACTS_SHOWN = 8  # entries per fact list in text and markdown (JSON has all)
OUTPUT_SHOWN = 8  # lines of a failed command's output in the text report


def status(result: Result) -> str:
    if result.started:
        return "started"
    if result.timed_out:
        return "timed out"
    return f"failed (exit {result.exit_code})" if result.exit_code is not None else "failed"


def _facts(result: Result) -> list[str]:
    lines = []
    if result.stayed_on_cpu:
        lines.append("stayed on CPU: no tensor reached the npu device")
    if result.float32_only:
        lines.append(
            f"computed in float32 only, though {result.float32_only} picks bfloat16/float16 beside a CUDA check: is "
            "the compute dtype chosen only for CUDA (`torch.bfloat16 if torch.cuda.is_available() else ...`)?"
        )
    for title, facts in (
        (
            "TODO lines that ran",
            {f"{path}:{line}": 1 for path, lines in result.todo_lines_hit.items() for line in lines},
        ),
        ("npu APIs called", result.npu_calls),
        ("names the target lacks", result.absent),
        ("not emulated", result.not_implemented),
        ("dtypes the NPU lacks, created on the npu", result.dtypes_on_npu),
        ("host-device syncs repeated from one line", result.syncs_in_loops),
        ("emulator notes", result.notes),
    ):
        if facts:
            items = list(facts.items())
            shown = ", ".join(k if title == "TODO lines that ran" else f"{k} ({v}x)" for k, v in items[:FACTS_SHOWN])
            more = f" and {len(items) - FACTS_SHOWN} more" if len(items) > FACTS_SHOWN else ""
            lines.append(f"{title}: {shown}{more}")
    return lines


def summary(verification: Verification) -> str:
    total, failed = len(verification.results), len(verification.failed)
    line = f"{total - failed} of {total} command(s) started, {failed} failed"
    causes: dict[str, int] = {}
    for result in verification.failed:
        if result.failure is not None:
            causes[result.failure.cause] = causes.get(result.failure.cause, 0) + 1
    if causes:
        line += ": " + ", ".join(f"{n} {CAUSES[c]}" for c, n in causes.items())
    on_cpu = sum(1 for r in verification.results if r.stayed_on_cpu)
    if on_cpu:
        line += f"; {on_cpu} stayed on CPU (started, but no tensor reached the npu: a device choice the port left)"
    if verification.interrupted:
        line += " (interrupted: the commands after the last one shown did not run)"
    return line


def text(verification: Verification) -> str:
    lines = [f"ascend-port verify {verification.root} (torch_npu {verification.torch_npu})"]
    for result in verification.results:
        lines.append(f"{status(result)}: {result.name} ({result.seconds:g} s)")
        if result.failure is not None:
            lines.append(f"  cause: {CAUSES[result.failure.cause]}: {result.failure.detail}")
            if result.failure.frame is not None:
                frame = result.failure.frame
                lines.append(f"  at {frame.file}:{frame.line} in {frame.function}: {frame.source}")
        if result.failure is not None and result.failure.cause in ("program", "timeout") and result.output_tail:
            # the cause in words says little here: the program's last words say more
            lines.append("  output (last lines):")
            lines += [f"    {line}" for line in result.output_tail.splitlines()[-OUTPUT_SHOWN:]]
        lines += [f"  {fact}" for fact in _facts(result)]
    lines += _compare_lines(verification)
    lines.append(summary(verification))
    return "\n".join(lines) + "\n"


def _compare_lines(verification: Verification) -> list[str]:
    lines = []
    for entry in verification.compare:
        lines.append(f"compare {entry['name']}: {entry['verdict']}")
        for step, (a, b) in enumerate(zip(entry["original"], entry["port"])):
            lines.append(f"  {step:>3}  cpu {a:.6g}  npu {b:.6g}  diff {abs(a - b):.3g}")
    return lines


def markdown(verification: Verification) -> str:
    lines = [
        f"## ascend-port verify: `{verification.root}` (torch_npu {verification.torch_npu})",
        "",
        "| command | status | cause | where |",
        "|---|---|---|---|",
    ]
    for r in verification.results:
        cause = f"{CAUSES[r.failure.cause]}: {r.failure.detail}" if r.failure else ""
        where = f"`{r.failure.frame.file}:{r.failure.frame.line}`" if r.failure and r.failure.frame else ""
        lines.append(f"| `{r.name}` | {status(r)} | {cause.replace('|', '/')} | {where} |")
    facts = [(r.name, fact) for r in verification.results for fact in _facts(r)]
    if facts:
        lines += ["", "### Run-time facts", ""] + [f"- `{name}`: {fact}" for name, fact in facts]
    compare = _compare_lines(verification)
    if compare:
        lines += ["", "### Compare (original on CPU, port on the emulated npu)", "", "```", *compare, "```"]
    lines += ["", summary(verification)]
    return "\n".join(lines) + "\n"


def as_json(verification: Verification) -> str:
    data = {
        "root": verification.root,
        "torch_npu": verification.torch_npu,
        "interrupted": verification.interrupted,
        "started": len(verification.results) - len(verification.failed),
        "failed": len(verification.failed),
        "results": [r.to_json() for r in verification.results],
        "compare": verification.compare,
        "reference": verification.reference,
    }
    return json.dumps(data, indent=2) + "\n"


def render(verification: Verification, form: str) -> str:
    return {"text": text, "md": markdown, "json": as_json}[form](verification)
