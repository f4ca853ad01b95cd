"""NPU624's launch flags of the project's own (`--xformers`, `--fp8`; rules/project/launch_flags.py): what the
project's Python code shows of them decides whether a launch script the port edits drops them, replaces them by the
plain flag (`--sdpa`), or keeps them; a script the port does not edit otherwise keeps them all."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection
from ascend_port.port.handlers import handler_for
from ascend_port.rules.project.launch_flags import launch_flags

PARSER = 'import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument("--sdpa", action="store_true")\n'
# Off, plain: diffusers-style `if args.xformers:` with no else, fp8 with a bf16 else.
PLAIN_WHEN_OFF = PARSER + (
    'parser.add_argument("--xformers", action="store_true")\n'
    'parser.add_argument("--fp8", "--use-fp8", action="store_true")\n'
    "args = parser.parse_args()\n"
    "if args.xformers:\n    unet.enable_xformers_memory_efficient_attention()\n"
    'if args.fp8:\n    import transformer_engine\nelse:\n    dtype = "bf16"\n'
)
# musubi-tuner: an attention flag must be given; --sdpa is the plain one.
CHAIN_WITH_SDPA = PARSER + (
    'parser.add_argument("--xformers", action="store_true")\n'
    "args = parser.parse_args()\n"
    'if args.sdpa:\n    mode = "torch"\nelif args.xformers:\n    mode = "xformers"\n'
    'else:\n    raise ValueError("either --sdpa or --xformers must be specified")\n'
)
CHAIN_WITHOUT_PLAIN = (
    'import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument("--flash", action="store_true")\n'
    'parser.add_argument("--xformers", action="store_true")\nargs = parser.parse_args()\n'
    'if args.flash:\n    mode = "flash"\nelif args.xformers:\n    mode = "xformers"\n'
    'else:\n    raise ValueError("--flash or --xformers")\n'
)


def _flags(*texts: str) -> dict[str, str]:
    found = launch_flags((Path(f"m{k}.py"), text.encode()) for k, text in enumerate(texts))
    return {option: plain for option, plain, _, _ in found}


def test_a_flag_whose_program_goes_on_without_it_is_dropped() -> None:
    assert _flags(PLAIN_WHEN_OFF) == {"--xformers": "", "--fp8": "", "--use-fp8": ""}


def test_a_chain_that_stops_without_a_flag_gets_the_plain_one() -> None:
    assert _flags(CHAIN_WITH_SDPA) == {"--xformers": "--sdpa"}
    # (the chain in another module than the parser, as a trainer's shared `args`)
    parser, chain = CHAIN_WITH_SDPA.split("args = parser.parse_args()\n")
    assert _flags(parser, "def load(args):\n" + chain.replace("\n", "\n    ").replace("if", "    if", 1)) == {
        "--xformers": "--sdpa"
    }


@pytest.mark.parametrize(
    "code",
    [
        CHAIN_WITHOUT_PLAIN,  # stops without it, and no plain flag to give instead
        PLAIN_WHEN_OFF.replace('"--xformers", action="store_true"', '"--xformers", type=int, default=0'),
        PLAIN_WHEN_OFF.replace('"--xformers", action="store_true"', '"--xformers", action="store_true", default=True'),
        PLAIN_WHEN_OFF + "assert args.xformers\n",
        PLAIN_WHEN_OFF + "if not args.xformers:\n    sys.exit(1)\n",
        PLAIN_WHEN_OFF + "if args.xformers == True:\n    pass\n",  # a test the step does not read
    ],
    ids=["raise-no-plain", "not-store-true", "default-true", "assert", "exit-when-off", "unread-test"],
)
def test_a_flag_the_code_does_not_show_safe_stays(code: str) -> None:
    assert "--xformers" not in _flags(code)


def test_two_programs_must_both_show_it_safe() -> None:
    assert "--xformers" not in _flags(PLAIN_WHEN_OFF, CHAIN_WITHOUT_PLAIN)


SCRIPT = (
    "#!/bin/bash\ntorchrun train.py --dist-backend nccl \\\n    --xformers \\\n    --fp8\npython gen.py --xformers\n"
)
OPTIONS = PortOptions(launch_flags=(("--fp8", "", "fp8", "train.py"), ("--xformers", "--sdpa", "xformers", "train.py")))


def _port(script: str, options: PortOptions) -> str | None:
    handler = handler_for(Path("run.sh"))
    assert handler is not None
    return handler.port(script.encode(), Selection(), options).new_text


def test_shell_script_replaces_or_drops_with_a_note() -> None:
    new = _port(SCRIPT, OPTIONS)
    assert new is not None
    assert "torchrun train.py --dist-backend hccl \\\n    --sdpa\n" in new
    assert "python gen.py --sdpa\n" in new
    assert "NPU624 [medium] --fp8 removed: needs an FP8 kernel library" in new
    assert "--xformers -> --sdpa: needs xformers, which has no NPU build; torch's scaled_dot_product_attention" in new
    # A command that gives the plain flag already loses the other one.
    given = _port(SCRIPT.replace("gen.py --xformers", "gen.py --sdpa --xformers"), OPTIONS)
    assert given is not None and "python gen.py --sdpa\n" in given
    both = PortOptions(launch_flags=(*OPTIONS.launch_flags, ("--use-xformers", "--sdpa", "xformers", "train.py")))
    twice = _port(SCRIPT.replace("gen.py --xformers", "gen.py --xformers --use-xformers"), both)
    assert twice is not None and "python gen.py --sdpa\n" in twice
    # The project's code did not show them safe: they stay.
    kept = _port(SCRIPT, PortOptions())
    assert kept is not None and "--xformers" in kept.replace("# ", "") and "--fp8" in kept


def test_a_script_the_port_does_not_edit_otherwise_keeps_them() -> None:
    assert _port(SCRIPT.replace("nccl", "gloo"), OPTIONS) is None


def test_the_project_step_reads_the_projects_code(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(CHAIN_WITH_SDPA)
    (tmp_path / "gen.py").write_text(CHAIN_WITHOUT_PLAIN.replace("--xformers", "--fp8").replace(".xformers", ".fp8"))
    (tmp_path / "run.sh").write_text("#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0\npython train.py --xformers --fp8\n")
    result = CliRunner().invoke(app, ["apply", str(tmp_path), "--no-cache", "--no-git"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    script = (tmp_path / "run.sh").read_text()
    assert "python train.py --sdpa --fp8\n" in script  # (gen.py stops without --fp8: it stays)
