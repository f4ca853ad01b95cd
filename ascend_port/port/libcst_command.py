"""The port as a LibCST codemod command, so it composes with LibCST's own runner:

python -m libcst.tool codemod -x ascend_port.port.libcst_command.PortToNpuCommand src/
"""

from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand

from ascend_port.core.catalogue import Confidence
from ascend_port.core.selection import Selection, parse_patterns
from ascend_port.port.python import port_module


class PortToNpuCommand(VisitorBasedCodemodCommand):
    DESCRIPTION = "Port CUDA PyTorch code to Ascend NPUs (torch_npu): the rules of `ascend-port rules`."

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--select", action="append", help="rule IDs or prefixes (default ALL)")
        arg_parser.add_argument("--ignore", action="append", help="rule IDs or prefixes to skip")
        arg_parser.add_argument("--min-confidence", default="low", choices=["high", "medium", "low"])

    def __init__(self, context: CodemodContext, select=None, ignore=None, min_confidence: str = "low") -> None:
        super().__init__(context)
        self.selection = Selection(
            select=parse_patterns(select) or ("ALL",),
            ignore=parse_patterns(ignore),
            min_confidence=Confidence.parse(min_confidence),
        )

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        new_tree, findings = port_module(tree, self.selection)
        for finding in findings:
            self.warn(f"{finding.rule.id} [{finding.confidence.label}] line {finding.line}: {finding.message}")
        return new_tree
