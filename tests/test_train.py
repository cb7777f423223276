"""The training loop: determinism under a seed, logs."""

import pytest
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



def test_collector_draws_mixture_actions_from_the_persistent_uniforms():
    from voidrl.envs import make_env
    from voidrl.envs.factory import EnvConfig
    from voidrl.nets.actor_critic import ActorCritic
    from voidrl.nets.persistence import PersistentUniforms
    from voidrl.rollout import Collector, PolicySampling

    env = make_env("voidrl/InvertedPendulumFall-v5", EnvConfig(num_envs=2))
    torch.manual_seed(0)  # the same untrained weights whichever tests ran before in this process
    policy = ActorCritic((4,), env.single_action_space, continuous_policy="mixture")  # untrained: std ~0.5
    moves = {}
    for persistence in (0.99, None):
        torch.manual_seed(0)
        noise = None if persistence is None else PersistentUniforms(2, 1, persistence, torch.Generator().manual_seed(0))
        collector = Collector(env, PolicySampling(policy, 2, noise))
        collector.reset(0)
        storage = collector.make_storage(64)
        collector.collect(storage, 0)
        moves[persistence] = (storage.actions[1:] - storage.actions[:-1]).abs().mean().item()
    assert moves[0.99] < 0.3 * moves[None]


def test_persistence_state_is_checkpointed_and_resumed(tmp_path):
    from voidrl.io.checkpoint import load_checkpoint
    from voidrl.training.runs import train_from_config

    options = dict(env="voidrl/InvertedPendulumFall-v5", num_envs=2, num_steps=64, progress=False,
                   continuous_policy="mixture", action_persistence=0.9, run_dir=str(tmp_path))
    voidrl.train("ppo", steps=128, **options)
    state = load_checkpoint(tmp_path / "checkpoint.pt")["action_noise"]
    assert state["uniforms"].shape == (2, 1, 2)
    train_from_config(voidrl.make_config("ppo", steps=256, **options), resume=True)
    assert load_checkpoint(tmp_path / "checkpoint.pt")["step"] == 256


def test_the_subpackages_old_name_still_imports_the_same_modules_with_a_warning(monkeypatch):
    """``voidrl.train.X`` (the subpackage until 2026-12-08) gives ``voidrl.training.X`` itself, not a copy, and says so;
    ``voidrl.train`` stays the function."""
    import importlib
    import sys

    import voidrl
    from voidrl.training import agent

    monkeypatch.delitem(sys.modules, "voidrl.train.agent", raising=False)
    with pytest.warns(DeprecationWarning, match=r"voidrl\.train\.agent is voidrl\.training\.agent"):
        old = importlib.import_module("voidrl.train.agent")
    assert old is agent and sys.modules["voidrl.training.agent"] is agent
    with pytest.warns(DeprecationWarning, match=r"voidrl\.train\.Agent is voidrl\.training\.Agent"):
        from voidrl.train import Agent
    assert Agent is agent.Agent
    assert callable(voidrl.train) and voidrl.train.__module__ == "voidrl"
