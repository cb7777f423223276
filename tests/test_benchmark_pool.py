"""The benchmarks' launcher of runs a few at a time (``benchmarks/pool.py``)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from pool import run_commands  # noqa: E402


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_the_next_run_starts_when_any_running_one_ends_not_the_first_started(tmp_path):
    """The first run can only end once the third has run; the second ends at once, so its slot must go to the third."""
    signal = tmp_path / "third-ran"
    waits_for_third = python("import pathlib, sys, time\n"
                             f"for _ in range(600):\n    if pathlib.Path({str(signal)!r}).exists(): sys.exit(0)\n    time.sleep(0.05)\n"
                             "sys.exit(1)")
    run_commands([waits_for_third, python("pass"), python(f"open({str(signal)!r}, 'w').close()")], parallel=2)
    assert signal.exists()


def test_a_failed_run_stops_the_launch_and_names_its_command(tmp_path):
    never = tmp_path / "never"
    with pytest.raises(SystemExit, match="a run failed: .*exit\\(3\\)"):
        run_commands([python("import sys; sys.exit(3)"), python(f"open({str(never)!r}, 'w').close()")], parallel=1)
    assert not never.exists()
