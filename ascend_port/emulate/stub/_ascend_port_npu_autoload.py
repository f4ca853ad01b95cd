"""Entry point of the torch.backends group (ascend-port emulate): ``import torch`` imports the stand-in torch_npu,
so the npu device exists even where the script does not import torch_npu, as torch (>= 2.5) autoloads an installed
torch_npu. Below 2.5 torch has no autoload: for a target release built for an older torch (2.1.0.post17 ...
2.4.0.post4) nothing is loaded, so a program that forgets ``import torch_npu`` fails as it would on the host.
A separate module: when the script imports torch_npu first, torch's autoload finds it partially initialized here,
which is fine."""

from __future__ import annotations

import json
import os
import re

API_ENV = "ASCEND_PORT_EMULATE_API"
AUTOLOAD_SINCE = (2, 5)  # the torch release that brought the torch.backends entry points


def _target_torch() -> tuple[int, ...]:
    """The torch version the target release requires (the runner's inventory file), () when unknown."""
    try:
        with open(os.environ[API_ENV], encoding="utf-8") as stream:
            version = json.load(stream).get("torch_version") or ""
    except (KeyError, OSError, ValueError):
        return ()
    match = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(p) for p in match.group(0).split(".")) if match else ()


def load() -> None:
    target = _target_torch()
    if target and target < AUTOLOAD_SINCE:
        return
    import torch_npu  # noqa: F401
