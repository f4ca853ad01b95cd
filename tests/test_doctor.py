"""`ascend-port doctor` (issue 31, item 2) on recorded hosts: tests/data/doctor/<name>/ holds a host's environment
variables (env.json), its files under root/ (driver and firmware version.info, CANN's folders, /dev/davinci*) and
what its commands printed (commands/<key>.out: npu-smi, the target Python's version probe). The checks run on them
unmodified; each problem is asserted with the command that fixes it."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from ascend_port.cli import app
from ascend_port.doctor import versions
from ascend_port.doctor.checks import FAIL, OK, SKIP, WARN, Finding, diagnose
from ascend_port.doctor.environment import Completed, Environment, real_environment, recorded_environment
from ascend_port.doctor.host import parse_npu_smi
from ascend_port.doctor.render import as_data

HOSTS = Path(__file__).parent / "data" / "doctor"
SET_ENV = "source /usr/local/Ascend/ascend-toolkit/set_env.sh"


def _findings(name: str, full: bool = False) -> dict[str, Finding]:
    report = diagnose(recorded_environment(HOSTS / name), full=full)
    assert report.npu_host
    found = {f.id: f for f in report.findings}
    assert len(found) == len(report.findings)  # ids are unique
    return found


def _problems(found: dict[str, Finding]) -> dict[str, tuple[str, str | None]]:
    return {id: (f.status, f.fix) for id, f in found.items() if f.status in (WARN, FAIL)}


def _doctor(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["doctor", *args])
    return result.exit_code, result.output


def test_healthy_host_passes_every_check() -> None:
    found = _findings("healthy")
    assert _problems(found) == {}
    assert found["cann.toolkit"].found == "CANN 8.0.0 in /usr/local/Ascend/ascend-toolkit/latest"
    assert found["cann.pairing"].found == "torch-npu 2.4.0.post2 is released with CANN 8.0.0"
    assert found["devices"].found == "npu-smi 24.1.rc2: 2 chips (910B4), all OK"
    assert found["hccl"].status == SKIP  # one host
    code, out = _doctor("--recorded", str(HOSTS / "healthy"))
    assert code == 0 and "0 failed, 0 warnings, 10 ok, 1 skipped" in out


def test_cann_not_sourced_names_set_env() -> None:
    found = _findings("not_sourced")
    assert _problems(found) == {"cann.sourced": (FAIL, f"{SET_ENV}  (add it to ~/.bashrc or the job script)")}
    assert "ASCEND_HOME_PATH and ASCEND_TOOLKIT_HOME are unset" in found["cann.sourced"].found
    code, out = _doctor("--recorded", str(HOSTS / "not_sourced"))
    assert code == 1 and f"fix: {SET_ENV}" in out


def test_mismatched_torch_npu_names_the_release_paired_with_torch_and_cann() -> None:
    found = _findings("mismatched_torch_npu")
    fix = "pip install torch-npu==2.4.0.post2"  # torch 2.4.0 with CANN 8.0.0, per the compatibility table
    assert _problems(found) == {"torch.pairing": (FAIL, fix), "cann.pairing": (FAIL, fix)}
    assert found["torch.pairing"].found.startswith(
        "torch-npu 2.5.1 is built for torch 2.5.1, not the installed torch 2.4.0"
    )
    assert found["cann.pairing"].found.startswith(
        "torch-npu 2.5.1 is released with CANN 8.1.RC1, this host has CANN 8.0.0"
    )


def test_old_driver_for_its_cann() -> None:
    found = _findings("old_driver")
    assert list(_problems(found)) == ["driver.pairing"]
    finding = found["driver.pairing"]
    assert finding.status == FAIL
    assert finding.found.startswith("driver 24.1.rc2 is older than 25.0.rc1, the one CANN 8.2.RC1 is installed with")
    assert finding.fix is not None
    assert finding.fix.startswith("upgrade the driver and firmware to Ascend HDK 25.0.RC1 or newer")
    assert "npu-firmware 7.7.0.1.231" in finding.fix
    assert found["cann.toolkit"].found.startswith("CANN 8.2.RC1")  # read from x86_64-linux/ascend_toolkit_install.info


def test_cann_in_a_versioned_folder_named_by_ascend_home_path() -> None:
    """No ascend_toolkit_install.info: the version is the folder's name; no driver pairing is known for 8.5.0."""
    found = _findings("versioned_home")
    assert _problems(found) == {}
    assert found["cann.toolkit"].found == "CANN 8.5.0 in /usr/local/Ascend/cann-8.5.0"
    assert found["cann.pairing"].found == "torch-npu 2.8.0.post2 is released with CANN 8.5.0"
    assert found["driver.pairing"].status == SKIP


def test_no_npu_says_so_and_what_it_would_check() -> None:
    report = diagnose(recorded_environment(HOSTS / "no_npu"))
    assert not report.npu_host and report.findings == []  # its leftover CUDA_VISIBLE_DEVICES is no NPU problem
    code, out = _doctor("--recorded", str(HOSTS / "no_npu"))
    assert code == 0
    assert out.startswith("No Ascend NPU on this host")
    assert "  - the CANN toolkit found and its version" in out
    assert "HCCL_CONNECT_TIMEOUT" in out


def test_multi_host_gaps_and_cuda_leftovers() -> None:
    found = _findings("multi_host_gaps")
    assert _problems(found) == {
        "env.CUDA_VISIBLE_DEVICES": (
            WARN,
            "export ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 && unset CUDA_VISIBLE_DEVICES",
        ),
        "env.NCCL_SOCKET_IFNAME": (WARN, "export HCCL_SOCKET_IFNAME=enp189s0f0 && unset NCCL_SOCKET_IFNAME"),
        "env.PYTORCH_CUDA_ALLOC_CONF": (
            WARN,
            "export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True && unset PYTORCH_CUDA_ALLOC_CONF",
        ),
        "hccl.HCCL_CONNECT_TIMEOUT": (WARN, "export HCCL_CONNECT_TIMEOUT=1200"),
        "hccl.HCCL_EXEC_TIMEOUT": (WARN, "export HCCL_EXEC_TIMEOUT=1800"),
        "hccl.interface": (WARN, "export HCCL_SOCKET_IFNAME=enp189s0f0"),
    }
    assert "NNODES=2, WORLD_SIZE=16 > 8 local chips, MASTER_ADDR=10.20.0.11" in found["hccl.interface"].found
    code, _ = _doctor("--recorded", str(HOSTS / "multi_host_gaps"))
    assert code == 0  # warnings only


def test_full_checks_on_an_a3_host() -> None:
    """Atlas A3 prints two chips per NPU; --full reads each NPU's health and imports torch_npu in the target Python."""
    quick = _findings("a3_full")
    assert "devices.health.1" not in quick and "torch_npu.runtime" not in quick
    found = _findings("a3_full", full=True)
    assert found["devices"].found == "npu-smi 25.0.rc1.1: 4 chips (Ascend910); not healthy: NPU 1 Alarm"
    assert _problems(found) == {
        "cann.sourced": (FAIL, SET_ENV),
        "devices": (WARN, "npu-smi info -t health -i 1  (the error code says which part)"),
        "devices.visible_env": (FAIL, "export ASCEND_RT_VISIBLE_DEVICES=0,1,2"),
        "devices.health.1": (FAIL, found["devices.health.1"].fix),
        "torch_npu.runtime": (FAIL, SET_ENV),
    }
    assert found["devices.health.0"].status == OK
    assert found["devices.health.1"].found == "health Alarm, error code 0x80E01801"
    assert "libhccl.so: cannot open shared object file" in found["torch_npu.runtime"].found


def _host(tmp_path: Path, environ: dict[str, str], smi: str | None = None, probe: dict | None = None) -> Environment:
    """A host built in the test: the driver installed, npu-smi and the version probe answering as given."""
    (tmp_path / "usr/local/Ascend/driver").mkdir(parents=True, exist_ok=True)

    def run(key: str, argv: list[str], timeout: float) -> Completed | None:
        if key == "npu-smi-info" and smi is not None:
            return Completed(0, smi)
        if key == "python-versions" and probe is not None:
            return Completed(0, json.dumps(probe))
        return None

    return Environment(environ=environ, root=tmp_path, run=run, python=sys.executable)


def test_visible_devices_beyond_the_host_and_cuda_torch(tmp_path: Path) -> None:
    smi = (HOSTS / "healthy" / "commands" / "npu-smi-info.out").read_text()
    env = _host(tmp_path, {"ASCEND_RT_VISIBLE_DEVICES": "1,3"}, smi, {"python": "3.10", "torch": "2.5.1+cu121"})
    found = {f.id: f for f in diagnose(env).findings}
    assert found["devices.visible_env"].fix == "export ASCEND_RT_VISIBLE_DEVICES=1"
    assert "this host has 2 chips" in found["devices.visible_env"].found
    torch = found["torch.installed"]
    assert torch.status == FAIL and "CUDA/ROCm build" in torch.found
    assert torch.fix == "pip install --force-reinstall torch==2.5.1 --index-url https://download.pytorch.org/whl/cpu"
    assert found["driver"].status == FAIL and found["cann.toolkit"].status == FAIL
    assert found["devices.visible_env"].status == FAIL


def test_torch_missing_names_the_newest_pair_of_the_hosts_cann(tmp_path: Path) -> None:
    kit = tmp_path / "usr/local/Ascend/ascend-toolkit"
    (kit / "latest/aarch64-linux").mkdir(parents=True)
    (kit / "latest/aarch64-linux/ascend_toolkit_install.info").write_text("version=8.1.RC1\n")
    (kit / "set_env.sh").write_text("")
    env = _host(tmp_path, {}, None, {"python": "3.11", "torch": None, "torch_npu": None})
    found = {f.id: f for f in diagnose(env).findings}
    assert found["torch.installed"].fix == (
        "pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cpu && pip install torch-npu==2.5.1"
    )
    assert found["cann.sourced"].fix == SET_ENV + "  (add it to ~/.bashrc or the job script)"


def test_torch_npu_missing_names_the_release_for_torch(tmp_path: Path) -> None:
    env = _host(tmp_path, {}, None, {"python": "3.11", "torch": "2.6.0", "torch_npu": None})
    found = {f.id: f for f in diagnose(env).findings}
    assert found["torch.installed"].fix == "pip install torch-npu==2.6.0.post5"  # the covered release for 2.6.0
    assert found["devices"].status == WARN and "npu-smi is not on PATH" in found["devices"].found


def test_cuda_variables_renamed_with_their_values(tmp_path: Path) -> None:
    environ = {
        "NCCL_BUFFSIZE": str(4 << 20),  # bytes; HCCL_BUFFSIZE counts megabytes
        "TORCH_NCCL_BLOCKING_WAIT": "1",
        "CUDA_VISIBLE_DEVICES": "0,1",
        "ASCEND_RT_VISIBLE_DEVICES": "0,1",  # already set: the CUDA one is only left over
    }
    fixes = {f.id: f.fix for f in diagnose(_host(tmp_path, environ)).findings if f.id.startswith("env.")}
    assert fixes == {
        "env.CUDA_VISIBLE_DEVICES": "unset CUDA_VISIBLE_DEVICES",
        "env.NCCL_BUFFSIZE": "export HCCL_BUFFSIZE=4 && unset NCCL_BUFFSIZE",
        "env.TORCH_NCCL_BLOCKING_WAIT": "export TORCH_HCCL_BLOCKING_WAIT=1 && unset TORCH_NCCL_BLOCKING_WAIT",
    }


def test_one_node_with_its_own_address_as_master_is_one_host(tmp_path: Path) -> None:
    smi = (HOSTS / "healthy" / "commands" / "npu-smi-info.out").read_text()  # 2 chips
    one = {"MASTER_ADDR": "10.20.0.11", "WORLD_SIZE": "2"}
    found = {f.id: f for f in diagnose(_host(tmp_path, one, smi)).findings}
    assert found["hccl"].status == SKIP
    several = {**one, "WORLD_SIZE": "4", "HCCL_IF_IP": "10.20.0.12"}
    found = {f.id: f for f in diagnose(_host(tmp_path, several, smi)).findings}
    assert found["hccl.interface"].status == OK
    assert found["hccl.HCCL_CONNECT_TIMEOUT"].found.startswith(
        "several hosts (WORLD_SIZE=4 > 2 local chips, MASTER_ADDR=10.20.0.11)"
    )


def test_npu_smi_parser_reads_a_910b_table_and_skips_the_process_table() -> None:
    table = parse_npu_smi((HOSTS / "a3_full" / "commands" / "npu-smi-info.out").read_text())
    assert table.version == "25.0.rc1.1"
    assert [(c.npu, c.health) for c in table.chips] == [(0, "OK"), (0, "OK"), (1, "Alarm"), (1, "Alarm")]
    assert table.family == "910b"
    assert parse_npu_smi("").chips == ()


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("8.0.RC3", "8.0.0"),
        ("24.1.rc2", "24.1.0"),
        ("25.0.rc1", "25.0.rc1.1"),
        ("23.0.3", "24.1.rc1"),
        ("8.5.0", "9.0.0"),
    ],
)
def test_version_order(older: str, newer: str) -> None:
    assert versions.version_key(older) < versions.version_key(newer)


def test_version_tables_name_their_sources_and_agree_with_the_release_data() -> None:
    assert "COMPATIBILITY" in versions.table_source("torch_npu_cann")
    assert "package_info.js" in versions.table_source("cann_driver")
    assert versions.cann_for_torch_npu("2.4.0.post2") == "8.0.0"
    assert versions.cann_for_torch_npu("2.1.0.post10") == "8.0.0"
    assert versions.torch_npu_for("2.5.1", "8.2.RC1") == "2.5.1.post1"
    driver = versions.driver_for("8.0.0", "910b")
    assert driver is not None and (driver.driver, driver.firmware) == ("24.1.rc2", "7.3.0.1.231")
    # every torch-npu release of the table since 2.1 that PyPI has requires the torch the table names
    from ascend_port.core.npu_api import published_releases

    required = {r.version: r.torch_version for r in published_releases()}
    for pairing in versions.torch_npu_pairings():
        if pairing.torch_npu in required and required[pairing.torch_npu]:
            assert required[pairing.torch_npu] == pairing.torch, pairing


SCHEMA = json.loads(resources.files("ascend_port.data").joinpath("doctor.schema.json").read_text("utf-8"))


@pytest.mark.parametrize("name", sorted(p.name for p in HOSTS.iterdir()))
def test_json_follows_its_schema(name: str) -> None:
    code, out = _doctor("--json", "--full", "--recorded", str(HOSTS / name))
    data = json.loads(out)
    jsonschema.validate(data, SCHEMA)
    assert data["summary"]["fail"] == sum(c["status"] == FAIL for c in data["checks"])
    assert code == (1 if data["summary"]["fail"] else 0)
    assert bool(data["would_check"]) == (not data["npu_host"])


def test_schema_refuses_what_the_report_must_not_say() -> None:
    data = as_data(diagnose(recorded_environment(HOSTS / "not_sourced")))
    jsonschema.validate(data, SCHEMA)
    bad = json.loads(json.dumps(data))
    bad["checks"][3]["fix"] = None  # a failure without its fix
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)
    bad = {**data, "checks": [{**data["checks"][0], "status": "error"}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SCHEMA)


def test_this_machine_has_no_npu() -> None:
    """The real Environment: this machine (CI, a laptop) has no Ascend driver, device or npu-smi."""
    if Path("/usr/local/Ascend/driver").exists() or list(Path("/dev").glob("davinci[0-9]*")):
        pytest.skip("an Ascend host")
    report = diagnose(real_environment())
    assert not report.npu_host
    code, out = _doctor()
    assert code == 0 and out.startswith("No Ascend NPU on this host")


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    code, _ = _doctor("--no-such-flag")
    assert code == 2
    code, out = _doctor("--recorded", str(tmp_path))
    assert code == 2 and "not a recorded host" in out


# The command line as its console script runs it, then the heavy modules the process loaded.
CLI_RUN = """
import sys
from ascend_port.cli import main
sys.argv = ["ascend-port", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
heavy = ("libcst", "torch", "torch_npu", "git")
sys.stderr.write("LOADED " + " ".join(m for m in heavy if m in sys.modules) + "\\n")
"""


@pytest.mark.parametrize("args", [["--full", "--recorded", str(HOSTS / "a3_full")], []])
def test_doctor_loads_neither_libcst_nor_torch(args: list[str]) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-c", CLI_RUN, "doctor", *args], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout  # the report
    assert done.stderr.split("LOADED")[1].split() == []
