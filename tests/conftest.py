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
