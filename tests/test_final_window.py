"""benchmarks/final_window.py: where a run's last 100 games begin, and when their mean first reaches a score."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from final_window import first_step_reaching, window_opening  # noqa: E402


def test_the_window_opens_after_the_episode_before_it():
    steps = np.array([10, 20, 30, 40])
    assert window_opening(steps, 2) == 20  # the last two ended at 30 and 40
    assert window_opening(steps, 4) == 0
    assert window_opening(steps, 9) == 0


def test_first_step_reaching_counts_only_full_windows():
    steps = np.array([10, 20, 30, 40, 50])
    returns = np.array([9.0, 0.0, 4.0, 6.0, 8.0])
    # trailing means of 2: 9 (one episode, not counted), 4.5, 2, 5, 7
    assert first_step_reaching(steps, returns, 5.0, 2) == 40
    assert first_step_reaching(steps, returns, 4.5, 2) == 20
    assert first_step_reaching(steps, returns, 7.5, 2) is None


def test_the_table_by_hand(tmp_path):
    for arm, steps in (("short", 30), ("long-500k", 50)):  # the long run went on past the budget of 30
        run = tmp_path / arm / "seed0"
        run.mkdir(parents=True)
        (run / "config.json").write_text(json.dumps({"run": {"steps": steps}}))
        (run / "episodes.csv").write_text("step,return,length\n10,0,5\n20,2,5\n30,4,5\n40,6,5\n50,8,5\n")
    result = subprocess.run([sys.executable, str(BENCHMARKS / "final_window.py"), str(tmp_path), "--budget", "30",
                             "--window", "2", "--threshold", "5"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith(("| short", "| long"))]
    # within 30 steps: 3 games, the last 2 ended after step 10, mean 3; the longer run's trailing mean of 2 is 5 at step 40
    assert rows == ["| long-500k | 1 | 3-3 | 10-10 | 3-3 | 40 |", "| short | 1 | 3-3 | 10-10 | 3-3 | - |"]


def test_an_unknown_arm_names_the_arms_there_are(tmp_path):
    (tmp_path / "short" / "seed0").mkdir(parents=True)
    result = subprocess.run([sys.executable, str(BENCHMARKS / "final_window.py"), str(tmp_path), "--arms", "other"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "has no arm other; it has short" in result.stderr
