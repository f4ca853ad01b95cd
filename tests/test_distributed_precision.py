"""What the golden cases (default configuration only) cannot show for NPU2xx/NPU3xx: how the rules share sites with
the device rules under --select/--ignore/--min-confidence, and that each is listed and explained by the CLI."""

from __future__ import annotations

from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.core.catalogue import Confidence
from ascend_port.core.selection import Selection
from ascend_port.port.python import port_source
from ascend_port.rules.registry import all_rules

BF16_CHECK = (
    "import torch\n"
    "\n"
    "def amp_dtype():\n"
    "    return torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16\n"
)


def rule_ids(findings) -> list[str]:
    return sorted(f.rule.id for f in findings)


def test_bf16_check_is_one_clean_rewrite_without_the_capability_todo() -> None:
    outcome = port_source(BF16_CHECK, Selection())
    assert "torch.npu.is_bf16_supported() else" in outcome.new_text
    assert "TODO" not in outcome.new_text and "get_device_capability" not in outcome.new_text
    # NPU304 took the call over: neither NPU106's rename nor NPU108's TODO is reported for it.
    assert rule_ids(outcome.findings) == ["NPU100", "NPU304"]


def test_without_the_bf16_rule_the_capability_todo_comes_back() -> None:
    outcome = port_source(BF16_CHECK, Selection(ignore=("NPU304",)))
    # a capability check is a guard: never renamed to torch.npu (whose probe returns None), only flagged
    assert "torch.cuda.get_device_capability()[0] >= 8" in outcome.new_text
    assert "NPU108 [low]" in outcome.new_text
    assert rule_ids(outcome.findings) == ["NPU108"]
    # NPU304 is medium and NPU108 low: at --min-confidence high nothing is left to do.
    high = port_source(BF16_CHECK, Selection(min_confidence=Confidence.HIGH))
    assert high.new_text is None and rule_ids(high.findings) == []


def test_unpacking_is_kept_when_the_bf16_rule_is_off() -> None:
    source = (
        "import torch\n\n"
        "def use_bf16():\n"
        "    major, minor = torch.cuda.get_device_capability()\n"
        "    return major >= 8\n"
    )
    on = port_source(source, Selection())
    assert "major" not in on.new_text and "return torch.npu.is_bf16_supported()" in on.new_text
    off = port_source(source, Selection(ignore=("NPU304",)))
    assert "major, minor = torch.cuda.get_device_capability()" in off.new_text and "return major >= 8" in off.new_text


def test_backend_rules_follow_the_selection() -> None:
    source = 'import torch.distributed as dist\n\nbackend = "nccl"\ndist.init_process_group("nccl")\n'
    high_only = port_source(source, Selection(min_confidence=Confidence.HIGH))
    assert 'backend = "nccl"' in high_only.new_text  # NPU201 is medium
    assert 'dist.init_process_group("hccl")' in high_only.new_text
    assert "NPU201" not in rule_ids(high_only.findings)
    assert port_source(source, Selection(select=("NPU1", "NPU3"))).new_text is None


def test_fp64_todo_is_not_written_again_and_rotary_rewrite_wins() -> None:
    source = (
        "import torch\n\n"
        "def rope_cache(n, device):\n"
        "    return torch.arange(n, device=device, dtype=torch.float64)\n\n"
        "def weights(n, device):\n"
        "    return torch.ones(n, device=device, dtype=torch.float64)\n"
    )
    outcome = port_source(source, Selection())
    assert "torch.arange(n, device=device, dtype=torch.float32)" in outcome.new_text
    assert outcome.new_text.count("NPU303 [low] double precision on the NPU") == 1
    assert rule_ids(outcome.findings) == ["NPU100", "NPU302", "NPU303"]
    assert port_source(outcome.new_text, Selection()).new_text is None


def test_every_new_rule_is_listed_and_explained() -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["rules"], catch_exceptions=False).stdout
    new_rules = [r for r in all_rules() if r.id[:4] in ("NPU2", "NPU3")]
    assert len(new_rules) == 17  # NPU200-NPU210, NPU300-NPU305
    for r in new_rules:
        assert f"\n{r.id} {r.name} " in f"\n{listed}", r.id
        explained = runner.invoke(app, ["explain", r.id], catch_exceptions=False).stdout
        assert f"{r.id} {r.name}" in explained and "Before" in explained and "After" in explained, r.id
