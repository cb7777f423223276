"""The suite's ``xdist_group`` marks hold under ``pytest -n 2`` with the pinned pytest and pytest-xdist: the Ray tests
count the Ray processes running, and the tune study is set up once, so each group must run on one worker. With
pytest 9.2 and pytest-xdist 3.8 the marks were ignored without a word (pytest-dev/pytest-xdist#1386)."""

import subprocess
import sys

GROUPED = """
import os, time, pytest

def record(name):
    with open(f"{name}.worker", "w") as handle:
        handle.write(os.environ["PYTEST_XDIST_WORKER"])
    time.sleep(0.3)

@pytest.mark.parametrize("index", range(4))
@pytest.mark.xdist_group("together")
def test_grouped(index):
    record(f"grouped{index}")

@pytest.mark.parametrize("index", range(4))
def test_free(index):
    record(f"free{index}")
"""


def test_tests_of_one_xdist_group_run_on_one_worker(tmp_path):
    (tmp_path / "test_grouped.py").write_text(GROUPED)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist=loadgroup", "-p", "no:cacheprovider",
                             "test_grouped.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    workers = {path.stem: path.read_text() for path in tmp_path.glob("*.worker")}
    assert len(workers) == 8
    assert len({workers[f"grouped{index}"] for index in range(4)}) == 1, workers
    assert set(workers.values()) == {"gw0", "gw1"}, workers  # both workers ran tests: the check above could fail
