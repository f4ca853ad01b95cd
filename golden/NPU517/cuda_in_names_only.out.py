import pytest
# TODO(ascend-port): NPU504 [low] CuPy runs only on CUDA: use torch tensors on the npu device or NumPy/SciPy on the host
from cupyx.scipy import special


@pytest.fixture
def cuda120_spec():
    return {"cuda_version_string": "120"}


def test_spec_on_the_host(cuda120_spec):
    # 'cuda' only in names: nothing runs on CUDA, nothing is ported, no guard
    assert special.gammaln(1.0) == 0.0
    assert cuda120_spec["cuda_version_string"] == "120"
