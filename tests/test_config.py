"""``[tool.ascend-port]`` like ruff's configuration (issue 20): ``exclude`` relative to the pyproject.toml that
defines it (from the project root, a subfolder or outside the project), ``--exclude`` relative to the paths as
given; a misspelt table is an error; every error names the file, the table and the key; ``config`` prints the real
defaults as TOML that, pasted into a pyproject.toml, gives the same configuration."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomlkit
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.run import config as project_config
from ascend_port.run.discovery import AnchoredGlob

CUDA = "import torch\n\nx = torch.ones(2).cuda()\n"
FILES = ("gen/a.py", "sub/gen/b.py", "sub/c.py", "sub/d.py", "sub/vendored/e.py", "top.py")
# gen/* : the root's gen folder only; vendored: a folder of that name anywhere; sub/c.py: that one file.
EXCLUDE = 'exclude = ["gen/*", "vendored", "sub/c.py"]\n'


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(CUDA)
    write_config(root, EXCLUDE)
    return root


def write_config(folder: Path, body: str, table: str = "tool.ascend-port") -> Path:
    path = folder / "pyproject.toml"
    path.write_text(f'[project]\nname = "demo"\n\n[{table}]\n{body}')
    return path


def scanned(*args: str) -> set[str]:
    """The files a scan ports, as its concise lines name them (relative to the current folder)."""
    result = invoke("scan", *args, "--format", "concise", "--exit-zero")
    assert result.exit_code == 0, result.output
    return {line.split(":")[0] for line in result.stdout.splitlines() if re.match(r"\S+\.py:\d+:", line)}


# --- exclude ----------------------------------------------------------------------------------------------------


def test_exclude_from_the_project_root(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(proj)
    assert scanned(".") == {"sub/gen/b.py", "sub/d.py", "top.py"}


def test_exclude_from_a_subfolder(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # "gen/*" is the root's gen folder: sub/gen/b.py is not excluded though it is "gen/b.py" from here.
    monkeypatch.chdir(proj / "sub")
    assert scanned(".") == {"gen/b.py", "d.py"}
    assert scanned("gen/b.py", "c.py") == {"gen/b.py"}  # a file named on the command line is excluded all the same


def test_exclude_from_outside_the_project(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(proj.parent)
    assert scanned("proj") == {"proj/sub/gen/b.py", "proj/sub/d.py", "proj/top.py"}
    assert scanned("proj/sub", "proj/gen") == {"proj/sub/gen/b.py", "proj/sub/d.py"}
    elsewhere = proj.parent / "elsewhere"  # (a folder that has nothing to do with the project)
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    found = scanned(str(proj / "sub"), str(proj / "gen"))
    assert {Path(name).resolve().relative_to(proj).as_posix() for name in found} == {"sub/gen/b.py", "sub/d.py"}


def test_command_line_exclude_is_relative_to_the_paths_given_and_replaces_the_file(
    proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(proj / "sub")
    assert scanned(".", "--exclude", "gen/*") == {"c.py", "d.py", "vendored/e.py"}  # (as ruff: from the cwd)
    monkeypatch.chdir(proj)
    assert scanned(".", "--exclude", "sub") == {"gen/a.py", "top.py"}  # a folder name; the file's list replaced


def test_config_shows_where_exclude_globs_are_relative_to(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(proj / "sub")
    shown = invoke("config").stdout
    assert f'exclude = ["gen/*", "vendored", "sub/c.py"]  # {proj / "pyproject.toml"} (globs relative' in shown


@pytest.mark.parametrize(
    "pattern, relative, excluded",
    [
        ("gen", "a/gen/x.py", True),
        ("gen", "gen.py", False),
        ("*_pb2.py", "deep/er/m_pb2.py", True),
        ("gen/*", "gen/x.py", True),
        ("gen/*", "a/gen/x.py", False),
        ("/gen", "gen/deep/x.py", True),
        ("./gen/", "gen/x.py", True),
        ("**/gen", "a/b/gen/x.py", True),
        ("**/gen", "gen/x.py", True),
        ("src/*.py", "src/m.py", True),
        ("src/*.py", "lib/src/m.py", False),
    ],
)
def test_anchored_globs(tmp_path: Path, pattern: str, relative: str, excluded: bool) -> None:
    assert AnchoredGlob(pattern, str(tmp_path)).matches(str(tmp_path / relative)) is excluded


def test_anchored_globs_outside_their_folder(tmp_path: Path) -> None:
    root = str(tmp_path / "proj")
    assert AnchoredGlob("gen", root).matches(str(tmp_path / "other" / "gen"))  # a name matches the file's name
    assert not AnchoredGlob("other", root).matches(str(tmp_path / "other" / "x.py"))  # but no folder above it
    assert not AnchoredGlob("other/*", root).matches(str(tmp_path / "other" / "x.py"))


# --- misspelt tables and errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "table", ["tool.ascend_port", "tool.ascendport", "tool.Ascend-Port", "tool.ascend-ports", "tool.ascend.port"]
)
def test_a_misspelt_table_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str) -> None:
    monkeypatch.chdir(tmp_path)
    path = write_config(tmp_path, 'ignore = ["NPU104"]\n', table)
    (tmp_path / "train.py").write_text(CUDA)
    result = invoke("scan", ".")
    assert result.exit_code == 2
    assert f"{path}: [{table}] is not read: did you mean [tool.ascend-port]?" in " ".join(result.stderr.split())


def test_a_table_without_tool_is_an_error(tmp_path: Path) -> None:
    path = write_config(tmp_path, "", "ascend-port")
    with pytest.raises(project_config.ConfigError, match=re.escape("[ascend-port] is not read: did you mean")):
        project_config.resolve([path])


def test_no_error_with_the_right_table_or_other_tools(tmp_path: Path) -> None:
    path = write_config(tmp_path, 'ignore = ["NPU104"]\n\n[tool.ascend_port]\nignore = ["NPU2"]\n')
    assert project_config.resolve([tmp_path]).ignore == ("NPU104",)  # the right table is there: read it
    path.write_text("[tool.ruff]\nline-length = 120\n\n[tool.ascend]\nx = 1\n\n[tool.port]\ny = 2\n")
    assert project_config.resolve([tmp_path]).source is None


@pytest.mark.parametrize(
    "body, message",
    [
        ('ignore = ["NPU999"]\n', "[tool.ascend-port] ignore: unknown rule 'NPU999'"),
        ('select = ["NPU1", "npu0"]\n', "[tool.ascend-port] select: unknown rule 'NPU0'"),
        ("select = []\n", "[tool.ascend-port] select: empty"),
        ("select = 3\n", "[tool.ascend-port] select: must be a string or a list of strings, not 3"),
        ('exclude = ["a", 1]\n', "[tool.ascend-port] exclude: must be a string or a list of strings"),
        ('min-confidence = "sure"\n', "[tool.ascend-port] min-confidence: unknown confidence 'sure'"),
        ("branch = 3\n", "[tool.ascend-port] branch: must be a non-empty string, not 3"),
        ('other-devices = "toss"\n', "[tool.ascend-port] other-devices: 'toss' is not one of keep, drop"),
        ('attention-backend = "cudnn"\n', "[tool.ascend-port] attention-backend: 'cudnn' is not one of torch_npu"),
        ('torch-npu = "0.1"\n', "[tool.ascend-port] torch-npu: "),
        (
            'min_confidence = "low"\n',
            "[tool.ascend-port]: unknown key 'min_confidence' (did you mean 'min-confidence'?)",
        ),
        ('excludes = ["a"]\n', "[tool.ascend-port]: unknown key 'excludes' (did you mean 'exclude'?)"),
        ('colour = "red"\n', "[tool.ascend-port]: unknown key 'colour' (known: select, ignore"),
    ],
)
def test_errors_name_the_file_the_table_and_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    path = write_config(tmp_path, body)
    result = invoke("config")
    assert result.exit_code == 2
    assert f"error: {path} {message}" in " ".join(result.stderr.split())


def test_a_table_that_is_not_a_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool]\nascend-port = "all"\n')
    with pytest.raises(project_config.ConfigError, match=re.escape("[tool.ascend-port] must be a table")):
        project_config.resolve([tmp_path])


@pytest.mark.parametrize(
    "flags, message",
    [
        (("--ignore", "NPU999"), "--ignore: unknown rule 'NPU999'"),
        (("--select", "NPU1,XYZ"), "--select: unknown rule 'XYZ'"),
        (("--min-confidence", "sure"), "--min-confidence: unknown confidence 'sure'"),
        (("--other-devices", "toss"), "--other-devices: 'toss' is not one of keep, drop"),
        (("--torch-npu", "0.1"), "--torch-npu: "),
    ],
)
def test_flag_errors_name_the_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write_config(tmp_path, 'ignore = ["NPU104"]\n')
    result = invoke("config", ".", *flags)
    assert result.exit_code == 2 and f"error: {message}" in " ".join(result.stderr.split())


def test_a_flag_error_is_not_blamed_on_the_file(tmp_path: Path) -> None:
    write_config(tmp_path, 'select = ["NPU1"]\n')
    with pytest.raises(project_config.ConfigError, match="^--ignore: unknown rule 'NPU999'"):
        project_config.resolve([tmp_path], {"ignore": ["NPU999"]})


# --- config: the real defaults, as TOML that round-trips --------------------------------------------------------


def test_config_prints_the_real_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ascend_port.git.workflow import DEFAULT_BRANCH
    from ascend_port.rules.attention.helpers import BACKENDS

    monkeypatch.chdir(tmp_path)
    shown = invoke("config").stdout
    assert "is not set" not in shown
    table = tomlkit.parse(shown).unwrap()["tool"]["ascend-port"]
    assert table == {
        "select": ["ALL"],
        "ignore": [],
        "min-confidence": "low",
        "exclude": [],
        "attention-backend": "torch_npu",
        "branch": DEFAULT_BRANCH,
        "other-devices": "keep",
        "torch-npu": project_config.npu_api.newest_release(),
    }
    assert project_config.DEFAULT_BRANCH == DEFAULT_BRANCH and BACKENDS[0] == "torch_npu"
    for line in shown.splitlines()[2:]:
        assert line.endswith("# default") or "# default: the newest release" in line, line


def _values(rendered: str) -> dict[str, object]:
    return tomlkit.parse(rendered).unwrap()["tool"]["ascend-port"]


@pytest.mark.parametrize(
    "body, flags",
    [
        ("", {}),
        ('select = "NPU1,NPU2"\nignore = ["NPU104"]\nmin-confidence = "medium"\nexclude = ["gen/*"]\n', {}),
        ('attention-backend = "mindiesd"\nbranch = "npu-port"\nother-devices = "drop"\ntorch-npu = "2.5.1"\n', {}),
        ('ignore = ["NPU104"]\n', {"ignore": ["NPU2"], "branch": "other", "torch-npu": "2.5.1"}),
    ],
)
def test_config_output_round_trips(tmp_path: Path, body: str, flags: dict[str, object]) -> None:
    first = tmp_path / "first"
    first.mkdir()
    write_config(first, body)
    rendered = project_config.render(project_config.resolve([first], flags))
    pasted = tmp_path / "pasted"
    pasted.mkdir()
    (pasted / "pyproject.toml").write_text(f'[project]\nname = "demo"\n\n{rendered}')  # comments and all
    again = project_config.resolve([pasted])
    assert again.source == pasted / "pyproject.toml"
    assert _values(project_config.render(again)) == _values(rendered)
    assert set(again.origins.values()) == {project_config.FILE}  # every key now set by the file
    before = project_config.resolve([first], flags)
    assert again.selection == before.selection and again.target == before.target
    assert (again.attention_backend or "torch_npu") == (before.attention_backend or "torch_npu")


def test_config_round_trips_an_inferred_target(tmp_path: Path) -> None:
    write_config(tmp_path, "")
    (tmp_path / "requirements.txt").write_text("torch==2.1.0\n")
    settings = project_config.resolve([tmp_path])
    rendered = project_config.render(settings)
    assert f'torch-npu = "{settings.target}"  # inferred from requirements.txt' in rendered
    (tmp_path / "requirements.txt").unlink()
    (tmp_path / "pyproject.toml").write_text(rendered)
    assert project_config.resolve([tmp_path]).target == settings.target


def test_the_flags_name_every_configuration_key_once() -> None:
    """A key added to the file's table is a flag too (run/config.Flags): no command hands its flags on by name."""
    import dataclasses

    from ascend_port.run.config import KEYS, Flags

    assert [f.name.replace("_", "-") for f in dataclasses.fields(Flags)] == list(KEYS)
    assert Flags(torch_npu="2.5.1").keys() == {key: ("2.5.1" if key == "torch-npu" else None) for key in KEYS}


def test_config_names_the_pyproject_that_has_no_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`file: none found` beside a pyproject.toml misleads (issue 32): the file was found, it has no table."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', "utf-8")
    monkeypatch.chdir(tmp_path)
    first = invoke("config").stdout.splitlines()[0]
    assert (
        first
        == f"# effective configuration; file: none ({tmp_path / 'pyproject.toml'} has no [tool.ascend-port] table)"
    )
