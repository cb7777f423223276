"""Rollout diagnostics and the policy-collapse guard."""

import csv

import pytest
import torch

import voidrl
from voidrl.rollout.diagnostics import identical_action_fraction


def test_identical_action_fraction():
    assert identical_action_fraction(torch.tensor([[1, 1, 1, 1], [0, 1, 2, 3]])) == (1.0 + 0.25) / 2
    assert identical_action_fraction(torch.tensor([[2, 2, 0, 0]])) == 0.5


@pytest.mark.slow
def test_collapse_guard_warns_and_restores_the_healthy_checkpoint(tmp_path, capsys):
    # CartPole's entropy starts at ln 2 = 0.69 and only falls: a threshold of 0.6 is crossed during learning.
    voidrl.train("ppo", env="CartPole-v1", steps=40_000, run_dir=str(tmp_path), progress=False, checkpoint_every=1,
                 collapse_entropy=0.6, collapse_patience=3, collapse_restore=True)
    assert "policy entropy below 0.6 for 3 updates" in capsys.readouterr().err
    assert (tmp_path / "healthy.pt").exists()
    with open(tmp_path / "metrics.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert any(row["rollout/collapse_restored"] == "1" for row in rows)
    assert all(0 < float(row["rollout/identical_action_fraction"]) <= 1 for row in rows)
