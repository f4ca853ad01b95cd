"""The port as a LibCST codemod command, so it composes with LibCST's own runner:

python -m libcst.tool codemod --no-format -x ascend_port.port.libcst_command.PortToNpuCommand src/

Python files only, one at a time: the target torch-npu release is ``--torch-npu VERSION`` (default the newest
covered one; ``ascend-port apply`` also infers it from the project's torch pin).
"""

from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence
from ascend_port.core.options import PortOptions
from ascend_port.core.selection import Selection, parse_patterns
from ascend_port.port.python import port_module


class PortToNpuCommand(VisitorBasedCodemodCommand):
    DESCRIPTION = "Port CUDA PyTorch code to Ascend NPUs (torch_npu): the rules of `ascend-port rules`."

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--select", action="append", help="rule IDs or prefixes (default ALL)")
        arg_parser.add_argument("--ignore", action="append", help="rule IDs or prefixes to skip")
        arg_parser.add_argument("--min-confidence", default="low", choices=["high", "medium", "low"])
        arg_parser.add_argument("--torch-npu", help="the torch-npu release the port targets (default the newest)")

    def __init__(
        self,
        context: CodemodContext,
        select=None,
        ignore=None,
        min_confidence: str = "low",
        torch_npu: str | None = None,
    ) -> None:
        super().__init__(context)
        self.options = PortOptions(target=npu_api.covered_release(torch_npu) if torch_npu else None)
        self.selection = Selection(
            select=parse_patterns(select) or ("ALL",),
            ignore=parse_patterns(ignore),
            min_confidence=Confidence.parse(min_confidence),
        )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        new_tree, findings = port_module(tree, self.selection, self.options)
        for finding in findings:
            self.warn(f"{finding.rule.id} [{finding.confidence.label}] line {finding.line}: {finding.message}")
        return new_tree
