"""Project configuration: ``[tool.ascend-port]`` in the target's ``pyproject.toml``.

The file is found by walking up from the first path given on the command line: the nearest ``pyproject.toml``
that has a ``[tool.ascend-port]`` table wins (one without it is passed over, as ruff does). Precedence, lowest
first: built-in defaults, the file, command-line flags (a flag replaces the file's value, it does not extend it).

    [tool.ascend-port]
    select = ["ALL"]              # rule IDs or prefixes (a comma-separated string works too)
    ignore = ["NPU104"]
    min-confidence = "medium"     # high, medium or low
    exclude = ["third_party/*"]   # globs relative to this file's folder (see run/discovery.AnchoredGlob)
    attention-backend = "torch_npu"   # or "mindiesd"
    branch = "npu-port"           # the branch `apply` creates
    other-devices = "keep"        # or "drop": see OTHER_DEVICES
    torch-npu = "2.5.1"           # the target release (a covered one, or the torch version it pairs with)

The target torch-npu release (``torch-npu``, ``--torch-npu``) decides what the rules may emit; when neither names
it, it is inferred from the project's own torch pin (run/target.py,
read by run/project_facts.py), else the newest release the tool knows.

Errors name the file, the table and the key (``pyproject.toml [tool.ascend-port] ignore: unknown rule 'NPU999'``);
a table whose name is a near miss of ``[tool.ascend-port]`` (``[tool.ascend_port]``) is an error, not silently
passed over.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ascend_port.core import npu_api
from ascend_port.core.catalogue import Confidence
from ascend_port.core.options import ATTENTION_BACKENDS, DEFAULT_ATTENTION_BACKEND, OTHER_DEVICES, PortOptions
from ascend_port.core.selection import Selection, parse_patterns, unknown_patterns
from ascend_port.rules.registry import all_rules
from ascend_port.run.discovery import AnchoredGlob, Exclude
from ascend_port.run.engine import RunConfig
from ascend_port.run.project_facts import facts as project_facts

TABLE = "ascend-port"
KEYS = ("select", "ignore", "min-confidence", "exclude", "attention-backend", "branch", "other-devices", "torch-npu")
SUBTABLES = ("verify",)  # [tool.ascend-port.verify]: the commands `verify` runs, read by verify/commands.py
TARGET_KEY = "torch-npu"
DEFAULT, FILE, COMMAND_LINE, INFERRED = "default", "pyproject.toml", "command line", "inferred"
# git/workflow.DEFAULT_BRANCH, spelled out: the git workflow imports GitPython (tests/test_config.py keeps them equal).
DEFAULT_BRANCH = "ascend-port/npu"


@dataclass(frozen=True)
class Flags:
    """The configuration keys a command line sets, each None where its flag is not given (the file's value, or the
    default, stands then). Field names are the KEYS with ``_`` for ``-``."""

    select: list[str] | None = None
    ignore: list[str] | None = None
    min_confidence: str | None = None
    exclude: list[str] | None = None
    attention_backend: str | None = None
    branch: str | None = None
    other_devices: str | None = None
    torch_npu: str | None = None

    def keys(self) -> dict[str, Any]:
        """The flags by configuration key (``min-confidence``), as resolve() takes them."""
        return {key: getattr(self, key.replace("-", "_")) for key in KEYS}


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
    passed: Path | None = None  # without one: the nearest pyproject.toml, which has no [tool.ascend-port] table
    origins: Mapping[str, str] = field(default_factory=lambda: {key: DEFAULT for key in KEYS})

    @property
    def target(self) -> str:
        """The covered torch-npu release the port targets."""
        return self.torch_npu or npu_api.newest_release()

    @property
    def selection(self) -> Selection:
        return Selection(select=self.select, ignore=self.ignore, min_confidence=self.min_confidence)

    def run_config(self, jobs: int = 0) -> RunConfig:
        return RunConfig(selection=self.selection, options=self.port_options, jobs=jobs, exclude=self.exclude_globs)

    @property
    def port_options(self) -> PortOptions:
        """What these settings decide for every file (the engine adds what it learns of the project)."""
        return PortOptions(
            other_devices="drop" if self.other_devices == "drop" else "keep",
            target=self.torch_npu,
            # (NPU602 pins the user's choice as given, not the torch pin's pair)
            target_explicit=bool(self.torch_npu) and self.origins.get(TARGET_KEY) in (FILE, COMMAND_LINE),
            attention_backend=self.attention_backend or DEFAULT_ATTENTION_BACKEND,
        )

    @property
    def exclude_globs(self) -> tuple[Exclude, ...]:
        """``exclude`` as discovery matches it: a pyproject.toml's globs relative to its folder (as ruff's are),
        --exclude's against the paths as given (relative to the current folder when they are)."""
        if self.origins.get("exclude") == FILE and self.source is not None:
            root = os.path.realpath(self.source.parent)
            return tuple(AnchoredGlob(pattern, root) for pattern in self.exclude)
        return self.exclude


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
        _near_miss(path, data)
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{TABLE}] must be a table")
    return table


def _near_miss(path: Path, data: dict[str, Any]) -> None:
    """A table spelt nearly like ``[tool.ascend-port]`` (``[tool.ascend_port]``, ``[tool.ascendport]``,
    ``[tool.ascend.port]``, ``[ascend-port]``) is a typo: the settings in it would silently do nothing."""
    tool = data.get("tool")
    tool = tool if isinstance(tool, dict) else {}
    names = {f"tool.{key}": key for key in tool}
    for key, value in tool.items():
        if isinstance(value, dict):  # [tool.ascend.port]: a dotted near miss
            names.update({f"tool.{key}.{sub}": f"{key}.{sub}" for sub in value})
    names.update({key: key for key in data if key != "tool"})  # [ascend-port]: tool. left out

    def normal(name: str) -> str:
        return name.lower().replace("_", "-").replace(".", "-").replace(" ", "")

    close = difflib.get_close_matches(TABLE, [normal(key) for key in names.values()], n=1, cutoff=0.8)
    for shown, key in names.items():
        if close and normal(key) == close[0]:
            raise ConfigError(f"{path}: [{shown}] is not read: did you mean [tool.{TABLE}]?")


def _pyprojects(start: Path) -> Iterator[Path]:
    """The pyproject.toml files at or above ``start``, nearest first."""
    here = start.resolve()
    if not here.is_dir():
        here = here.parent
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            yield folder / "pyproject.toml"


def nearest_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start``, table or not."""
    return next(_pyprojects(start), None)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a ``[tool.ascend-port]`` table at or above ``start``."""
    return next((candidate for candidate in _pyprojects(start) if _table(candidate) is not None), None)


def _at(where: str, key: str) -> str:
    """Where a value was given, for an error: ``/p/pyproject.toml [tool.ascend-port] ignore`` or ``--ignore``."""
    return f"--{key}" if where == COMMAND_LINE else f"{where} {key}"


def _patterns(where: str, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{_at(where, key)}: must be a string or a list of strings, not {value!r}")
    return tuple(value)


def _value(where: str, key: str, value: Any) -> Any:
    """One validated value, as the Settings field holds it."""
    if key in ("select", "ignore"):
        return parse_patterns(_patterns(where, key, value))
    if key == "exclude":
        return _patterns(where, key, value)
    at = _at(where, key)
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{at}: must be a non-empty string, not {value!r}")
    choices = {"other-devices": OTHER_DEVICES, "attention-backend": ATTENTION_BACKENDS}.get(key)
    if choices is not None and value not in choices:
        raise ConfigError(f"{at}: {value!r} is not one of {', '.join(choices)}")
    try:
        if key == "min-confidence":
            return Confidence.parse(value)
        if key == "torch-npu":
            return npu_api.covered_release(value)
    except ValueError as error:
        raise ConfigError(f"{at}: {error}") from None
    return value


def _values(where: str, raw: Mapping[str, Any]) -> dict[str, Any]:
    """Validated settings (dataclass field names) from a table or from flags; None values are absent."""
    for key in sorted(set(raw) - set(KEYS) - set(SUBTABLES)):
        close = difflib.get_close_matches(key.replace("_", "-").lower(), KEYS, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(KEYS)}"
        raise ConfigError(f"{where}: unknown key {key!r} ({hint})")
    out = {
        key.replace("-", "_"): _value(where, key, value)
        for key, value in raw.items()
        if value is not None and key not in SUBTABLES
    }
    if "select" in out and not out["select"]:
        raise ConfigError(f'{_at(where, "select")}: empty (use "ALL" for every rule)')
    return out


def _check_rules(settings: Settings, where: str) -> None:
    """Each select/ignore pattern names a rule or a prefix of one: a typo must never silently select nothing."""
    known = [rule.id for rule in all_rules()]
    for key in ("select", "ignore"):
        for pattern in unknown_patterns(getattr(settings, key), known):
            at = _at(COMMAND_LINE if settings.origins[key] == COMMAND_LINE else where, key)
            raise ConfigError(f"{at}: unknown rule {pattern!r} (matches no rule ID: see `ascend-port rules`)")


def resolve(paths: list[Path], flags: Mapping[str, Any] | None = None, *, read_file: bool = True) -> Settings:
    """Defaults, then the nearest ``[tool.ascend-port]`` above ``paths[0]``, then ``flags`` (keys as in the file,
    ``None`` meaning "not given")."""
    settings = Settings()
    origins = dict(settings.origins)
    source = find_pyproject(paths[0]) if read_file and paths else None
    where = f"{source} [tool.{TABLE}]"
    layers: list[tuple[str, dict[str, Any]]] = []
    if source is not None:
        layers.append((FILE, _values(where, _table(source) or {})))
    layers.append((COMMAND_LINE, _values(COMMAND_LINE, flags or {})))
    for origin, values in layers:
        settings = replace(settings, **values)
        origins.update({name.replace("_", "-"): origin for name in values})
    passed = nearest_pyproject(paths[0]) if read_file and paths and source is None else None
    settings = replace(settings, source=source, passed=passed, origins=origins)
    if settings.torch_npu is None and read_file and (inferred := project_facts(paths).torch_pin) is not None:
        origins[TARGET_KEY] = INFERRED
        settings = replace(settings, torch_npu=inferred.version, target_from=inferred.where, origins=origins)
    _check_rules(settings, where)
    return settings


def origin_name(settings: Settings, origin: str) -> str:
    """How ``config`` shows where a value comes from: the file's path, the pin a target was inferred from."""
    shown = {FILE: str(settings.source), INFERRED: f"inferred from {settings.target_from}"}
    return shown.get(origin, origin)


def defaults() -> dict[str, Any]:
    """What each key is when neither the file nor a flag sets it, as ``render`` prints it."""
    return {
        "select": ["ALL"],
        "ignore": [],
        "min-confidence": Confidence.LOW.label,
        "exclude": [],
        "attention-backend": DEFAULT_ATTENTION_BACKEND,  # (the attention rules' default: their first backend)
        "branch": DEFAULT_BRANCH,
        "other-devices": OTHER_DEVICES[0],
        "torch-npu": npu_api.newest_release(),
    }


def render(settings: Settings) -> str:
    """The effective configuration as a ``[tool.ascend-port]`` table, each value with where it comes from: valid
    TOML that, pasted into a pyproject.toml, gives the same configuration (a default then set explicitly)."""
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
    fallback = defaults()
    if settings.source is not None:
        read = str(settings.source)
    elif settings.passed is not None:
        read = f"none ({settings.passed} has no [tool.{TABLE}] table)"
    else:
        read = "none found"
    lines = [f"# effective configuration; file: {read}", f"[tool.{TABLE}]"]
    for key in KEYS:
        origin = origin_name(settings, settings.origins[key])
        if values[key] is None:
            values[key], origin = fallback[key], DEFAULT
            if key == TARGET_KEY:
                origin = f"{DEFAULT}: the newest release ascend-port knows"
        if key == "exclude" and values[key] and settings.origins[key] == FILE:
            origin += " (globs relative to its folder)"
        lines.append(f"{key} = {json.dumps(values[key])}  # {origin}")
    return "\n".join(lines) + "\n"
