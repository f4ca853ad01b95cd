"""The program's command as `ascend-port run` launches it: the main script or module is run by the bootstrap's
runner (bootstrap/_ascend_port_run.py), which runs it from its ported text, as ``python`` would run the file.

``python [OPTIONS] SCRIPT ARGS`` becomes ``python [OPTIONS] RUNNER SCRIPT ARGS`` (and ``-m MODULE`` likewise);
``pytest ARGS`` becomes ``python RUNNER -m pytest --assert=plain ARGS``; ``torchrun [OPTIONS] SCRIPT ARGS`` becomes
``torchrun [OPTIONS] RUNNER SCRIPT ARGS``, the script's place found by torchrun's own argument parser (run by the
program's Python: it knows its torch's options). Every other process of the program (torchrun's workers, spawned
DataLoader workers) gets the finder through the bootstrap's sitecustomize."""

from __future__ import annotations

import json
from pathlib import Path

from ascend_port.emulate.runner import UsageError, resolve_command, run_probe

BOOTSTRAP = Path(__file__).resolve().parent / "bootstrap"
RUNNER = BOOTSTRAP / "_ascend_port_run.py"
# Python's options that take a value (`-W error`, `-X dev`); the others are flags, which may be joined (`-uB`).
_VALUED = frozenset("WX")
_TORCHRUN_MODULES = ("torch.distributed.run", "torch.distributed.launch")
# torchrun's parser, run by the program's Python: how many words follow the script, and the two options that change
# what the script is.
_TORCHRUN_PROBE = (
    "import json, sys\n"
    "from torch.distributed.run import get_args_parser\n"
    "a = get_args_parser().parse_args(sys.argv[1:])\n"
    "print(json.dumps([len(a.training_script_args), a.module, a.no_python]))\n"
)


def launch_command(command: list[str]) -> tuple[list[str], str, list[str]]:
    """The command to run, the Python that runs the program, and notes on what was changed in the command.
    Raises UsageError for a command `run` cannot port."""
    argv, interpreter = resolve_command(list(command), tool="run")
    name = Path(argv[0]).name
    if name in ("pytest", "py.test"):
        return _pytest([interpreter, str(RUNNER), "-m", "pytest"], argv[1:])
    if name == "torchrun":
        return _torchrun(argv[:1], argv[1:], interpreter), interpreter, []
    options, rest = _python_options(argv[1:])
    if not rest:
        raise UsageError(f"nothing to run: `{' '.join(command)}` names no script or module")
    if rest[0] == "-c":
        # The code of -c is no file of the project; the modules it imports are ported.
        return argv, interpreter, []
    if rest[0] == "-m":
        if len(rest) < 2:
            raise UsageError("-m needs a module name: `ascend-port run -- python -m MODULE [ARGS...]`")
        if rest[1] in _TORCHRUN_MODULES:
            return _torchrun([argv[0], *options, "-m", rest[1]], rest[2:], interpreter), interpreter, []
        if rest[1] == "pytest":
            return _pytest([argv[0], *options, str(RUNNER), "-m", "pytest"], rest[2:])
        return [argv[0], *options, str(RUNNER), *rest], interpreter, []
    if rest[0] == "-":
        raise UsageError("a script read from standard input cannot be ported: name its file")
    return [argv[0], *options, str(RUNNER), *rest], interpreter, []


def _python_options(words: list[str]) -> tuple[list[str], list[str]]:
    """Python's own options before the script (or -m/-c), and the rest: ``-c``/``-m`` on their own, joined flags
    (``-um MODULE``, ``-mMODULE``) split."""
    options: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            return options, words[i + 1 :]
        if not word.startswith("-") or word in ("-", "-c", "-m"):
            return options, words[i:]
        i += 1
        if word.startswith("--"):
            options.append(word)
            if word == "--check-hash-based-pycs" and i < len(words):  # (the one long option with a value)
                options.append(words[i])
                i += 1
            continue
        letters = word[1:]
        for k, letter in enumerate(letters):
            if letter in "cm":
                if k:
                    options.append("-" + letters[:k])
                tail = letters[k + 1 :]
                return options, ["-" + letter, *([tail] if tail else []), *words[i:]]
            if letter in _VALUED:  # -W VALUE, -Wignore
                options.append(word)
                if k == len(letters) - 1 and i < len(words):
                    options.append(words[i])
                    i += 1
                break
        else:
            options.append(word)
    return options, []


def _pytest(prefix: list[str], args: list[str]) -> tuple[list[str], str, list[str]]:
    """pytest's assertion rewriting reads test modules from their files: with it, the tests would run unported."""
    interpreter = prefix[0]
    if any(a == "--assert" or a.startswith("--assert=") for a in args):
        return [*prefix, *args], interpreter, []
    note = "pytest runs with --assert=plain: its assertion rewriting reads test files from disk, unported"
    return [*prefix, "--assert=plain", *args], interpreter, [note]


def _torchrun(prefix: list[str], args: list[str], interpreter: str) -> list[str]:
    probe = run_probe(interpreter, _TORCHRUN_PROBE, args, timeout=120)
    if probe is None:
        raise UsageError(f"cannot read torchrun's arguments with {interpreter}: it did not run")
    if probe.returncode != 0:
        said = (probe.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise UsageError(f"torchrun's arguments: {said}")
    after, module, no_python = json.loads(probe.stdout.strip().splitlines()[-1])
    if no_python:
        raise UsageError("torchrun --no-python runs a program that is not Python: ascend-port run ports Python")
    script = len(args) - after - 1
    options = [a for a in args[:script] if a not in ("-m", "--module")] if module else args[:script]
    return [*prefix, *options, str(RUNNER), *(["-m"] if module else []), *args[script:]]
