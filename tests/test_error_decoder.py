"""`ascend-port error`: the table of CANN/ACL/HCCL/torch_npu errors (each entry sourced, its pattern matching its own
example) and the decoder of real logs from public issue reports (tests/data/cann_logs/, the issue named on the first
line): root cause first, the operator and the user's frame."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.verify import cann_errors

LOGS = Path(__file__).parent / "data" / "cann_logs"
runner = CliRunner()


def test_every_entry_is_sourced_and_matches_its_example() -> None:
    table = cann_errors.entries()
    assert len(table) >= 50
    assert len({e.id for e in table}) == len(table)
    for entry in table:
        assert entry.source.strip() and entry.cause.strip() and entry.fix.strip() and entry.releases, entry.id
        assert re.search(r"https?://|torch_npu \d", entry.source), entry.id
        assert entry.pattern.search(entry.example), entry.id
        assert 0 <= entry.tier < len(cann_errors.TIERS), entry.id


def test_the_numeric_codes_are_found_through_one_search() -> None:
    # a log is scanned with one search for every numeric code (the ACL table's pattern) plus the other patterns
    assert len(cann_errors.by_number()) >= 200
    assert len(cann_errors.by_number()) + len(cann_errors.by_text()) == len(cann_errors.entries())
    findings, _ = cann_errors.decode_log("aclrtSynchronizeStream(stream) failed: 507035 and ret = 207018\n")
    assert [f.entry.id for f in findings] == ["acl-207018", "acl-507035"]


def test_the_curated_kinds_are_all_present() -> None:
    kinds = Counter(e.kind for e in cann_errors.entries())
    for kind in ("acl", "cann", "aclnn", "not-supported", "oom", "hccl", "device", "torch_npu"):
        assert kinds[kind], kind
    # sourced from the documentation or issue reports, not only from the wheel's headers
    assert sum("http" in e.source for e in cann_errors.entries()) >= 40


@pytest.mark.parametrize(
    ("code", "entry_id"),
    [
        ("507035", "acl-507035"),
        ("EZ9999", "cann-EZ9999"),
        ("ez1001", "cann-EZ1001"),
        ("EL0004", "cann-EL0004"),
        ("EI9999", "cann-EI9999"),
        ("E39999", "cann-E39999"),
        ("ERR01100", "torch_npu-ERR100"),
        ("ACL_ERROR_RT_AICORE_EXCEPTION", "acl-507015"),
        ("HCCL9", "hccl-9"),
        ("561103", "aclnn-561103"),
    ],
)
def test_lookup_by_code(code: str, entry_id: str) -> None:
    assert [e.id for e in cann_errors.lookup(code)] == [entry_id]


def test_an_unknown_cann_code_gets_its_module_family() -> None:
    (entry,) = cann_errors.lookup("EZ1234")
    assert "operators (aclnn)" in entry.cause and "user error" in entry.cause
    assert cann_errors.lookup("999999") == []


def log(name: str) -> str:
    text = (LOGS / name).read_text("utf-8")
    assert re.match(r"# https://github\.com/\S+/(issues|pull)/\d+", text), name  # every excerpt names its issue
    return text


# (log, root cause entry, its operator or None, the user's frame "file:line" or None, other entries found)
REAL_LOGS = [
    ("pytorch_66_vector_core.log", "acl-507035", None, "testLlame_new.py:30", {"cann-EH9999", "torch_npu-ERR100"}),
    (
        "llamafactory_4836_maximum_kernel.log",
        "device-kernel-failed",
        "Maximum_ee98c6628030785f610b924ab1557b31_high_performance_223000000",
        None,
        {"acl-507035", "torch_npu-ERR005", "npu-cpu-fallback"},
    ),
    ("vllm_ascend_3413_notify_timeout.log", "cann-EI0002", None, None, {"torch_npu-ERR100"}),
    (
        "vllm_ascend_486_hccl_socket.log",
        "cann-EI0006",
        "HcclAllreduce",
        "base_device_communicator.py:35",
        {"hccl-6", "torch_npu-ERR100"},
    ),
    ("ptoas_341_set_device_memory.log", "cann-EL0004", None, None, {"acl-507033"}),
    ("vllm_ascend_382_watchdog.log", "hccl-watchdog-timeout", "ALLREDUCE", None, set()),
    ("pytorch_7_init_env.log", "env-init-failed", None, None, {"cann-EH9999"}),
    ("touchnet_100_oom.log", "oom-tried-to-allocate", None, None, set()),
    ("flash_attention_npu_237_aicore.log", "acl-507015", None, None, {"cann-EE9999", "torch_npu-ERR100"}),
    (
        "vllm_ascend_4859_aclnn_inner.log",
        "aclnn-561103",
        "aclnnInplaceZero",
        None,
        {"cann-EZ9999", "torch_npu-ERR100"},
    ),
    ("vllm_ascend_116_copy_d2d.log", "acl-507001", None, None, set()),
    ("llamafactory_975_task_timeout.log", "acl-107020", None, None, {"cann-EI0002"}),
    ("vllm_ascend_1443_ffts_timeout.log", "acl-507048", None, None, {"cann-EI0002", "torch_npu-ERR100"}),
]


@pytest.mark.parametrize(("name", "root", "op", "frame", "others"), REAL_LOGS, ids=[r[0] for r in REAL_LOGS])
def test_real_logs_decode_to_their_root_cause(
    name: str, root: str, op: str | None, frame: str | None, others: set[str]
) -> None:
    findings, user = cann_errors.decode_log(log(name))
    assert findings[0].entry.id == root
    assert {f.entry.id for f in findings[1:]} == others
    if op:
        assert findings[0].ops[0] == op
    if frame:
        assert user is not None and str(user).split("/")[-1].startswith(frame)
    else:
        assert user is None


def test_the_fix_of_a_real_report_is_the_maintainers_answer() -> None:
    findings, _ = cann_errors.decode_log(log("vllm_ascend_116_copy_d2d.log"))
    assert "PYTORCH_NPU_ALLOC_CONF=expandable_segments:False" in findings[0].entry.fix
    findings, _ = cann_errors.decode_log(log("pytorch_7_init_env.log"))
    assert "pip install numpy decorator sympy" in findings[0].entry.fix


def test_an_aclnn_error_comes_before_the_inner_error_it_raises() -> None:
    text = log("vllm_ascend_4859_aclnn_inner.log").splitlines()
    # the EZ9999 lines first, the aclnn call after: the aclnn error (it names the operator) still leads
    findings, _ = cann_errors.decode_log("\n".join([*text[3:], *text[:3]]))
    assert [f.entry.id for f in findings][:2] == ["aclnn-561103", "cann-EZ9999"]
    assert findings[0].ops[0] == "aclnnInplaceZero"


def test_a_cause_comes_before_the_errors_it_causes_even_when_printed_later() -> None:
    # the ACL code is printed first (line 2), the out-of-memory behind it after: the cause leads
    findings, _ = cann_errors.decode_log(log("ptoas_341_set_device_memory.log"))
    assert [f.entry.id for f in findings] == ["cann-EL0004", "acl-507033"]
    assert findings[0].line > findings[1].line


def test_one_ranks_failure_comes_before_the_timeouts_of_the_others() -> None:
    text = log("vllm_ascend_382_watchdog.log") + log("touchnet_100_oom.log").replace("RuntimeError", "[rank3]: x")
    findings, _ = cann_errors.decode_log(text)
    assert [f.entry.id for f in findings] == ["oom-tried-to-allocate", "hccl-watchdog-timeout"]
    assert findings[1].count == 3


def test_user_frame_is_the_last_one_outside_libraries() -> None:
    text = (
        'Traceback (most recent call last):\n  File "/home/me/train.py", line 12, in <module>\n    main()\n'
        '  File "/home/me/model.py", line 40, in forward\n    x = self.attn(x)\n'
        '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1532, in _call_impl\n'
        "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n"
    )
    _, frame = cann_errors.decode_log(text)
    assert frame == cann_errors.UserFrame("/home/me/model.py", 40, "forward")


def test_operator_from_aclnn_call() -> None:
    findings, _ = cann_errors.decode_log("NPU function error: call aclnnInplaceCopy failed, error code is 561103\n")
    assert findings[0].entry.id == "aclnn-561103" and findings[0].ops == ["aclnnInplaceCopy"]


def test_cli_code_text_and_json() -> None:
    done = runner.invoke(app, ["error", "507035"])
    assert done.exit_code == 0
    assert "ACL_ERROR_RT_VECTOR_CORE_EXCEPTION" in done.output and "ASCEND_LAUNCH_BLOCKING=1" in done.output
    done = runner.invoke(app, ["error", "ERR02200", "--format", "json"])
    assert done.exit_code == 0
    assert json.loads(done.output)["entries"][0]["name"] == "HCCL"
    assert runner.invoke(app, ["error", "999999"]).exit_code == 1


def test_cli_log_json_schema() -> None:
    done = runner.invoke(app, ["error", str(LOGS / "vllm_ascend_486_hccl_socket.log"), "--format", "json"])
    assert done.exit_code == 0
    data = json.loads(done.output)
    assert set(data) == {"root_cause", "user_frame", "findings"}
    assert data["root_cause"] == data["findings"][0]
    assert set(data["user_frame"]) == {"file", "line", "function"}
    keys = {"id", "kind", "code", "name", "tier", "cause", "fix", "source", "releases", "matched", "line", "text"}
    assert keys | {"count", "ops"} == set(data["findings"][0])
    assert data["findings"][2]["matched"] == "ERR01100"


def test_cli_stdin_and_exit_codes(tmp_path: Path) -> None:
    done = runner.invoke(app, ["error", "-"], input=log("touchnet_100_oom.log"))
    assert done.exit_code == 0 and "Root cause: oom-tried-to-allocate" in done.output
    assert runner.invoke(app, ["error", "-"], input="all good\n").exit_code == 1
    quiet = tmp_path / "ok.log"
    quiet.write_text("step 1 loss 2.3\n")
    assert runner.invoke(app, ["error", str(quiet)]).exit_code == 1
    missing = runner.invoke(app, ["error", str(tmp_path / "missing.log")])
    assert missing.exit_code == 2
    assert runner.invoke(app, ["error", "507035", "--format", "xml"]).exit_code == 2


def test_the_command_imports_neither_libcst_nor_torch() -> None:
    code = (
        "import sys\nfrom ascend_port.cli import main\nsys.argv = ['ascend-port', 'error', '507035']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('LOADED', [m for m in ('libcst', 'torch') if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "LOADED []" in done.stdout, done.stdout + done.stderr
