"""Every ``--help`` reads cleanly at 80 columns (issue 20): no type placeholders that typer 0.27 and later print
(``<bool>``, ``<list[Path]>``, ``{paths}...``), no rich markup eaten (``[tool.ascend-port]`` taken for a style tag)
or leaked (``[/bold]``); and shell completion: the script is printed, and completing ``ascend-port sc`` offers
``scan`` and ``scaffold``, through the environment variables the script sets."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from ascend_port.cli import app

# The console script, run as a module would not be: the completion variable is named after the program.
SCRIPT = "import sys\nfrom ascend_port.cli import main\nsys.argv[0] = 'ascend-port'\nmain()\n"
PLACEHOLDER = re.compile(r"<(bool|str|int|float|path|list\[[^\]]*\])>|\{\w+\}|<list|\[/\w*\]")
BOX = re.compile(r"[│╭╮╰╯─]+")


def _commands() -> dict[str, typer.core.TyperCommand]:
    return dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def _help(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], prog_name="ascend-port", env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.output


def _flat(text: str) -> str:
    """Text as a reader takes it: no box drawing, no code marks, one space between words."""
    return " ".join(BOX.sub(" ", text.replace("`", "")).split())


@pytest.mark.parametrize("command", ["", *_commands()])
def test_help_reads_cleanly(command: str) -> None:
    text = _help(*([command] if command else []))
    assert not PLACEHOLDER.search(text), PLACEHOLDER.search(text)
    assert max(len(line) for line in text.splitlines()) <= 80
    flat = _flat(text)
    group = typer.main.get_command(app)
    documented = _commands()[command] if command else group
    if documented.help:
        first = documented.help.split("\n\n")[0]  # (the first paragraph: the rest may be a list or an example)
        assert _flat(first) in flat  # nothing eaten as markup: "[tool.ascend-port]" included
    for param in documented.params:
        help_text = getattr(param, "help", None)
        if help_text:
            assert _flat(help_text) in flat, param.name
    assert "Usage: ascend-port" in flat


def test_config_help_names_its_table() -> None:
    assert "[tool.ascend-port]" in _help("config")  # rich markup mode ate it (issue 20)


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=60,
    )


def test_bash_completion_script_and_completing_a_command() -> None:
    shown = _run({}, "--show-completion", "bash")
    assert shown.returncode == 0, shown.stderr
    assert "complete -o default -F _ascend_port_completion ascend-port" in shown.stdout
    # The script sets these variables and reads the candidates from stdout: the same call here.
    instruction = re.search(r"_ASCEND_PORT_COMPLETE=(\w+)", shown.stdout)
    assert instruction is not None
    env = {"_ASCEND_PORT_COMPLETE": instruction.group(1), "COMP_WORDS": "ascend-port sc", "COMP_CWORD": "1"}
    done = _run(env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["scan", "scaffold"]
    options = _run({**env, "COMP_WORDS": "ascend-port scan --ex", "COMP_CWORD": "2"})
    assert set(options.stdout.split()) == {"--exclude", "--exit-zero"}


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_other_shells_get_a_script(shell: str) -> None:
    shown = _run({}, "--show-completion", shell)
    assert shown.returncode == 0, shown.stderr
    assert "_ASCEND_PORT_COMPLETE" in shown.stdout


def test_help_offers_completion() -> None:
    flat = _flat(_help())
    assert "--install-completion" in flat and "--show-completion" in flat
