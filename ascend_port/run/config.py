"""Project configuration: ``[tool.ascend-port]`` in the target's ``pyproject.toml``.

The file is found by walking up from the first path given on the command line: the nearest ``pyproject.toml``
that has a ``[tool.ascend-port]`` table wins (one without it is passed over, as ruff does). Precedence, lowest
first: built-in defaults, the file, command-line flags (a flag replaces the file's value, it does not extend it).

    [tool.ascend-port]
    select = ["ALL"]              # rule IDs or prefixes (a comma-separated string works too)
    ignore = ["NPU104"]
    min-confidence = "medium"     # high, medium or low
    exclude = ["third_party/*"]   # globs, matched like --exclude
    attention-backend = "torch_npu"   # or "mindiesd"
    branch = "npu-port"           # the branch `apply` creates
    other-devices = "keep"        # or "drop": see OTHER_DEVICES
    torch-npu = "2.5.1"           # the target release (a covered one, or the torch version it pairs with)

The target torch-npu release (``torch-npu``, ``--torch-npu``) decides what the rules may emit; when neither names
it, it is inferred from the project's own torch pin (run/target.py,
read by run/project_facts.py), else the newest release the tool knows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence
from ascend_port.core.selection import Selection, parse_patterns
from ascend_port.python.device_model import NPU_AWARE_OPTION
from ascend_port.rules.project.requirements import EXPLICIT_TARGET_OPTION
from ascend_port.rules.registry import all_rules
from ascend_port.run.engine import RunConfig
from ascend_port.run.project_facts import facts as project_facts

TABLE = "ascend-port"
KEYS = ("select", "ignore", "min-confidence", "exclude", "attention-backend", "branch", "other-devices", "torch-npu")
# keep: a project that also runs on other devices (python/device_model.supports_npu) gets its CUDA code reported, not
# rewritten; drop: rewritten in place all the same (the port is an NPU-only fork). Other vendors' code is never edited.
OTHER_DEVICES = ("keep", "drop")
TARGET_KEY = "torch-npu"
DEFAULT, FILE, COMMAND_LINE, INFERRED = "default", "pyproject.toml", "command line", "inferred"


class ConfigError(ValueError):
    """The configuration is invalid; the message names the file (or flag) and the reason."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    min_confidence: Confidence = Confidence.LOW
    exclude: tuple[str, ...] = ()
    attention_backend: str | None = None  # None: the attention rules' own default
    branch: str | None = None  # None: the git workflow's default
    other_devices: str | None = None  # None: keep
    torch_npu: str | None = None  # the target: a covered release (None: the newest, npu_api.newest_release())
    target_from: str = ""  # with the INFERRED origin: the pin it came from ("requirements.txt (torch==2.1.0)")
    source: Path | None = None  # the pyproject.toml read, if any
    origins: Mapping[str, str] = field(default_factory=lambda: {key: DEFAULT for key in KEYS})

    @property
    def target(self) -> str:
        """The covered torch-npu release the port targets."""
        return self.torch_npu or npu_api.newest_release()

    @property
    def selection(self) -> Selection:
        return Selection(select=self.select, ignore=self.ignore, min_confidence=self.min_confidence)

    def run_config(self, jobs: int = 0) -> RunConfig:
        options = {"attention_backend": self.attention_backend} if self.attention_backend else {}
        if self.other_devices == "drop":
            options[NPU_AWARE_OPTION] = "0"  # (the engine then does not look for the project's own NPU support)
        if self.torch_npu:  # (a port option: part of every file's cache key)
            options[npu_api.TARGET_OPTION] = self.torch_npu
            if self.origins.get(TARGET_KEY) in (FILE, COMMAND_LINE):
                options[EXPLICIT_TARGET_OPTION] = "1"  # (NPU602 pins the user's choice, not the torch pin's pair)
        return RunConfig(selection=self.selection, options=options, jobs=jobs, exclude=self.exclude)


def _table(path: Path) -> dict[str, Any] | None:
    """The ``[tool.ascend-port]`` table of a pyproject.toml, or None when it has none."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        data = tomlkit.parse(path.read_text("utf-8")).unwrap()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except (TOMLKitError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    tool = data.get("tool")
    table = tool.get(TABLE) if isinstance(tool, dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{TABLE}] must be a table")
    return table


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a ``[tool.ascend-port]`` table at or above ``start``."""
    here = start.resolve()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and _table(candidate) is not None:
            return candidate
    return None


def _attention_backends() -> tuple[str, ...]:
    from ascend_port.rules.attention.helpers import BACKENDS  # the attention rules' own list

    return BACKENDS


def _patterns(where: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key} must be a string or a list of strings")
    return tuple(value)


def _values(where: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Validated settings (dataclass field names) from a table or from flags; None values are absent."""
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if value is None:
            continue
        name = key.replace("-", "_")
        if key in ("select", "ignore"):
            out[name] = parse_patterns(_patterns(where, key, value))
        elif key == "exclude":
            out[name] = _patterns(where, key, value)
        elif not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}: {key} must be a non-empty string")
        elif key == "min-confidence":
            try:
                out[name] = Confidence.parse(value)
            except ValueError as error:
                raise ConfigError(f"{where}: {error}") from None
        elif key == "other-devices" and value not in OTHER_DEVICES:
            raise ConfigError(f"{where}: other-devices {value!r} is not one of {', '.join(OTHER_DEVICES)}")
        elif key == "attention-backend" and value not in _attention_backends():
            raise ConfigError(f"{where}: attention-backend {value!r} is not one of {', '.join(_attention_backends())}")
        elif key == "torch-npu":
            try:
                out[name] = npu_api.covered_release(value)
            except ValueError as error:
                raise ConfigError(f"{where}: torch-npu: {error}") from None
        else:
            out[name] = value
    if "select" in out and not out["select"]:
        raise ConfigError(f'{where}: select is empty (use "ALL" for every rule)')
    return out


def resolve(paths: list[Path], flags: Mapping[str, Any] | None = None, *, read_file: bool = True) -> Settings:
    """Defaults, then the nearest ``[tool.ascend-port]`` above ``paths[0]``, then ``flags`` (keys as in the file,
    ``None`` meaning "not given")."""
    settings = Settings()
    origins = dict(settings.origins)
    source = find_pyproject(paths[0]) if read_file and paths else None
    layers: list[tuple[str, dict[str, Any]]] = []
    if source is not None:
        layers.append((FILE, _values(f"{source} [tool.{TABLE}]", _table(source) or {})))
    layers.append((COMMAND_LINE, _values("command line", flags or {})))
    for origin, values in layers:
        settings = replace(settings, **values)
        origins.update({name.replace("_", "-"): origin for name in values})
    settings = replace(settings, source=source, origins=origins)
    if settings.torch_npu is None and read_file and (inferred := project_facts(paths).torch_pin) is not None:
        origins[TARGET_KEY] = INFERRED
        settings = replace(settings, torch_npu=inferred.version, target_from=inferred.where, origins=origins)
    try:
        settings.selection.validate(r.id for r in all_rules())
    except ValueError as error:
        where = str(source) if source and COMMAND_LINE not in (origins["select"], origins["ignore"]) else "command line"
        raise ConfigError(f"{where}: {error}") from None
    return settings


def origin_name(settings: Settings, origin: str) -> str:
    """How ``config`` shows where a value comes from: the file's path, the pin a target was inferred from."""
    shown = {FILE: str(settings.source), INFERRED: f"inferred from {settings.target_from}"}
    return shown.get(origin, origin)


def render(settings: Settings) -> str:
    """The effective configuration as a ``[tool.ascend-port]`` table, each value with where it comes from."""
    values: dict[str, Any] = {
        "select": list(settings.select),
        "ignore": list(settings.ignore),
        "min-confidence": settings.min_confidence.label,
        "exclude": list(settings.exclude),
        "attention-backend": settings.attention_backend,
        "branch": settings.branch,
        "other-devices": settings.other_devices,
        "torch-npu": settings.torch_npu,
    }
    lines = [f"# effective configuration; file: {settings.source or 'none found'}", f"[tool.{TABLE}]"]
    for key in KEYS:
        origin = origin_name(settings, settings.origins[key])
        if key == TARGET_KEY and values[key] is None:
            lines.append(f"{key} = {json.dumps(settings.target)}  # default: the newest release ascend-port knows")
        elif values[key] is None:
            lines.append(f"# {key} is not set ({origin}: the command's own default)")
        else:
            lines.append(f"{key} = {json.dumps(values[key])}  # {origin}")
    return "\n".join(lines) + "\n"
