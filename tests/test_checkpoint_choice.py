"""benchmarks/checkpoint_choice.py: each checkpoint's coverage over the random policy's, and the longest-games choice."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from checkpoint_choice import checkpoints  # noqa: E402


def write_games(path, rows):
    path.write_text("env,score,length,positions\n" + "".join(f"{i},0,{length},{positions}\n" for i, (length, positions) in enumerate(rows)))


def test_coverage_is_over_the_random_policys_positions_and_the_greedy_games_are_left_out(tmp_path):
    explore = tmp_path / "explore"
    explore.mkdir()
    write_games(explore / "random.csv", [(100, 40), (100, 60)])  # 50 positions a game
    write_games(explore / "step-81920.csv", [(300, 50), (500, 70)])  # length 400, 60 positions: 1.2x
    write_games(explore / "step-163840.csv", [(200, 25), (200, 25)])
    write_games(explore / "step-163840-greedy.csv", [(900, 500)])
    assert checkpoints(tmp_path) == [(81920, 400.0, 1.2), (163840, 200.0, 0.5)]
