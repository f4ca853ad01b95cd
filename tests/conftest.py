import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden", action="store_true", default=False,
        help="rewrite golden/**/*.out.* from the current output for review (removes .out files of unchanged cases)",
    )
