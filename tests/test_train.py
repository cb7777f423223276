"""The training loop: determinism under a seed, logs."""

import torch

import voidrl


def test_two_runs_with_the_same_seed_match_exactly(tmp_path):
    agents = [
        voidrl.train("ppo", env="CartPole-v1", steps=2048, seed=5, run_dir=str(tmp_path / name), progress=False)
        for name in ("a", "b")
    ]
    assert (tmp_path / "a" / "episodes.csv").read_text() == (tmp_path / "b" / "episodes.csv").read_text()
    for a, b in zip(agents[0].policy.parameters(), agents[1].policy.parameters()):
        assert torch.equal(a, b)
    other = voidrl.train("ppo", env="CartPole-v1", steps=2048, seed=6, run_dir=str(tmp_path / "c"), progress=False)
    assert any(not torch.equal(a, c) for a, c in zip(agents[0].policy.parameters(), other.policy.parameters()))


def test_minatar_and_mujoco_runs_log_and_checkpoint(tmp_path):
    for env_id, steps in (("MinAtar/Breakout-v1", 2048), ("InvertedPendulum-v5", 2048)):
        run_dir = tmp_path / env_id.replace("/", "_")
        agent = voidrl.train("ppo", env=env_id, steps=steps, run_dir=str(run_dir), progress=False)
        assert (run_dir / "checkpoint.pt").exists() and (run_dir / "metrics.csv").exists()
        assert len(agent.evaluate(episodes=2)) == 2
