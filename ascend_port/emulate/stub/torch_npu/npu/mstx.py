"""torch_npu.npu.mstx under ascend-port emulate: MindStudio Tools Extension marks and ranges, checked and counted,
recording nothing.

As in torch_npu (torch_npu/npu/mstx.py, read through the search tool), ``torch.npu.mstx`` is the class ``mstx`` of
this module (its methods are static; ``mstx.annotate`` is the context manager and decorator), and a call never
raises: an invalid message, domain, stream or range id warns and returns what torch_npu returns then (-1 from
range_push/range_pop, 0 from range_start). Range ids are the ones range_start hands out, from 1.
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from torch_npu import _inventory, _report

__all__ = ["mstx", "annotate"]

_stacks: defaultdict[str, list[str]] = defaultdict(list)  # range_push messages per domain
_open: dict[int, str] = {}  # range_start ids not ended yet -> domain
_ids = itertools.count(1)
_NO_MESSAGE = object()


def _valid(function: str, domain: object, stream: object = None, message: object = _NO_MESSAGE) -> bool:
    problem = None
    if message is not _NO_MESSAGE and (not message or not isinstance(message, str)):
        problem = "message"
    elif not domain or not isinstance(domain, str):
        problem = "domain"
    elif stream:
        from torch_npu.npu import Stream  # the package that imports this module

        problem = None if isinstance(stream, Stream) else "stream"
    if problem:
        warnings.warn(f"Invalid {problem} for mstx.{function}: ignored, as torch_npu does", stacklevel=3)
    return problem is None


def _start(function: str, message: object, stream: object, domain: str) -> int:
    if not _valid(function, domain, stream, message):
        return 0
    range_id = next(_ids)
    _open[range_id] = domain
    return range_id


def _end(function: str, range_id: object, domain: str) -> None:
    if not isinstance(range_id, int):
        warnings.warn(f"Invalid range id for mstx.{function}: give the value range_start returned", stacklevel=3)
    elif _valid(function, domain):
        _open.pop(range_id, None)


class _Absent(type):
    def __getattr__(cls, name: str) -> Any:
        """Only reached for a name the class lacks, such as a method the target release does not have."""
        if not name.startswith("_"):
            _report.record_absent(f"torch_npu.npu.mstx.{name}")
        raise AttributeError(f"type object 'mstx' has no attribute {name!r}")


class mstx(metaclass=_Absent):
    """The calls of torch_npu.npu.mstx; each is counted in the exit report."""

    @staticmethod
    def mark(message: str, stream: Any = None, domain: str = "default") -> None:
        _report.record_call("torch_npu.npu.mstx.mark")
        _valid("mark", domain, stream, message)

    @staticmethod
    def range_push(message: str, stream: Any = None, domain: str = "default") -> int:
        _report.record_call("torch_npu.npu.mstx.range_push")
        if not _valid("range_push", domain, stream, message):
            return -1
        _stacks[domain].append(message)
        return len(_stacks[domain]) - 1  # the level of the range pushed, as NVTX's nvtxRangePush

    @staticmethod
    def range_pop(domain: str = "default") -> int:
        _report.record_call("torch_npu.npu.mstx.range_pop")
        if not _valid("range_pop", domain) or not _stacks[domain]:
            return -1
        _stacks[domain].pop()
        return len(_stacks[domain])

    @staticmethod
    def range_start(message: str, stream: Any = None, domain: str = "default") -> int:
        _report.record_call("torch_npu.npu.mstx.range_start")
        return _start("range_start", message, stream, domain)

    @staticmethod
    def range_end(range_id: int, domain: str = "default") -> None:
        _report.record_call("torch_npu.npu.mstx.range_end")
        _end("range_end", range_id, domain)

    @staticmethod
    def mstx_range(message: str, stream: Any = None, domain: str = "default") -> Callable[[Callable], Callable]:
        _report.record_call("torch_npu.npu.mstx.mstx_range")

        def wrapper(function: Callable) -> Callable:
            @functools.wraps(function)
            def inner(*args: Any, **kwargs: Any) -> Any:
                range_id = _start("mstx_range", message, stream, domain)
                result = function(*args, **kwargs)
                _end("mstx_range", range_id, domain)
                return result

            return inner

        return wrapper

    annotate: type[annotate]


class annotate:
    """A range over a ``with`` block, or over each call of a decorated function (named after it by default)."""

    def __init__(self, message: str = "", stream: Any = None, domain: str = "default") -> None:
        _report.record_call("torch_npu.npu.mstx.annotate")
        self.message, self.stream, self.domain = message, stream, domain
        self.range_id: int | None = None

    def __enter__(self) -> annotate:
        self.range_id = _start("annotate", self.message, self.stream, self.domain)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.range_id is not None:
            _end("annotate", self.range_id, self.domain)
            self.range_id = None

    def __call__(self, function: Callable) -> Callable:
        message = self.message or function.__name__

        @functools.wraps(function)
        def inner(*args: Any, **kwargs: Any) -> Any:
            range_id = _start("annotate", message, self.stream, self.domain)
            try:
                return function(*args, **kwargs)
            finally:
                _end("annotate", range_id, self.domain)

        return inner


# The target release (`--torch-npu VERSION`) decides what exists: the methods its inventory lists for the class
# (range_push and range_pop are missing from some), and annotate where its module has it.
_MEMBERS = _inventory.members("npu.mstx", "mstx")
for _name in [name for name in vars(mstx) if _MEMBERS and not name.startswith("_") and name not in _MEMBERS]:
    delattr(mstx, _name)
if "annotate" in _inventory.inventory()["npu_submodules"].get("mstx", ()):
    mstx.annotate = annotate
else:
    del annotate
    __all__ = ["mstx"]
