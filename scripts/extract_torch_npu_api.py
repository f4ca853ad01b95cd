"""Extract the public API of torch_npu into ascend_port/data/torch_npu_api.json.

We read the published wheel instead of installing it: installing torch-npu
pulls in (or replaces) a specific torch build and its import needs the Ascend
CANN runtime, which breaks ``import torch`` on machines without NPUs. A wheel
is just a zip, so we open it with ``zipfile`` and parse the Python sources with
``ast``; nothing from torch_npu is ever imported or executed. The output is
deterministic: the same wheel always gives the same JSON.

With ``--releases`` it reads one wheel per torch release instead (the newest torch-npu release, post releases
included, built for each torch version: 2.1.0.post17 for torch 2.1.0, ..., 2.9.0.post9 and 2.9.1, ...) and writes
ascend_port/data/torch_npu_releases.json: the releases covered and the torch each requires (Requires-Dist of the
wheel's METADATA, as written), which public names each release has (a name maps to the ranges of release indexes that
have it, ``[first, last]``, or ``[first, last, first, last, ...]`` where a name went away and came back), the op
signatures of the op docs where they changed, the schemas the wheel registers (string literals of
``torch_npu/lib/libtorch_npu.so``: every op torch_npu exposes, documented or not, with what a call binds to), and
every torch-npu version on PyPI with the torch it requires (read from the wheel's METADATA through HTTP range
requests, so those wheels are not downloaded whole). Wheels are
downloaded with ``pip download --no-deps``, never installed, and deleted after reading (unless ``--wheels DIR``
keeps them for the next run, which then reuses the ones whose sha256 matches the index).

Usage:
    python scripts/extract_torch_npu_api.py                   # download 2.14.0
    python scripts/extract_torch_npu_api.py --version 2.14.0
    python scripts/extract_torch_npu_api.py --wheel /tmp/torch_npu-....whl
    python scripts/extract_torch_npu_api.py --releases [--wheels .cache/torch_npu_wheels]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import struct
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

DEFAULT_VERSION = "2.14.0"
DEFAULT_OUTPUT = Path(__file__).resolve().parents[1] / "ascend_port" / "data" / "torch_npu_api.json"
RELEASES_OUTPUT = DEFAULT_OUTPUT.with_name("torch_npu_releases.json")
NPU = "torch_npu/npu/"
PACKAGE = "torch-npu"
SIMPLE_INDEX = "https://pypi.org/simple/torch-npu/"
# pip's --python-version for a wheel's python tag: the first tag we try when a release has several.
PREFERRED_PYTHON = "cp311"


def download_wheel(version: str, dest: Path) -> Path:
    """Download the cp311 manylinux x86_64 wheel of torch-npu (without dependencies)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            "3.11",
            "--platform",
            "manylinux_2_28_x86_64",
            f"torch-npu=={version}",
            "-d",
            str(dest),
        ],
        check=True,
    )
    wheels = sorted(dest.glob("torch_npu-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"expected one wheel in {dest}, found {[w.name for w in wheels]}")
    return wheels[0]


def string_list(node: ast.expr) -> list[str] | None:
    """The strings of a literal list/tuple (or a sum of them), else None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = string_list(node.left), string_list(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts]  # type: ignore[attr-defined]
    return None


def dunder_all(tree: ast.Module) -> list[str] | None:
    """``__all__`` of a module: ``=``, ``+=``, ``.extend(...)`` and ``.append(...)`` forms."""
    names: list[str] | None = None
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value:
                names = string_list(node.value) or []
        elif (
            isinstance(node, ast.AugAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "__all__"
            and isinstance(node.op, ast.Add)
        ):
            names = (names or []) + (string_list(node.value) or [])
        elif (
            isinstance(node, ast.Expr)
            and isinstance(call := node.value, ast.Call)
            and isinstance(func := call.func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "__all__"
            and call.args
        ):
            if func.attr == "extend":
                names = (names or []) + (string_list(call.args[0]) or [])
            elif func.attr == "append" and isinstance(arg := call.args[0], ast.Constant) and isinstance(arg.value, str):
                names = (names or []) + [arg.value]
    return names


def top_level_names(tree: ast.Module) -> list[str]:
    """Public functions, classes and assigned names defined at module level."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return sorted(n for n in names if not n.startswith("_"))


def public_api(tree: ast.Module) -> list[str]:
    """``__all__`` if the module defines one, otherwise its public top-level names."""
    names = dunder_all(tree)
    return sorted(set(names)) if names is not None else top_level_names(tree)


def npu_submodules(wheel: zipfile.ZipFile) -> dict[str, str]:
    """Public modules and subpackages directly under torch_npu/npu/, name -> source path."""
    found: dict[str, str] = {}
    for path in wheel.namelist():
        rest = path[len(NPU) :] if path.startswith(NPU) else ""
        parts = rest.split("/")
        if len(parts) == 1 and rest.endswith(".py"):
            name = rest[:-3]
        elif len(parts) == 2 and parts[1] == "__init__.py":
            name = parts[0]
        else:
            continue
        if name and not name.startswith("_"):
            found[name] = path
    return dict(sorted(found.items()))


def documented_ops(tree: ast.Module) -> list[str]:
    """First string argument of every ``_add_torch_npu_docstr("name", ...)`` call."""
    return sorted(
        {
            node.args[0].value
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "_add_torch_npu_docstr"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        }
    )


# The operator schemas torch_npu registers (``m.def("npu_rms_norm(Tensor self, ...) -> (Tensor, Tensor)")`` in
# op-plugin's generated registration): string literals of libtorch_npu.so. These, not the op docs, are what
# torch_npu exposes: at import it sets ``torch_npu.<name> = torch.ops.npu.<name>`` for every op of the npu namespace,
# documented or not, and torch's argument parser binds a call to the registered schema (keywords, defaults).
LIBRARY = "torch_npu/lib/libtorch_npu.so"
_SCHEMA = re.compile(rb"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)?\(.*\) -> .+$")
_PRINTABLE = re.compile(rb"[\x20-\x7e]{8,}")
# Schemas of other namespaces compiled into the same library (c10d's wrappers of torch_npu's collectives).
_OTHER_NAMESPACES = ("wrap_",)


def registered_schemas(wheel: zipfile.ZipFile) -> dict[str, str]:
    """The public ops of the npu namespace (overloads dropped) and the schema of their default overload."""
    if LIBRARY not in wheel.namelist():
        return {}
    data = wheel.read(LIBRARY)
    schemas: dict[str, str] = {}
    for text in _PRINTABLE.findall(data):
        if not _SCHEMA.match(text):
            continue
        schema = text.decode("ascii")
        name, _, rest = schema.partition("(")
        base, _, overload = name.partition(".")
        if base.startswith(("_", *_OTHER_NAMESPACES)):
            continue
        if not overload:
            schemas[base] = f"{base}({rest}"
        else:
            schemas.setdefault(base, "")  # only an overload: the op exists, its default schema is unknown
    return dict(sorted(schemas.items()))


def extract(wheel_path: Path) -> dict[str, object]:
    with zipfile.ZipFile(wheel_path) as wheel:

        def parse(path: str) -> ast.Module:
            return ast.parse(wheel.read(path).decode("utf-8"), filename=path)

        distributed = parse("torch_npu/distributed/__init__.py")
        if "is_hccl_available" not in ast.unparse(distributed):
            print("warning: torch_npu/distributed/__init__.py does not mention is_hccl_available", file=sys.stderr)
        return {
            "schema": 1,
            "torch_npu_version": wheel_path.name.split("-")[1],
            "source": wheel_path.name,
            "sha256": hashlib.sha256(wheel_path.read_bytes()).hexdigest(),
            "npu": sorted(set(dunder_all(parse(NPU + "__init__.py")) or [])),
            "npu_submodules": {name: public_api(parse(path)) for name, path in npu_submodules(wheel).items()},
            "optim": public_api(parse("torch_npu/optim/__init__.py")),
            "profiler": public_api(parse("torch_npu/profiler/__init__.py")),
            # documented ops and every op torch_npu registers (exposed as torch_npu.<name>, documented or not)
            "ops": sorted(set(documented_ops(parse("torch_npu/_op_plugin_docs.py"))) | set(registered_schemas(wheel))),
            "distributed": public_api(distributed),
        }


# --- one wheel per torch release -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WheelFile:
    filename: str
    url: str
    sha256: str

    @property
    def version(self) -> str:
        return self.filename.split("-")[1]

    @property
    def python(self) -> str:
        return self.filename.split("-")[2]

    @property
    def platform(self) -> str:
        return self.filename.removesuffix(".whl").split("-")[4]

    @property
    def machine(self) -> str:
        return "x86_64" if self.platform.endswith("x86_64") else "aarch64" if "aarch64" in self.platform else "other"


def python_key(tag: str) -> tuple[int, int]:
    """``cp311`` -> (3, 11), for ordering python tags."""
    digits = tag.removeprefix("cp")
    return (int(digits[0]), int(digits[1:] or 0)) if digits.isdigit() else (0, 0)


def index_files() -> list[WheelFile]:
    """Every non-yanked wheel of torch-npu on PyPI, from the JSON form of the simple index (PEP 691)."""
    request = urllib.request.Request(SIMPLE_INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        raw = json.load(response)
    return sorted(
        (
            WheelFile(f["filename"], f["url"], f["hashes"].get("sha256", ""))
            for f in raw["files"]
            if f["filename"].endswith(".whl") and not f.get("yanked")
        ),
        key=lambda w: w.filename,
    )


def pip_index_files() -> list[WheelFile]:
    """Fallback when the JSON index is unreachable: the versions ``pip index versions`` lists for each python.

    pip lists only the versions with a wheel for the python and platform asked, so we ask for each; the wheel
    files are then unknown (no URL, no hash), one stand-in per version and python, and the published table lacks
    the torch requirement of the versions not downloaded.
    """
    files: list[WheelFile] = []
    for minor in range(8, 15):
        for platform in ("manylinux2014_x86_64", "manylinux_2_28_x86_64"):
            out = subprocess.run(
                [sys.executable, "-m", "pip", "index", "versions", PACKAGE, "--python-version", f"3.{minor}"]
                + ["--platform", platform, "--only-binary=:all:"],
                capture_output=True,
                text=True,
            ).stdout
            listed = re.search(r"Available versions: (.*)", out)
            for version in listed.group(1).split(", ") if listed else []:
                files.append(WheelFile(f"torch_npu-{version}-cp3{minor}-cp3{minor}-{platform}.whl", "", ""))
    return sorted(set(files), key=lambda w: w.filename)


def by_version(files: Iterable[WheelFile]) -> dict[str, list[WheelFile]]:
    versions: dict[str, list[WheelFile]] = {}
    for wheel in files:
        versions.setdefault(wheel.version, []).append(wheel)
    return dict(sorted(versions.items(), key=lambda item: Version(item[0])))


def pick_wheel(files: list[WheelFile]) -> WheelFile | None:
    """The manylinux x86_64 wheel to read: cp311 when the release has one, else its newest python."""
    x86 = [w for w in files if w.machine == "x86_64"]
    if not x86:
        return None
    return max(x86, key=lambda w: (w.python == PREFERRED_PYTHON, python_key(w.python), w.filename))


def choose_releases(versions: dict[str, list[WheelFile]]) -> tuple[list[str], dict[str, str]]:
    """The newest final release (post releases included) for each torch version, and why the others are skipped."""
    skipped: dict[str, str] = {}
    newest: dict[str, str] = {}
    for version, files in versions.items():
        parsed = Version(version)
        if parsed.is_prerelease or parsed.is_devrelease:
            skipped[version] = "pre-release"
        elif pick_wheel(files) is None:
            skipped[version] = "no manylinux x86_64 wheel"
        else:
            base = parsed.base_version
            if base in newest:
                skipped[newest[base]] = f"superseded by {version} (same torch {base})"
            newest[base] = version
    return sorted(newest.values(), key=Version), skipped


def download(wheel: WheelFile, dest: Path) -> Path:
    """``pip download --no-deps`` of exactly this wheel (its python and platform tags), checked against the index."""
    target = dest / wheel.filename
    if target.exists() and wheel.sha256 and sha256_of(target) == wheel.sha256:
        return target
    python = python_key(wheel.python)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet"]
        + ["--python-version", f"{python[0]}.{python[1]}", "--platform", wheel.platform.split(".")[0]]
        + [f"{PACKAGE}=={wheel.version}", "-d", str(dest)],
        check=True,
    )
    if not target.exists():  # the pip fallback index has no file names: take what pip chose
        found = sorted(dest.glob(f"torch_npu-{wheel.version}-*.whl"))
        if len(found) != 1:
            sys.exit(f"pip download of {wheel.version} gave {[w.name for w in found]}")
        target = found[0]
    if wheel.sha256 and sha256_of(target) != wheel.sha256:
        sys.exit(f"{target.name}: sha256 differs from the index's")
    return target


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def torch_requirement(metadata: str) -> str | None:
    """The specifier of ``Requires-Dist: torch...`` as written (``==2.5.1``, ``==2.1.0+cpu``), markers kept."""
    for line in metadata.splitlines():
        if line.startswith("Requires-Dist:"):
            requirement = line.split(":", 1)[1].strip()
            name = re.match(r"[A-Za-z0-9_.-]+", requirement)
            if name and name.group(0).lower() == "torch":
                rest = requirement[name.end() :].strip()
                specifier, _, marker = rest.partition(";")
                specifier = specifier.strip().removeprefix("(").removesuffix(")").replace(" ", "")
                return specifier + (f"; {marker.strip()}" if marker.strip() else "")
    return None


def wheel_metadata(wheel: zipfile.ZipFile) -> str:
    names = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1]
    return wheel.read(names[0]).decode("utf-8") if names else ""


def http_range(url: str, first: int | None, last: int | None = None) -> bytes:
    """Bytes ``first..last`` of a file over HTTP; ``first=None, last=n``: its last n bytes."""
    spec = f"bytes=-{last}" if first is None else f"bytes={first}-{'' if last is None else last}"
    request = urllib.request.Request(url, headers={"Range": spec})
    with urllib.request.urlopen(request, timeout=60) as response:
        if response.status != 206:
            raise OSError(f"{url}: no range support (HTTP {response.status})")
        return response.read()


def remote_metadata(url: str) -> str:
    """The METADATA of a remote wheel, read through its zip central directory with a few range requests."""
    tail = http_range(url, None, 65536)
    end = tail.rfind(b"PK\x05\x06")
    if end < 0:
        raise OSError(f"{url}: no end of central directory in the last 64 KiB")
    size, offset = struct.unpack("<II", tail[end + 12 : end + 20])
    directory = http_range(url, offset, offset + size - 1)
    at = 0
    while directory[at : at + 4] == b"PK\x01\x02":
        method, _, _, _, compressed, _, name_len, extra_len, comment_len = struct.unpack(
            "<HHHIIIHHH", directory[at + 10 : at + 34]
        )
        local = struct.unpack("<I", directory[at + 42 : at + 46])[0]
        name = directory[at + 46 : at + 46 + name_len].decode("utf-8")
        at += 46 + name_len + extra_len + comment_len
        if name.endswith(".dist-info/METADATA") and name.count("/") == 1:
            header = http_range(url, local, local + 29)
            skip = 30 + sum(struct.unpack("<HH", header[26:30]))
            data = http_range(url, local + skip, local + skip + compressed - 1)
            return (zlib.decompress(data, -15) if method == 8 else data).decode("utf-8")
    raise OSError(f"{url}: no .dist-info/METADATA")


def doc_signature(name: str, doc: str) -> str | None:
    """The prototype ``name(...) -> ...`` an op's doc gives, whitespace normalised; None if it gives none.

    A line with ``->`` after the closing parenthesis is a prototype; without one, the first call written before the
    doc's example section is taken (the examples call the op with variables, not types).
    """
    found: list[tuple[bool, int, str]] = []
    pattern = r"(?<![\w.])(?:torch_npu\.(?:npu\.)?|custom\.|torch\.ops\.npu\.)" + re.escape(name) + r"\("
    for match in re.finditer(pattern, doc):
        depth, close = 0, None
        for i in range(match.end() - 1, len(doc)):
            depth += {"(": 1, ")": -1}.get(doc[i], 0)
            if depth == 0:
                close = i
                break
        if close is None:
            continue
        returns = re.match(r"[ \t]*->[ \t]*([^\n]*)", doc[close + 1 :])
        text = name + doc[match.end() - 1 : close + 1] + (f" -> {returns.group(1)}" if returns else "")
        text = re.sub(r"\s*,\s*", ", ", re.sub(r"\s+", " ", text)).strip()
        found.append((returns is not None, match.start(), re.sub(r"\s+\)", ")", re.sub(r"\(\s+", "(", text))))
    if not found:
        return None
    with_returns = [f for f in found if f[0]]
    if with_returns:
        return with_returns[0][2]
    example = min((i for i in (doc.find("示例"), doc.find("Example")) if i >= 0), default=len(doc))
    return found[0][2] if found[0][1] < example else None


def op_signatures(tree: ast.Module) -> dict[str, str | None]:
    """Each documented op's signature (the first doc of the op that gives one)."""
    signatures: dict[str, str | None] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "_add_torch_npu_docstr"
            and len(node.args) >= 2
            and isinstance(name := node.args[0], ast.Constant)
            and isinstance(name.value, str)
        ):
            doc = node.args[1].value if isinstance(node.args[1], ast.Constant) else ""
            signature = doc_signature(name.value, doc) if isinstance(doc, str) else None
            if signatures.get(name.value) is None:
                signatures[name.value] = signature
    return signatures


@dataclass
class Inventory:
    """What one wheel offers: names per kind (the kinds of torch_npu_releases.json) and op signatures."""

    version: str
    wheel: str
    sha256: str
    torch: str | None
    names: dict[str, set[str]] = field(default_factory=dict)
    signatures: dict[str, str | None] = field(default_factory=dict)
    schemas: dict[str, str] = field(default_factory=dict)


def class_members(tree: ast.Module, public: Iterable[str]) -> dict[str, set[str]]:
    """Public methods and class attributes of the public classes a module defines, by class name."""
    wanted = set(public)
    members: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in wanted:
            found = members.setdefault(node.name, set())
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found.add(item.name)
                elif isinstance(item, (ast.Assign, ast.AnnAssign)):
                    targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                    found.update(t.id for t in targets if isinstance(t, ast.Name))
            members[node.name] = {m for m in found if not m.startswith("_")}
    return members


def inventory(wheel_path: Path) -> Inventory:
    """The same names as extract(), by kind, plus torch_npu's own ``__all__``, op signatures and the torch pin."""
    api = extract(wheel_path)
    submodules: dict[str, list[str]] = api["npu_submodules"]  # type: ignore[assignment]
    with zipfile.ZipFile(wheel_path) as wheel:

        def parse(path: str) -> ast.Module:
            return ast.parse(wheel.read(path).decode("utf-8"), filename=path)

        metadata = wheel_metadata(wheel)
        schemas = {op: schema for op, schema in registered_schemas(wheel).items() if schema}
        top = parse("torch_npu/__init__.py")
        docs = parse("torch_npu/_op_plugin_docs.py")
        # kind "npu.mstx:mstx": the members of class mstx of torch_npu/npu/mstx.py (torch.npu.mstx.range_push)
        classes = {
            f"npu:{cls}": found
            for cls, found in class_members(parse(NPU + "__init__.py"), api["npu"]).items()  # type: ignore[arg-type]
        }
        for sub, path in npu_submodules(wheel).items():
            classes.update(
                (f"npu.{sub}:{cls}", found) for cls, found in class_members(parse(path), submodules[sub]).items()
            )
    names: dict[str, set[str]] = {
        kind: set(api[kind])  # type: ignore[call-overload]
        for kind in ("npu", "ops", "optim", "profiler", "distributed")
    }
    names["npu_submodules"] = set(submodules)
    names.update({f"npu.{sub}": set(public) for sub, public in submodules.items()})
    names["torch_npu"] = set(dunder_all(top) or [])
    names.update(classes)
    return Inventory(
        version=str(api["torch_npu_version"]),
        wheel=wheel_path.name,
        sha256=str(api["sha256"]),
        torch=torch_requirement(metadata),
        names=names,
        signatures={op: sig for op, sig in op_signatures(docs).items() if op in names["ops"]},
        schemas=schemas,
    )


def ranges(indexes: list[int]) -> list[int]:
    """Sorted release indexes as flat ``[first, last, first, last, ...]`` runs."""
    runs: list[int] = []
    for i in indexes:
        if runs and runs[-1] == i - 1:
            runs[-1] = i
        else:
            runs += [i, i]
    return runs


def compact(inventories: list[Inventory], published: list[dict[str, object]], python: dict[str, list[str]]):
    names: dict[str, dict[str, list[int]]] = {}
    for index, inv in enumerate(inventories):
        for kind, members in inv.names.items():
            for name in members:
                names.setdefault(kind, {}).setdefault(name, []).append(index)
    signatures: dict[str, dict[str, list[int]]] = {}
    for index, inv in enumerate(inventories):
        for op, signature in inv.signatures.items():
            if signature and not op.startswith("_"):
                signatures.setdefault(op, {}).setdefault(signature, []).append(index)
    schemas: dict[str, dict[str, list[int]]] = {}
    for index, inv in enumerate(inventories):
        for op, schema in inv.schemas.items():
            schemas.setdefault(op, {}).setdefault(schema, []).append(index)
    return {
        "schema": 1,
        "source": "PyPI torch-npu manylinux x86_64 wheels, read by scripts/extract_torch_npu_api.py --releases",
        "releases": [
            {
                "version": inv.version,
                "torch": inv.torch,
                "python": python[inv.version],
                "wheel": inv.wheel,
                "sha256": inv.sha256,
            }
            for inv in inventories
        ],
        "names": {
            kind: {name: ranges(indexes) for name, indexes in sorted(members.items())}
            for kind, members in sorted(names.items())
        },
        # public op -> [[signature, first, last, ...], ...]: each signature its docs gave, with the releases giving it
        "signatures": {
            op: sorted(([sig, *ranges(indexes)] for sig, indexes in history.items()), key=lambda e: e[1:])
            for op, history in sorted(signatures.items())
        },
        # public op -> [[schema, first, last, ...], ...]: the schema the wheel registers (what a call binds to)
        "schemas": {
            op: sorted(([schema, *ranges(indexes)] for schema, indexes in history.items()), key=lambda e: e[1:])
            for op, history in sorted(schemas.items())
        },
        "published": published,
    }


def dump_compact(data: dict[str, object]) -> str:
    """JSON with one release, one name, one op per line: small, and a new release reads as a small diff."""

    def inline(value: object) -> str:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)

    lines = ["{"]
    items = list(data.items())
    for n, (key, value) in enumerate(items):
        comma = "," if n < len(items) - 1 else ""
        if isinstance(value, list):
            body = [f"  {inline(v)}," for v in value]
            lines += [f" {inline(key)}: [", *body[:-1], body[-1].rstrip(",") if body else "", f" ]{comma}"]
        elif isinstance(value, dict) and key == "names":
            lines.append(f" {inline(key)}: {{")
            kinds = list(value.items())
            for k, (kind, members) in enumerate(kinds):
                body = [f"   {inline(name)}: {inline(r)}," for name, r in members.items()]
                end = "," if k < len(kinds) - 1 else ""
                lines += [f"  {inline(kind)}: {{", *body[:-1], body[-1].rstrip(","), f"  }}{end}"]
            lines.append(f" }}{comma}")
        elif isinstance(value, dict):
            body = [f"  {inline(k)}: {inline(v)}," for k, v in value.items()]
            lines += [f" {inline(key)}: {{", *body[:-1], body[-1].rstrip(",") if body else "", f" }}{comma}"]
        else:
            lines.append(f" {inline(key)}: {inline(value)}{comma}")
    lines.append("}")
    return "\n".join(line for line in lines if line) + "\n"


def published_table(versions: dict[str, list[WheelFile]], known: dict[str, str | None]) -> list[dict[str, object]]:
    """Every torch-npu version on PyPI with the torch it requires and its pythons, for its manylinux x86_64 wheels;
    ``torch_aarch64`` / ``python_aarch64`` where its aarch64 wheels differ (they require torch without ``+cpu``)."""
    table: list[dict[str, object]] = []
    for version, files in versions.items():
        entry: dict[str, object] = {"version": version}
        for machine in ("x86_64", "aarch64"):
            wheels = [w for w in files if w.machine == machine]
            if machine == "x86_64" and version in known:
                torch = known[version]
            elif wheels and wheels[0].url:
                wheel = max(wheels, key=lambda w: (w.python == PREFERRED_PYTHON, python_key(w.python)))
                torch = torch_requirement(remote_metadata(wheel.url))
            else:
                torch = None
            python = sorted({w.python for w in wheels}, key=python_key)
            if machine == "x86_64":
                entry.update(torch=torch, python=python)
            else:
                if torch != entry["torch"]:
                    entry["torch_aarch64"] = torch
                if python != entry["python"]:
                    entry["python_aarch64"] = python
        table.append(entry)
        print(f"  {version}: {entry}", file=sys.stderr)
    return table


def extract_releases(output: Path, wheels: Path | None) -> None:
    try:
        files = index_files()
    except OSError as error:
        print(f"warning: {SIMPLE_INDEX} unreachable ({error}); falling back to pip index versions", file=sys.stderr)
        files = pip_index_files()
    versions = by_version(files)
    chosen, skipped = choose_releases(versions)
    print(f"{len(versions)} versions on PyPI; reading {len(chosen)}: {', '.join(chosen)}", file=sys.stderr)
    for version, why in skipped.items():
        print(f"  skipped {version}: {why}", file=sys.stderr)

    inventories: list[Inventory] = []
    with tempfile.TemporaryDirectory(prefix="torch_npu_wheels_") as tmp:
        dest = wheels or Path(tmp)
        dest.mkdir(parents=True, exist_ok=True)
        for version in chosen:
            wheel = pick_wheel(versions[version])
            assert wheel is not None
            path = download(wheel, dest)
            inventories.append(inventory(path))
            if wheels is None:
                path.unlink()
            counts = {k: len(v) for k, v in inventories[-1].names.items() if "." not in k}
            print(f"  read {path.name}: torch {inventories[-1].torch}, {counts}", file=sys.stderr)

    python = {v: sorted({w.python for w in versions[v] if w.machine == "x86_64"}, key=python_key) for v in chosen}
    published = published_table(versions, {inv.version: inv.torch for inv in inventories})
    data = compact(inventories, published, python)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(dump_compact(data), encoding="utf-8")
    print(f"wrote {output}: {output.stat().st_size} bytes, {len(inventories)} releases", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=DEFAULT_VERSION, help="torch-npu version to download")
    parser.add_argument("--wheel", type=Path, help="use this already downloaded wheel")
    parser.add_argument("--output", type=Path, help=f"JSON file to write (default {DEFAULT_OUTPUT.name})")
    parser.add_argument(
        "--releases", action="store_true", help=f"read one wheel per torch release into {RELEASES_OUTPUT.name}"
    )
    parser.add_argument("--wheels", type=Path, help="with --releases: keep the wheels here and reuse them next time")
    args = parser.parse_args(argv)

    if args.releases:
        extract_releases(args.output or RELEASES_OUTPUT, args.wheels)
        return
    args.output = args.output or DEFAULT_OUTPUT

    if args.wheel:
        api = extract(args.wheel)
    else:
        with tempfile.TemporaryDirectory(prefix="torch_npu_wheel_") as tmp:
            api = extract(download_wheel(args.version, Path(tmp)))

    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(api, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    counts = {k: len(v) for k, v in api.items() if isinstance(v, (list, dict))}
    print(f"wrote {args.output}: {counts}")


if __name__ == "__main__":
    main()
