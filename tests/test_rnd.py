"""RND as a reward plug-in: observation and reward normalisation against numpy, rewards that fall where the
predictor has trained, a fixed target; PPO's second value head (two GAEs combined, the intrinsic one across
episode ends) and the run through the command line with resume."""

import copy

import gymnasium as gym
import numpy as np
import pytest
import torch

from voidrl.algos import PPG, PPO, PPGConfig, PPOConfig
from voidrl.algos.base import rollout_gae
from voidrl.cli import main
from voidrl.envs import make_env
from voidrl.envs.factory import EnvConfig
from voidrl.intrinsic.rnd import RNDConfig, RNDReward
from voidrl.io.checkpoint import load_checkpoint
from voidrl.math import generalized_advantage_estimate
from voidrl.nets.actor_critic import first_step_inputs
from voidrl.rollout import Collector, RolloutStorage
from voidrl.rollout.collector import fill_next_values

OBS = (4,)


def rollout_of(next_states, T=8, N=4, seed=0):
    """A rollout whose true next observations are ``next_states [T * N, 4]`` (no episode ends)."""
    g = torch.Generator().manual_seed(seed)
    storage = RolloutStorage(T, N, OBS, torch.float32, (), torch.long)
    states = next_states.view(T, N, *OBS)
    storage.obs[1:] = states[:-1]
    storage.obs[0] = torch.randn(N, *OBS, generator=g)
    storage.last_obs.copy_(states[-1])
    return storage


def plugin(**options):
    torch.manual_seed(0)
    return RNDReward(RNDConfig(**options), OBS)


def test_warm_up_fits_the_observation_statistics_to_random_steps_and_normalize_matches_numpy():
    env = make_env("CartPole-v1", EnvConfig(num_envs=4))
    rnd = plugin(observation_warmup_steps=200)
    seen = []
    original_step, original_reset = env.step, env.reset

    def step(actions):
        result = original_step(actions)
        seen.append(result.obs.clone())
        return result

    def reset(seed):
        obs = original_reset(seed)
        seen.append(obs.clone())
        return obs

    env.step, env.reset = step, reset
    rnd.warm_up(env, seed=3)
    env.close()
    observed = torch.cat(seen).double().numpy()
    assert len(seen) == 1 + 50  # the reset, then 200 / 4 vector steps
    np.testing.assert_allclose(rnd.observation_stats.mean.numpy(), observed.mean(0), rtol=1e-10)
    np.testing.assert_allclose(rnd.observation_stats.var.numpy(), observed.var(0), rtol=1e-10)
    x = torch.randn(16, 4) * 3
    expected = np.clip((x.double().numpy() - observed.mean(0)) / np.sqrt(observed.var(0)), -5, 5)
    np.testing.assert_allclose(rnd.distillation.standardize(x).numpy(), expected, rtol=1e-5, atol=1e-5)
    counted = float(rnd.observation_stats.count)
    rnd.warm_up(make_env("CartPole-v1", EnvConfig(num_envs=4)), seed=3)
    assert float(rnd.observation_stats.count) == counted, "a second warm-up (a resumed run) must not add steps"


def test_rewards_are_prediction_errors_over_the_std_of_their_running_discounted_sums():
    rnd = plugin(observation_warmup_steps=0, return_gamma=0.9)
    rnd.observation_stats.update(torch.randn(100, 4))
    sums_so_far, previous = [], torch.zeros(4)
    for seed in range(3):
        rollout = rollout_of(torch.randn(32, 4, generator=torch.Generator().manual_seed(seed)))
        before = copy.deepcopy(rnd)
        with torch.no_grad():
            errors = before.distillation.errors(rollout.next_obs(0, 8).flatten(0, 1)).view(8, 4)
        rewards, metrics = rnd.intrinsic_rewards(rollout)
        for t in range(8):  # the slow way: one step at a time
            previous = 0.9 * previous + errors[t]
            sums_so_far.append(previous.clone())
        std = np.sqrt(torch.stack(sums_so_far).double().numpy().var())
        torch.testing.assert_close(rewards, errors / std, rtol=1e-5, atol=1e-7)
        assert metrics["rnd/return_std"] == pytest.approx(std, rel=1e-5)


def test_states_the_predictor_has_trained_on_earn_less_than_new_ones():
    rnd = plugin(observation_warmup_steps=0, predictor_update_proportion=1.0, predictor_learning_rate=1e-3)
    rnd.observation_stats.update(torch.randn(1000, 4) * 2)
    familiar = torch.randn(32, 4, generator=torch.Generator().manual_seed(1)) * 0.3 + 1.0
    novel = torch.randn(32, 4, generator=torch.Generator().manual_seed(2)) * 0.3 - 1.0

    def errors(states):
        with torch.no_grad():
            return rnd.distillation.errors(states).mean()

    familiar_before, novel_before = errors(familiar), errors(novel)
    target_before = copy.deepcopy(rnd.distillation.target.state_dict())
    for _ in range(30):
        rnd.intrinsic_rewards(rollout_of(familiar))
    familiar_drop, novel_drop = errors(familiar) / familiar_before, errors(novel) / novel_before
    assert familiar_drop < 0.2 and familiar_drop < 0.5 * novel_drop, (familiar_drop, novel_drop)
    assert all(torch.equal(target_before[name], value) for name, value in rnd.distillation.target.state_dict().items()), "the target stays fixed"


def slow_non_episodic_gae(rewards, values, bootstrap, gamma, lam):
    """Each step's advantage summed forward to the rollout's end, episode ends ignored: ``[T, N]``."""
    T = rewards.shape[0]
    following = torch.cat([values[1:], bootstrap.unsqueeze(0)])
    deltas = rewards + gamma * following - values
    advantages = torch.zeros_like(values)
    for t in range(T):
        for k in range(t, T):
            advantages[t] += (gamma * lam) ** (k - t) * deltas[k]
    return advantages


def two_head_rollout(seed: int, T: int = 6, N: int = 2) -> tuple[RolloutStorage, torch.Tensor]:
    """A rollout of a policy with two value heads: random rewards and values ``[T, N, 2]``, a termination and a
    truncation (its bootstrap stored before ``fill_next_values``), and each head's values of the observation after
    the rollout ``[N, 2]``, which it returns."""
    g = torch.Generator().manual_seed(seed)
    rollout = RolloutStorage(T, N, OBS, torch.float32, (), torch.long, value_heads=2)
    for name in ("rewards", "intrinsic_rewards", "values", "next_values"):
        getattr(rollout, name).copy_(torch.randn(getattr(rollout, name).shape, generator=g))
    rollout.terminated[2, 0] = True
    rollout.truncated[4, 1] = True
    last_values = torch.randn(N, 2, generator=g)
    fill_next_values(rollout, last_values)
    return rollout, last_values


@pytest.mark.parametrize("seed", [0, 1])
def test_two_heads_combine_an_episodic_task_gae_and_a_non_episodic_intrinsic_gae(seed):
    rollout, last_values = two_head_rollout(seed)
    rollout.reward_coefs = (2.0, 0.5)
    advantages, returns = rollout_gae(rollout, (0.999, 0.9), 0.95)
    task_advantages, task_returns = generalized_advantage_estimate(
        rollout.rewards, rollout.values[..., 0], rollout.next_values[..., 0], rollout.terminated, rollout.truncated, 0.999, 0.95)
    intrinsic_advantages = slow_non_episodic_gae(rollout.intrinsic_rewards, rollout.values[..., 1], last_values[:, 1], 0.9, 0.95)
    torch.testing.assert_close(advantages, 2.0 * task_advantages + 0.5 * intrinsic_advantages)
    torch.testing.assert_close(returns, torch.stack([task_returns, intrinsic_advantages + rollout.values[..., 1]], -1))


def test_the_intrinsic_head_runs_on_across_episode_ends():
    """``fill_next_values``: the task head's next value is 0 after the termination and the stored bootstrap after
    the truncation; the intrinsic head's is the next step's value (the next episode's first state) either way."""
    rollout, last_values = two_head_rollout(0)
    values, next_values = rollout.values, rollout.next_values
    torch.testing.assert_close(next_values[:-1, :, 1], values[1:, :, 1])
    torch.testing.assert_close(next_values[-1], last_values)
    assert next_values[2, 0, 0] == 0.0 and next_values[4, 1, 0] != values[5, 1, 0]


def test_two_value_heads_without_a_plug_in_are_refused():
    rollout, _ = two_head_rollout(0)
    with pytest.raises(ValueError, match="two value heads need a reward plug-in's rewards"):
        rollout_gae(rollout, (0.999, 0.9), 0.95)


def test_the_collector_records_both_heads_and_their_bootstrap():
    env = make_env("CartPole-v1", EnvConfig(num_envs=3))
    torch.manual_seed(0)
    ppo = PPO(PPOConfig(num_steps=5, intrinsic_gamma=0.99), (4,), env.single_action_space)
    collector = Collector(env, ppo.acting(3))
    collector.reset(0)
    storage = collector.make_storage(5)
    collector.collect(storage, 0)
    env.close()
    assert storage.values.shape == storage.next_values.shape == (5, 3, 2)
    with torch.no_grad():
        values = ppo.policy.critic_values(*first_step_inputs(ppo.policy, storage.obs.flatten(0, 1)))
        torch.testing.assert_close(storage.values, values.view(5, 3, 2))
        torch.testing.assert_close(storage.next_values[-1, :, 1], ppo.policy.bootstrap_values(storage.last_obs, ppo.policy.initial_state(3))[:, 1])


def test_the_intrinsic_value_loss_trains_only_its_head_and_the_critic_body():
    torch.manual_seed(0)
    policy = PPO(PPOConfig(num_steps=5, intrinsic_gamma=0.99), (4,), gym.spaces.Discrete(2)).policy
    _, values, _ = policy.forward_heads(*first_step_inputs(policy, torch.randn(8, 4)))
    values[..., 1].pow(2).mean().backward()
    assert policy.value_head.weight.grad is None or not policy.value_head.weight.grad.any()
    assert policy.intrinsic_value_head.weight.grad.abs().sum() > 0
    assert all(p.grad is None or not p.grad.any() for p in policy.actor_body.parameters())


def test_ppo_with_rnd_trains_and_resumes_through_the_command_line(tmp_path):
    run = ["train", "ppo", "--env", "CartPole-v1", "--intrinsic", "rnd", "--intrinsic-gamma", "0.99", "--gamma", "0.999",
           "--num-envs", "4", "--num-steps", "64", "--observation-warmup-steps", "256", "--no-progress",
           "--run-dir", str(tmp_path / "run")]
    assert main([*run, "--steps", "512"]) == 0
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["intrinsic"]
    assert float(saved["observation_stats"]["count"]) == 260 + 512  # warm-up (65 vector steps of 4) and the rollouts' next states
    assert main([*run, "--steps", "768", "--resume"]) == 0
    resumed = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["intrinsic"]
    assert float(resumed["observation_stats"]["count"]) == 260 + 768, "no second warm-up on resume"
    assert not torch.equal(resumed["running_sums"], saved["running_sums"])


PPG_TWO_HEADS = PPGConfig(num_steps=8, intrinsic_gamma=0.99, policy_iterations=1, minibatch_size=8, aux_minibatch_size=8)


def ppg_two_heads_and_rollout(reward_coefs: tuple[float, float]) -> tuple[PPG, RolloutStorage]:
    """A PPG with task and intrinsic value heads (seed 0) and one CartPole rollout of 8 x 3 steps it collected,
    holding random intrinsic rewards weighted against the task's by ``reward_coefs``."""
    env = make_env("CartPole-v1", EnvConfig(num_envs=3))
    torch.manual_seed(0)
    ppg = PPG(PPG_TWO_HEADS, (4,), env.single_action_space)
    collector = Collector(env, ppg.acting(3))
    collector.reset(0)
    storage = collector.make_storage(8)
    collector.collect(storage, 0)
    env.close()
    storage.intrinsic_rewards = torch.rand(8, 3)
    storage.reward_coefs = reward_coefs
    return ppg, storage


def test_ppg_critic_learns_both_heads_and_its_auxiliary_buffer_keeps_both_returns():
    ppg, storage = ppg_two_heads_and_rollout((2.0, 1.0))
    _, returns = rollout_gae(storage, (0.99, 0.99), 0.95)
    task_returns, intrinsic_returns = returns.unbind(-1)
    obs = storage.obs.flatten(0, 1)
    targets = returns.flatten(0, 1)
    one_step = {name: field.flatten(0, 1)  # [T * N, ...], a feed-forward policy's minibatch of all the steps
                for name, field in ({"obs": storage.obs} | ppg.sequence_fields(storage)).items()}
    ppg.critic.zero_grad()
    loss = ppg._critic_backward(one_step | {"returns": targets})
    with torch.no_grad():
        values = ppg.policy.critic_values(*first_step_inputs(ppg.policy, obs))
    expected = 0.5 * (values[:, 0] - task_returns.flatten()).pow(2).mean() + 0.5 * (values[:, 1] - intrinsic_returns.flatten()).pow(2).mean()
    torch.testing.assert_close(loss, expected)
    assert all(p.grad is None or not p.grad.any() for p in ppg.policy.actor_parameters())
    ppg.aux_buffer.clear()
    ppg.update(storage, 0.0)  # the auxiliary phase follows at once (policy_iterations 1)
    assert len(ppg.aux_buffer) == 0
    ppg.aux_buffer.add(storage.obs, returns, ppg.sequence_fields(storage))
    assert ppg.aux_buffer.all_returns().shape == (24, 2)


def test_a_reward_free_ppg_with_two_value_heads_keeps_the_task_returns_out_of_its_policy():
    """With the task reward weighted 0 the auxiliary head distils the intrinsic returns: the policy after a whole
    update (policy phase, then the auxiliary phase) is the same whatever task rewards the rollout holds, while the
    critic's task head still learns them. Distilling the task returns (the old target) moves the policy."""
    ppg, storage = ppg_two_heads_and_rollout((0.0, 1.0))
    other_task = copy.deepcopy(storage)
    other_task.rewards = 100.0 * torch.rand(8, 3)
    updated = []
    for rollout in (storage, other_task):
        algo = PPG(PPG_TWO_HEADS, (4,), gym.spaces.Discrete(2))
        algo.load_state_dict(ppg.state_dict())
        torch.manual_seed(1)
        algo.update(rollout, 0.0)
        updated.append(algo.policy)
    for name, param in updated[0].named_parameters():
        if name.startswith(("critic_body", "value_head", "intrinsic_value_head")):
            continue
        assert torch.equal(param, dict(updated[1].named_parameters())[name]), f"{name} depends on the task rewards"
    assert not torch.equal(updated[0].value_head.weight, updated[1].value_head.weight)


def test_ppg_with_rnd_trains_and_resumes_through_the_command_line(tmp_path):
    run = ["train", "ppg", "--env", "CartPole-v1", "--intrinsic", "rnd", "--intrinsic-gamma", "0.99", "--num-envs", "4",
           "--num-steps", "32", "--policy-iterations", "2", "--observation-warmup-steps", "64", "--no-progress",
           "--run-dir", str(tmp_path / "run")]
    assert main([*run, "--steps", "256"]) == 0
    header = (tmp_path / "run" / "metrics.csv").read_text().splitlines()[0].split(",")
    assert {"rnd/intrinsic_reward", "aux/aux_value_loss", "train/value_loss"} <= set(header)
    assert main([*run, "--steps", "384", "--resume"]) == 0


def test_intrinsic_gamma_without_a_plug_in_is_a_one_line_error(tmp_path, capsys):
    assert main(["train", "ppo", "--intrinsic-gamma", "0.99", "--no-progress", "--run-dir", str(tmp_path / "bad")]) == 2
    assert "intrinsic_gamma needs a reward plug-in (--intrinsic), whose rewards its value head learns" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()
