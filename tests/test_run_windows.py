"""benchmarks/run_windows.py: a run's scored share, mean return and metrics per window of steps."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "run_windows.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_windows_by_hand(tmp_path):
    # episodes end at steps 5, 10, 15, 20 with returns 0, 0.5, 0, 1; metrics at steps 8 and 16
    (tmp_path / "episodes.csv").write_text("step,return,length\n5,0,5\n10,0.5,5\n15,0,5\n20,1,5\n")
    (tmp_path / "metrics.csv").write_text("step,train/q_taken\n8,1.0\n16,3.0\n")
    result = run(tmp_path, "--window", 10, "--metrics", "train/q_taken")
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| 0-") or line.startswith("| 10-") or line.startswith("| 20-")]
    assert rows == ["| 0-10 | 1 | 0.00 | 0.000 | 1 |",       # the episode ending at 5; the metric logged at 8
                    "| 10-20 | 2 | 0.50 | 0.250 | 3 |",      # episodes ending at 10 and 15
                    "| 20-30 | 1 | 1.00 | 1.000 | nan |"]


def test_an_unknown_metric_names_the_columns_there_are(tmp_path):
    (tmp_path / "episodes.csv").write_text("step,return,length\n5,0,5\n")
    (tmp_path / "metrics.csv").write_text("step,train/q_taken\n8,1.0\n")
    result = run(tmp_path, "--metrics", "ngu/episodic")
    assert result.returncode == 2 and "has no column ngu/episodic; it has step, train/q_taken" in result.stderr
