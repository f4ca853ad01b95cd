"""The attention port through the real engine paths: helper insertion (once, before the first user, idempotent, in
any chunking), import clean-up, options and rule selection."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest

from ascend_port.core.options import PortOptions
from ascend_port.core.porting import PortError
from ascend_port.core.selection import Selection
from ascend_port.port.python import port_module, port_source


def port(text: str, selection: Selection | None = None, **options: str) -> str:
    outcome = port_source(textwrap.dedent(text), selection or Selection(), PortOptions(**options))
    assert outcome.new_text is not None
    ast.parse(outcome.new_text)
    return outcome.new_text


TWO_USERS = """\
    \"\"\"Two modules, three call sites, two helpers.\"\"\"
    from __future__ import annotations

    import torch
    import xformers.ops as xops
    from flash_attn import flash_attn_func


    # the first user
    class A(torch.nn.Module):
        def forward(self, q, k, v):
            return flash_attn_func(q, k, v, causal=True)


    class B(torch.nn.Module):
        def forward(self, q, k, v):
            if self.training:
                return flash_attn_func(q, k, v, dropout_p=0.1)
            return xops.memory_efficient_attention(q, k, v)
    """


def test_helpers_are_written_once_before_their_first_user():
    ported = port(TWO_USERS)
    assert ported.count("def _npu_flash_attn(") == 1 and ported.count("def _npu_memory_efficient_attention(") == 1
    assert (
        ported.index("def _npu_flash_attn(")
        < ported.index("def _npu_memory_efficient_attention(")
        < ported.index("# the first user\nclass A")
    )
    assert ported.startswith('"""Two modules, three call sites, two helpers."""\nfrom __future__ import annotations\n')
    assert "flash_attn import" not in ported and "xformers" not in ported.split("def _npu_flash_attn")[0]
    assert port_source(ported, Selection(), PortOptions()).new_text in (None, ported)  # idempotent


def test_an_existing_helper_is_reused_and_a_missing_one_added():
    ported = port("""\
        import torch
        from flash_attn import flash_attn_func


        def attend(q, k, v):
            return flash_attn_func(q, k, v)
        """)
    more = ported + textwrap.dedent("""\


        import xformers.ops as xops


        def attend_again(q, k, v):
            return xops.memory_efficient_attention(q, k, v, attn_bias=xops.LowerTriangularMask())
        """)
    again = port(more)
    assert again.count("def _npu_flash_attn(") == 1 and again.count("def _npu_memory_efficient_attention(") == 1
    assert (
        again.index("def attend(")
        < again.index("def _npu_memory_efficient_attention(")
        < again.index("def attend_again(")
    )


def test_crlf_and_tab_indented_modules_stay_consistent():
    source = (
        "import torch\r\nfrom flash_attn import flash_attn_func\r\n\r\n\r\ndef f(q, k, v):\r\n"
        "\treturn flash_attn_func(q, k, v, causal=True)\r\n"
    )
    ported = port_source(source, Selection(), PortOptions()).new_text
    assert ported is not None and "\n" not in ported.replace("\r\n", "")
    assert "\treturn _npu_flash_attn(q, k, v, causal=True)\r\n" in ported
    ast.parse(ported)


def test_libcst_runner_path_gives_the_same_port():
    source = textwrap.dedent(TWO_USERS)
    module, findings = port_module(cst.parse_module(source), Selection())
    assert module.code == port_source(source, Selection(), PortOptions()).new_text
    assert {f.rule.id for f in findings} >= {"NPU400", "NPU405", "NPU408"}


def test_mindiesd_backend_and_unknown_backend():
    ported = port(TWO_USERS, attention_backend="mindiesd")
    assert "from mindiesd import attention_forward" in ported
    with pytest.raises(PortError, match="unknown attention backend 'cuda'"):
        port_source(textwrap.dedent(TWO_USERS), Selection(), PortOptions(attention_backend="cuda"))


def test_ignored_window_rule_leaves_that_call_and_its_import():
    ported = port(
        """\
        from flash_attn import flash_attn_func


        def local(q, k, v):
            return flash_attn_func(q, k, v, window_size=(4, 0))


        def full(q, k, v):
            return flash_attn_func(q, k, v)
        """,
        Selection(ignore=("NPU402",)),
    )
    assert "return flash_attn_func(q, k, v, window_size=(4, 0))" in ported
    assert "return _npu_flash_attn(q, k, v)" in ported
    assert "from flash_attn import flash_attn_func" in ported  # still used


def test_sdpa_is_reported_as_compatible_not_changed():
    source = (
        "import torch.nn.functional as F\n\n\ndef f(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)\n"
    )
    outcome = port_source(source, Selection(), PortOptions())
    assert outcome.new_text is None
    [finding] = outcome.findings
    assert finding.rule.id == "NPU407" and not finding.applied and finding.line == 5


@pytest.mark.parametrize(
    "guard, kept",
    [
        ("try:\n    from flash_attn import flash_attn_func\nexcept Exception:\n    pass\n", "except Exception"),
        (
            "try:\n    from flash_attn import flash_attn_func\n    setup()\nexcept ImportError:\n    pass\n",
            "try:\n    setup()\nexcept ImportError:",
        ),
        (
            "try:\n    from flash_attn import flash_attn_func\nexcept ImportError:\n    pass\nfinally:\n    done()\n",
            "try:\n    pass\nexcept ImportError:",
        ),
    ],
)
def test_guards_that_can_still_matter_are_kept(guard, kept):
    ported = port(guard + "\n\ndef f(q, k, v):\n    return flash_attn_func(q, k, v)\n")
    assert kept in ported and "from flash_attn" not in ported


def test_guard_with_else_branch_keeps_it():
    ported = port("""\
        try:
            from flash_attn import flash_attn_func
        except ModuleNotFoundError:
            USE_FLASH = False
        else:
            USE_FLASH = True


        def f(q, k, v):
            return flash_attn_func(q, k, v)
        """)
    assert ported.startswith("import torch_npu\nUSE_FLASH = True\n\n\n") and "try:" not in ported


def test_attention_backend_reaches_the_port_through_the_cli(tmp_path):
    from typer.testing import CliRunner

    from ascend_port.cli import app

    module = tmp_path / "attn.py"
    module.write_text(textwrap.dedent(TWO_USERS), "utf-8")
    runner = CliRunner()
    result = runner.invoke(app, ["apply", str(module), "--dry-run", "--no-cache", "--attention-backend", "mindiesd"])
    assert result.exit_code == 1, result.output
    assert "+        from mindiesd import attention_forward" in result.stdout
    default = runner.invoke(app, ["apply", str(module), "--dry-run", "--no-cache"])
    assert "_npu_flash_attn" in default.stdout and "mindiesd" not in default.stdout
    bad = runner.invoke(app, ["scan", str(module), "--attention-backend", "cuda"])
    assert bad.exit_code == 2 and "attention-backend" in bad.output
