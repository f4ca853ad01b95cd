"""Docker Compose files (``docker-compose*.yml``, ``compose*.yaml``): the NVIDIA GPU access of each service (NPU631),
CUDA base images (NPU630), the CUDA variables of ``environment`` (NPU610-NPU612, as in shell code) and the flags of ``command`` and
``entrypoint`` (NPU615/NPU616).

Compose has no device request for NPUs: a container reaches them through device files and the host driver mounted
into it, or through Ascend Docker Runtime. What to mount depends on the host (which NPUs, driver path), so the
GPU settings get a TODO naming the Ascend way and stay until it is in place. The file is edited by spans (comments
and layout stay) and read again: everything but the renamed variables must be unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ascend_port.core.catalogue import Confidence, rule
from ascend_port.core.options import PortOptions
from ascend_port.core.porting import Ported, PortError
from ascend_port.core.selection import Selection
from ascend_port.core.sources import decode_text
from ascend_port.formats.shell_lexer import Word
from ascend_port.formats.textedit import LineIndex, TextPort
from ascend_port.rules.project.configs import _load_yaml, _plain, port_yaml
from ascend_port.rules.project.dockerfile import BASE_MESSAGE, CUDA_BASE_IMAGE, CUDA_IMAGE
from ascend_port.rules.project.shell import ShellContext, port_argv, port_shell_code, rename_site

COMPOSE_NVIDIA_GPU = rule(
    "NPU631",
    "compose-nvidia-gpu",
    Confidence.LOW,
    "Docker Compose NVIDIA GPU access (`runtime: nvidia`, `deploy.resources.reservations.devices` with "
    "`driver: nvidia` or `capabilities: [gpu]`, `gpus:`, `NVIDIA_VISIBLE_DEVICES`): TODO naming the Ascend way.",
    """
    NVIDIA's container toolkit does not see NPUs. An Ascend container gets its NPUs as device files plus the host
    driver: `devices:` `/dev/davinci0` (one per NPU), `/dev/davinci_manager`, `/dev/devmm_svm`, `/dev/hisi_hdc`,
    and `volumes:` `/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro` (with `/usr/local/sbin/npu-smi` to run
    npu-smi inside); or, with Ascend Docker Runtime installed on the host, `runtime: ascend` and
    `ASCEND_VISIBLE_DEVICES=0,1`, which mounts them for you. Which NPUs and paths depends on the host, so the GPU
    settings are kept and get this TODO.

    Before:
        services:
          train:
            image: my-trainer
            runtime: nvidia
    After:
        services:
          train:
            image: my-trainer
            # TODO(ascend-port): NPU631 [low] runtime: nvidia is NVIDIA's container runtime; ...
            runtime: nvidia
    """,
    example_file="docker-compose.yml",
)

_MOUNTS = (
    "mount the NPUs instead: devices /dev/davinciN (one per NPU), /dev/davinci_manager, /dev/devmm_svm, "
    "/dev/hisi_hdc and the volume /usr/local/Ascend/driver:/usr/local/Ascend/driver:ro, or use Ascend Docker "
    "Runtime (runtime: ascend, ASCEND_VISIBLE_DEVICES)"
)
_NVIDIA_ENV = {
    "NVIDIA_VISIBLE_DEVICES": "NVIDIA_VISIBLE_DEVICES selects GPUs for NVIDIA's runtime; Ascend Docker Runtime reads "
    "ASCEND_VISIBLE_DEVICES (NPU IDs such as 0,1 or 0-3), else mount the NPU devices",
    "NVIDIA_DRIVER_CAPABILITIES": "NVIDIA_DRIVER_CAPABILITIES is read only by NVIDIA's runtime; drop it with the GPU "
    "settings",
    "NVIDIA_REQUIRE_CUDA": "NVIDIA_REQUIRE_CUDA is read only by NVIDIA's runtime; drop it with the GPU settings",
}
_PREFILTER = re.compile(r"(?i)nvidia|gpu|cuda|nccl|nvcr")


class _ComposePort:
    def __init__(self, text: str, selection: Selection) -> None:
        self.port = TextPort(text, selection)
        self.text = text
        self.lines = LineIndex(text)

    def key_offset(self, node: Any, key: Any) -> int:
        line, col = node.lc.key(key)
        return self.lines.starts[line] + col

    def todo(self, offset: int, message: str) -> None:
        self.port.todo(COMPOSE_NVIDIA_GPU, offset, message)

    def service(self, svc: Mapping) -> None:
        if not hasattr(svc, "lc"):
            return
        image = svc.get("image")
        if isinstance(image, str) and CUDA_IMAGE.match(image):
            self.port.todo(CUDA_BASE_IMAGE, self.key_offset(svc, "image"), BASE_MESSAGE.format(image=image))
        if svc.get("runtime") == "nvidia":
            self.todo(self.key_offset(svc, "runtime"), f"runtime: nvidia is NVIDIA's container runtime; {_MOUNTS}")
        if "gpus" in svc:
            self.todo(self.key_offset(svc, "gpus"), f"gpus: requests NVIDIA GPUs; {_MOUNTS}")
        self.reservations(svc)
        self.environment(svc.get("environment"))
        for key in ("command", "entrypoint"):
            if key in svc:
                self.command(svc, key)

    def command(self, svc: Any, key: str) -> None:
        """A ``command``/``entrypoint``: a string is split like a shell command line, a list is the argv itself;
        the flag and install rules of shell code apply (only to text written as it reads: no escapes)."""
        value = svc[key]
        ctx = ShellContext(todo_above=self.lines.line_start(self.key_offset(svc, key)))
        if isinstance(value, str) and "\n" not in value:
            line, col = svc.lc.value(key)
            offset = self.lines.starts[line] + col
            offset += 1 if self.text[offset : offset + 1] in ("'", '"') else 0
            if self.text.startswith(value, offset):
                ctx.base = offset
                port_shell_code(self.port, value, ctx)
        elif isinstance(value, list) and hasattr(value, "lc") and all(isinstance(v, str) for v in value):
            words = []
            for i, item in enumerate(value):
                line, col = value.lc.item(i)
                offset = self.lines.starts[line] + col
                offset += 1 if self.text[offset : offset + 1] in ("'", '"') else 0
                if not self.text.startswith(item, offset):
                    return  # escaped: left as it is
                words.append(Word(offset, offset + len(item), item))
            if words:
                ctx.base = words[0].start  # the code given to the shell rules: the list's text, not the file's
                code = self.text[ctx.base : words[-1].end]
                words = [Word(w.start - ctx.base, w.end - ctx.base, w.literal) for w in words]
                port_argv(self.port, code, words, ctx)

    def reservations(self, svc: Mapping) -> None:
        node: Any = svc
        for key in ("deploy", "resources", "reservations"):
            node = node.get(key) if isinstance(node, Mapping) else None
        devices = node.get("devices") if isinstance(node, Mapping) else None
        if not isinstance(devices, list):
            return
        for device in devices:
            if not isinstance(device, Mapping):
                continue
            capabilities = device.get("capabilities")
            gpu = isinstance(capabilities, list) and any(
                isinstance(c, str) and c.lower() == "gpu" for c in capabilities
            )
            if device.get("driver") == "nvidia" or gpu:
                self.todo(self.key_offset(node, "devices"), f"NVIDIA GPU reservation (driver: nvidia); {_MOUNTS}")
                return

    def environment(self, env: Any) -> None:
        if isinstance(env, Mapping) and hasattr(env, "lc"):
            for key in env:
                if isinstance(key, str):
                    self.variable(self.key_offset(env, key), key, self.value_site(env, key))
        elif isinstance(env, list) and hasattr(env, "lc"):
            for i, item in enumerate(env):
                if not isinstance(item, str) or not (m := re.match(r"([A-Za-z_][A-Za-z0-9_]*)(=?)", item)):
                    continue
                line, col = env.lc.item(i)
                offset = self.lines.starts[line] + col
                if not self.text.startswith(item, offset):
                    continue  # quoted: the name starts after the quote; such a list is edited by hand
                value = (offset + m.end(), item[m.end() :]) if m.group(2) else None
                self.variable(offset, m.group(1), value)

    def value_site(self, env: Any, key: str) -> tuple[int, str] | None:
        value = env[key]
        if not isinstance(value, str):
            return None
        line, col = env.lc.value(key)
        offset = self.lines.starts[line] + col
        return (offset, value) if self.text.startswith(value, offset) else None

    def variable(self, offset: int, name: str, value: tuple[int, str] | None) -> None:
        if name in _NVIDIA_ENV:
            self.todo(offset, _NVIDIA_ENV[name])
            return
        rename_site(self.port, offset, name, lambda r, at, message: self.port.todo(r, at, message), value)


def _without_edited(data: Any) -> Any:
    """The document with each service's environment, command and entrypoint reduced to their size (a command line
    to its type): what the renames of variables and the flag rewrites must keep."""
    data = _plain(data)
    services = data.get("services") if isinstance(data, dict) else None
    if isinstance(services, dict):
        for svc in services.values():
            for key in ("environment", "command", "entrypoint"):
                if isinstance(svc, dict) and isinstance(svc.get(key), (dict, list)):
                    svc[key] = len(svc[key])
                elif isinstance(svc, dict) and isinstance(svc.get(key), str):
                    svc[key] = "a command line"
    return data


def port_compose(text: str, selection: Selection) -> TextPort:
    documents = _load_yaml(text) if _PREFILTER.search(text) else []
    document = documents[0] if len(documents) == 1 else None
    if not isinstance(document, dict) or not isinstance(document.get("services"), dict):
        return port_yaml(text, selection)  # named like a compose file, but something else
    compose = _ComposePort(text, selection)
    for svc in document["services"].values():
        if isinstance(svc, dict):
            compose.service(svc)
    new_text = compose.port.result()
    if new_text is not None and _without_edited(_load_yaml(new_text)[0]) != _without_edited(document):
        raise PortError("internal error: the edited compose file would not hold the intended values; left unchanged")
    return compose.port


class ComposeHandler:
    def port(self, data: bytes, selection: Selection, options: PortOptions) -> Ported:
        source = decode_text(data)
        port = port_compose(source.text, selection)
        return Ported(source, port.result(), port.findings)
