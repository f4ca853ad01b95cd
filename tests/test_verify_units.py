"""verify's parts that run nothing: the classifier, the command discovery, the configuration table."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import pytest

from ascend_port.run import config as project_config
from ascend_port.verify.classify import classify, last_traceback
from ascend_port.verify.commands import discovered, find_project_todos, launched_scripts


def traceback_text(root: Path, frames: list[tuple[str, int, str]], exception: str) -> str:
    lines = ["Traceback (most recent call last):"]
    for file, line, source in frames:
        lines += [f'  File "{file}", line {line}, in f', f"    {source}"]
    return "\n".join([*lines, exception, ""])


def test_innermost_project_frame_and_cuda_from_its_source(tmp_path):
    (tmp_path / "m.py").write_text("x\n", "utf-8")
    text = traceback_text(
        tmp_path,
        [(str(tmp_path / "m.py"), 3, "torch.cuda.synchronize()"), ("/usr/lib/torch/cuda/__init__.py", 9, "raise")],
        "RuntimeError: something",
    )
    failure = classify("noise\n" + text, tmp_path, {}, {})
    assert failure.cause == "cuda" and failure.frame is not None and failure.frame.line == 3


def test_emulator_limit_dependency_and_program_errors(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "__init__.py").write_text("", "utf-8")
    limit = traceback_text(
        tmp_path, [], "NotImplementedError: torch_npu.npu_foo is not emulated by ascend-port emulate"
    )
    assert classify(limit, tmp_path, {}, {}).cause == "emulator"
    dep = traceback_text(tmp_path, [], "ModuleNotFoundError: No module named 'einops.layers'")
    failure = classify(dep, tmp_path, {}, {})
    assert failure.cause == "dependency" and "einops is not installed" in failure.detail
    own = traceback_text(tmp_path, [], "ModuleNotFoundError: No module named 'mine.gone'")
    assert classify(own, tmp_path, {}, {}).cause == "program"
    todo = {str(tmp_path / "a.py"): {5: 4}}
    through = [(str(tmp_path / "a.py"), 5, "helper()"), (str(tmp_path / "b.py"), 9, "raise ValueError")]
    passed = classify(traceback_text(tmp_path, through, "ValueError: bad"), tmp_path, {}, todo)
    assert passed.cause == "todo" and "a.py:4" in passed.detail and passed.frame.file.endswith("b.py")
    # a TODO line that ran earlier (at import) but is not on the failing stack is no cause
    elsewhere = [(str(tmp_path / "b.py"), 9, "raise ValueError")]
    assert classify(traceback_text(tmp_path, elsewhere, "ValueError: bad"), tmp_path, {}, todo).cause == "program"


def test_pytest_long_traceback_names_the_test_line(tmp_path):
    """pytest's default (long) traceback closes each section with `path:line: ExceptionType`."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("x\n", "utf-8")
    text = (
        "    def test_x():\n>       model.to('cuda')\n\ntests/test_a.py:345: \n_ _ _ _\n\n"
        "    def _lazy_init():\n>       raise AssertionError('Torch not compiled with CUDA enabled')\n"
        "E       AssertionError: Torch not compiled with CUDA enabled\n\n"
        "/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:522: AssertionError\n"
    )
    failure = classify(text, tmp_path, {}, {})
    assert failure.cause == "cuda" and failure.frame is not None
    assert (failure.frame.file, failure.frame.line) == ("tests/test_a.py", 345)


def test_chained_traceback_reads_the_last_one():
    text = (
        'Traceback (most recent call last):\n  File "a.py", line 1, in x\n    a\nKeyError: 1\n\nDuring handling'
        " of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n"
        '  File "b.py", line 2, in y\n    b\nValueError: two\n'
    )
    frames, exception = last_traceback(text)
    assert [f.file for f in frames] == ["b.py"] and exception == "ValueError: two"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), "utf-8")
    return root


def test_discovery_imports_ported_modules_helps_launched_scripts_runs_pytest(tmp_path):
    root = write(
        tmp_path,
        {
            "lib/__init__.py": "",
            "lib/model.py": "import torch_npu\n",
            "lib/plain.py": "import os\nx = input\n",  # ("input" holds "npu": no NPU name)
            "train.py": "import torch_npu\nif __name__ == '__main__':\n    pass\n",
            "loose.py": "import torch_npu\nprint('trains on import')\n",
            "scripts/run.sh": "cd ..\ntorchrun --nproc_per_node=$N train.py --device npu\npython -m lib.model\n",
            "tests/test_a.py": "def test(): pass\n",
        },
    )
    commands = discovered(root, find_project_todos(root), 10)
    names = [c.name for c in commands]
    assert names == ["import (2 modules)", "python train.py --help", "python -m lib.model --help", "pytest"]
    assert [m for _, m in commands[0].modules] == ["lib.model", "train"]  # loose.py would run on import
    assert "-m" not in commands[-1].argv[3:] and "--tb=native" in commands[-1].argv
    assert all(c.timeout == 10 for c in commands)
    assert launched_scripts(root) == [["train.py"], ["-m", "lib.model"]]


def test_todo_code_line_is_the_statement_below_the_comment(tmp_path):
    write(
        tmp_path,
        {
            "a.py": "x = 1\n# TODO(ascend-port): NPU303 [low] fp64\n\n# more\ny = 2  # note\nz = 3  # TODO(ascend-port): NPU101 [low] t\n"
        },
    )
    todos = find_project_todos(tmp_path)
    assert todos.by_file == {str((tmp_path / "a.py").resolve()): {5: 2, 6: 6}}


def test_the_verify_table_is_no_unknown_key_of_the_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.ascend-port]\nignore = ["NPU104"]\n[tool.ascend-port.verify]\ncommands = ["python t.py"]\n', "utf-8"
    )
    settings = project_config.resolve([tmp_path])
    assert settings.ignore == ("NPU104",) or list(settings.ignore) == ["NPU104"]


def test_an_exit_message_without_traceback_is_the_error(tmp_path):
    failure = classify("step 1\nthis trainer needs a CUDA GPU (no GPU found)\n", tmp_path, {}, {})
    assert failure.cause == "cuda" and failure.detail == "this trainer needs a CUDA GPU (no GPU found)"
    assert classify("loading\nbad config value\n", tmp_path, {}, {}).detail == "bad config value"


def test_the_probe_counts_no_sync_the_emulator_makes():
    """A .item() made inside torch counts at the program's line that called torch; one made inside the emulator's
    ops (their CPU reference reads npu tensors) is no sync of the program's: not counted."""
    import importlib.util

    probe_file = Path(__file__).resolve().parent.parent / "ascend_port" / "verify" / "probe" / "_ascend_port_probe.py"
    spec = importlib.util.spec_from_file_location("_probe_under_test", probe_file)
    assert spec is not None and spec.loader is not None
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)

    def wrapper():  # stands for the probe's wrapper of Tensor.item (the frame _caller starts above)
        return probe._caller()

    namespace = {"wrapper": wrapper}
    exec(compile("def op():\n    return wrapper()\n", "/venv/ascend_port/emulate/ops.py", "exec"), namespace)
    exec(compile("def clip():\n    return wrapper()\n", "/venv/torch/nn/utils/clip_grad.py", "exec"), namespace)
    assert namespace["op"]() is None
    line = sys._getframe().f_lineno + 1
    where = namespace["clip"]()
    assert where == (__file__.replace(os.sep, "/"), line)


def _interpreters() -> list[str]:
    """This Python, and a 3.12+ where one runs here (its probe traces lines with sys.monitoring)."""
    import shutil
    import subprocess

    found = [sys.executable]
    for name in ("python3.13", "python3.12"):
        path = shutil.which(name)
        if path and subprocess.run([path, "-c", "pass"], capture_output=True).returncode == 0:
            found.append(path)
            break
    return found


@pytest.mark.parametrize("python", _interpreters())
def test_probe_records_the_todo_lines_that_ran_only(tmp_path, python):
    """sys.monitoring (3.12+) or sys.settrace: module-level and function lines that ran, not the others."""
    import json
    import subprocess

    script = tmp_path / "m.py"
    script.write_text(
        "def f(x):\n    y = x + 1\n    return y\n\ndef g():\n    return 0\n\nZ = 1\nfor i in range(3):\n    f(i)\n",
        "utf-8",
    )
    todos = tmp_path / "todos.json"
    todos.write_text(json.dumps({str(script.resolve()): [2, 6, 8]}), "utf-8")
    probe = Path(__file__).resolve().parent.parent / "ascend_port" / "verify" / "probe"
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(probe),
        "ASCEND_PORT_PROBE_OUT": str(tmp_path / "out"),
        "ASCEND_PORT_PROBE_TODOS": str(todos),
    }
    subprocess.run([python, str(script)], env=env, check=True, cwd=tmp_path)
    (written,) = (tmp_path / "out").glob("probe-*.json")
    assert json.loads(written.read_text("utf-8"))["todo_lines_hit"] == {str(script.resolve()): [2, 8]}


def test_a_torch_compile_failure_under_the_emulator_is_an_emulator_limit(tmp_path):
    text = traceback_text(tmp_path, [], "torch._inductor.exc.InductorError: LoweringException: AssertionError:")
    emulated = classify(text, tmp_path, {"calls": {"torch.npu.is_available": 1}}, {})
    assert emulated.cause == "emulator" and "torch.compile" in emulated.detail
    assert classify(text, tmp_path, {}, {}).cause == "program"  # (on plain CPU: the program's own)


def test_a_name_the_release_lacks_is_the_cause_only_where_the_error_names_it(tmp_path):
    emulator = {"absent": {"torch_npu.npu.MemPool": 1, "torch_npu.npu_foo": 1}}
    named = traceback_text(tmp_path, [], "AttributeError: module 'torch_npu.npu' has no attribute 'MemPool'")
    failure = classify(named, tmp_path, emulator, {})
    assert failure.cause == "absent" and failure.detail.startswith("torch_npu.npu.MemPool (")
    # a hasattr() probe of npu_foo recorded it, the error is another one
    other = traceback_text(tmp_path, [], "AttributeError: 'Config' object has no attribute 'depth'")
    assert classify(other, tmp_path, emulator, {}).cause == "program"


def test_only_a_command_that_started_can_have_stayed_on_the_cpu(tmp_path):
    from ascend_port.verify.commands import Command, Todos
    from ascend_port.verify.execute import Outcome
    from ascend_port.verify.session import _result

    probe = {"torch_imported": True, "device_watch": True, "npu_tensors": False}
    command = Command("python t.py", ["python", "t.py"], "config", timeout=5)
    started = _result(command, Outcome(0, 1.0, "", probes=[probe]), tmp_path, Todos())
    failed = _result(command, Outcome(1, 1.0, "ValueError: x\n", probes=[probe]), tmp_path, Todos())
    assert started.stayed_on_cpu and not failed.stayed_on_cpu
    watched_npu = _result(command, Outcome(0, 1.0, "", probes=[{**probe, "npu_tensors": True}]), tmp_path, Todos())
    unwatched = _result(command, Outcome(0, 1.0, "", probes=[{**probe, "device_watch": False}]), tmp_path, Todos())
    assert not watched_npu.stayed_on_cpu and not unwatched.stayed_on_cpu
    # the emulator's report says so itself (its "stayed_on_cpu" section, when it has one): its word wins
    emulated = Outcome(0, 1.0, "", emulator={"calls": {}, "stayed_on_cpu": {"python t.py": 1}})
    assert _result(command, emulated, tmp_path, Todos()).stayed_on_cpu
    emulated.emulator["stayed_on_cpu"] = {}
    assert not _result(command, emulated, tmp_path, Todos()).stayed_on_cpu


def test_a_console_script_entry_point_may_name_an_attribute_path(tmp_path):
    """``pkg.cli:App.main [extra]``: the --help command calls App.main, as the installed script would (from src/
    where the project has that layout and is not installed)."""
    import subprocess

    from ascend_port.verify.commands import Todos

    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "p"\nversion = "0"\n[project.scripts]\np-cli = "pkg.cli:App.main [x]"\n',
            "pkg/__init__.py": "",
            "pkg/cli.py": "import sys\nclass App:\n    @staticmethod\n    def main():\n        print(sys.argv)\n        return 0\n",
        },
    )
    (command,) = [c for c in discovered(tmp_path, Todos(), 10) if c.kind == "help"]
    result = subprocess.run(command.argv, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "['p-cli', '--help']", result.stderr


PYTEST_COLLECTION_ERROR = """\
_______________________ ERROR collecting tests/test_a.py _______________________
ImportError while importing test module '/p/tests/test_a.py'.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/test_a.py:2: in <module>
    import notinstalled_pkg
E   ModuleNotFoundError: No module named 'notinstalled_pkg'
=========================== short test summary info ============================
ERROR tests/test_a.py
1 error in 2.28s
"""


def test_a_pytest_collection_error_is_read_from_pytest_s_own_traceback(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("import torch_npu\nimport notinstalled_pkg\n", "utf-8")
    failure = classify(PYTEST_COLLECTION_ERROR, tmp_path, {}, {})
    assert failure.cause == "dependency" and "notinstalled_pkg is not installed" in failure.detail
    assert failure.frame is not None and (failure.frame.file, failure.frame.line) == ("tests/test_a.py", 2)
    todo = {str((tmp_path / "tests" / "test_a.py").resolve()): {2: 1}}
    assert classify(PYTEST_COLLECTION_ERROR, tmp_path, {}, todo).cause == "todo"  # (the failing line's TODO)


def test_a_half_precision_choice_counts_only_beside_a_cuda_check(tmp_path):
    """A float32-only run is flagged for a dtype picked next to a CUDA check, not for any fp16 option."""
    from ascend_port.verify.session import _half_precision_for_cuda

    chosen = tmp_path / "chosen.py"
    chosen.write_text("import torch\n\nif torch.cuda.is_available():\n    dtype = torch.bfloat16\n", "utf-8")
    option = tmp_path / "option.py"
    option.write_text('def train(mixed_precision="fp16"):\n    pass\n\n\n\n\ndevice = "cuda"\n', "utf-8")
    assert _half_precision_for_cuda(str(chosen)) == 4
    assert _half_precision_for_cuda(str(option)) is None


def test_losses_are_held_to_the_tolerances_of_the_ports_compute_dtype():
    """A port that autocasts to bf16 on the npu is compared with the original's float32 on CPU within bf16's
    rounding (timm's smoke training differed by 0.006 of 2.25 and was said to 'differ'), float32 tightly."""
    from ascend_port.verify.compare import tolerance
    from ascend_port.verify.kit import TOLERANCES
    from ascend_port.verify.session import Result

    def run(**dtypes: int) -> Result:
        return Result("python train.py", ["python", "train.py"], "config", True, 0, 1.0, compute_dtypes=dtypes)

    assert tolerance(run(float32=4, bfloat16=8)) == ("bf16", *TOLERANCES["bf16"])
    assert tolerance(run(float16=2, float32=1)) == ("fp16", *TOLERANCES["fp16"])
    assert tolerance(run(float32=3)) == ("fp32", 1e-3, 1e-5) == tolerance(None)
