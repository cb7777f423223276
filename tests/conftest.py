"""``--run-benchmarks`` opts in to the tests marked ``benchmark`` (learning runs too long for the default
suite's ten minutes); they are skipped otherwise."""

import pytest


def pytest_addoption(parser):
    parser.addoption("--run-benchmarks", action="store_true", help="also run the long learning benchmarks")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-benchmarks"):
        return
    skip = pytest.mark.skip(reason="long learning benchmark: pass --run-benchmarks")
    for item in items:
        if "benchmark" in item.keywords:
            item.add_marker(skip)
