from lightning.fabric.accelerators import CPUAccelerator
from tests_fabric.helpers.runif import RunIf


@RunIf(min_torch="2.4")
def test_cpu():
    assert CPUAccelerator.is_available()
