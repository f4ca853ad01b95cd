import fnmatch

import pytest


@pytest.fixture(autouse=True)
def _private_result_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own result cache (ascend_port/cache.py): none reads the user's ~/.cache or another
    test's entries."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite golden/**/*.out.* and *.findings from the current output for review (removes the .out files "
        "of unchanged cases and the .findings files of cases without findings)",
    )


# The modules that run real code (corpora of PyPI projects, training under the emulator, triton-ascend compiles,
# torch numerics): about 20 of the 22 minutes of the full suite on 2 cores. `pytest -m "not slow"` skips them
# (README, Set-up); a test in them may also carry the marker itself.
SLOW_MODULES = (
    "test_real_*.py",
    "test_emulate*.py",
    "test_triton_ascend.py",
    "test_training_equivalence.py",
    "test_norm_rotary_training.py",
    "test_chunk_equivalence.py",
    "test_corpora.py",
    "test_distributed_precision.py",
    "test_fuzz.py",
)


# Single slow tests of otherwise fast modules (measured with --durations on 2 cores).
SLOW_TESTS = ("test_robustness.py::test_a_200000_line_module_is_ported_exactly",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = f"{item.path.name}::{item.name.split('[')[0]}"
        if name in SLOW_TESTS or any(fnmatch.fnmatch(item.path.name, pattern) for pattern in SLOW_MODULES):
            item.add_marker(pytest.mark.slow)
