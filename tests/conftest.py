"""Two opt-in tiers keep the default suite within ten minutes on 2 cores (4 min 42 s on the 2-core AMD EPYC it was
cut on): ``--run-slow`` adds the tests marked ``slow`` (each a run of more than about ten seconds there: training
through the command line, on Ray actors or torchrun ranks, the same command twice, learning over several seeds; CI
runs them after the default suite), and ``--run-benchmarks`` adds those marked ``benchmark`` (learning runs of
minutes) as well as the slow ones."""

import pytest

OPT_IN = {"slow": "--run-slow", "benchmark": "--run-benchmarks"}
"""Each opt-in marker and the option that runs its tests."""


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", help="also run the slow tests (about 25 minutes on 2 cores)")
    parser.addoption("--run-benchmarks", action="store_true", help="also run the slow tests and the long learning benchmarks")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-benchmarks"):
        return
    for marker, option in OPT_IN.items():
        if config.getoption(option):
            continue
        skip = pytest.mark.skip(reason=f"{marker}: pass {option}")
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)
