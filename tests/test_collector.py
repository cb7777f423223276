"""The collector: storage layout, dtypes, and which value bootstraps each transition."""

import pytest
import torch

from voidrl.envs import EnvConfig, make_env
from voidrl.envs.wrappers import VecEnvWrapper
from voidrl.nets import ActorCritic
from voidrl.nets.actor_critic import first_step_inputs
from voidrl.rollout import Collector, PolicySampling, RolloutStorage


class Recorder(VecEnvWrapper):
    def __init__(self, env):
        super().__init__(env)
        self.steps = []

    def step(self, actions):
        step = self.env.step(actions)
        self.steps.append(step)
        return step


def collect(env_id, num_steps, num_envs, **env_options):
    torch.manual_seed(0)
    env = Recorder(make_env(env_id, EnvConfig(num_envs=num_envs, **env_options)))
    policy = ActorCritic(env.single_observation_space.shape, env.single_action_space)
    collector = Collector(env, PolicySampling(policy, num_envs))
    collector.reset(0)
    storage = collector.make_storage(num_steps)
    stats = collector.collect(storage, start_step=100)
    return env, policy, collector, storage, stats


def test_bootstrap_values_follow_termination_truncation_and_cut():
    # a 16-step limit ends some episodes by truncation (9 here) and lets others terminate (6): both branches run
    env, policy, collector, storage, stats = collect("CartPole-v1", 80, 3, max_episode_steps=16)
    with torch.no_grad():
        for t, step in enumerate(env.steps):
            for n in range(3):
                if step.terminated[n]:
                    assert storage.next_values[t, n] == 0.0  # [H = 1]
                elif step.truncated[n]:
                    expected = policy.bootstrap_values(step.final_obs[n : n + 1], policy.initial_state(1))[0]
                    reset_value = policy.bootstrap_values(step.obs[n : n + 1], policy.initial_state(1))[0]
                    torch.testing.assert_close(storage.next_values[t, n], expected)
                    assert expected != reset_value
                elif t + 1 < storage.num_steps:
                    assert storage.next_values[t, n] == storage.values[t + 1, n]
                else:
                    torch.testing.assert_close(storage.next_values[t, n], policy.bootstrap_values(collector.obs[n : n + 1], policy.initial_state(1))[0])
    assert storage.truncated.sum() >= 3 and storage.terminated.sum() >= 3


def test_storage_layout_and_episode_steps():
    env, policy, _, storage, stats = collect("CartPole-v1", 50, 4)
    assert storage.obs.shape == (50, 4, 4) and storage.actions.dtype == torch.long
    # the stored observation is the one each action was chosen on
    first = env.steps[0]
    torch.testing.assert_close(storage.obs[1], first.obs)
    ends = [100 + (t + 1) * 4 for t, step in enumerate(env.steps) for _ in step.episode_returns.tolist()]
    assert stats.episode_steps == ends
    with torch.no_grad():
        dist, values, _ = policy(*first_step_inputs(policy, storage.obs[3]))
    torch.testing.assert_close(storage.log_probs[3], dist.log_prob(storage.actions[3]))
    torch.testing.assert_close(storage.values[3, :, 0], values)


def test_atari_rollout_stays_uint8():
    _, _, _, storage, _ = collect("ALE/MsPacman-v5", 8, 2)
    assert storage.obs.dtype == torch.uint8
    big = RolloutStorage(256, 16, (4, 84, 84), torch.uint8, (), torch.long)
    assert big.obs.element_size() * big.obs.nelement() == 256 * 16 * 4 * 84 * 84  # 115.6 MB, no float copy


def test_next_obs_are_the_true_successors_and_on_step_sees_them():
    torch.manual_seed(0)
    env = Recorder(make_env("CartPole-v1", EnvConfig(num_envs=3, max_episode_steps=7)))
    policy = ActorCritic(env.single_observation_space.shape, env.single_action_space)
    transitions = []
    collector = Collector(env, PolicySampling(policy, 3), on_step=transitions.append)
    collector.reset(0)
    storage = collector.make_storage(20)
    collector.collect(storage, start_step=0)
    expected = torch.stack([step.final_obs for step in env.steps])
    assert torch.equal(storage.next_obs(0, 20), expected)
    assert torch.equal(storage.next_obs(5, 12), expected[5:12])
    assert torch.equal(torch.stack([t.next_obs for t in transitions]), expected)
    assert torch.equal(torch.stack([t.actions for t in transitions]), storage.actions)
    assert torch.equal(torch.stack([t.obs for t in transitions]), storage.obs)
    assert torch.equal(torch.stack([t.terminated for t in transitions]), storage.terminated)
    assert torch.equal(torch.stack([t.truncated for t in transitions]), storage.truncated)
    assert storage.final_obs  # episodes did end inside the rollout


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the pinned-memory path needs CUDA")
def test_observations_reach_the_gpu_intact_through_the_reused_pinned_buffer():
    from voidrl.rollout.collector import HostToDevice

    to_device = HostToDevice(torch.device("cuda"))
    for _ in range(3):  # one buffer, refilled each call; reading the result back waits for its copy, as acting does
        frame = torch.randint(0, 256, (16, 4, 84, 84), dtype=torch.uint8)
        on_gpu = to_device(frame)
        assert on_gpu.device.type == "cuda" and torch.equal(on_gpu.cpu(), frame)
    assert to_device.pinned.is_pinned()


@pytest.mark.parametrize("env_id", ["CartPole-v1", "Pendulum-v1"])
def test_a_policy_with_nan_parameters_is_refused_at_the_end_of_its_rollout(env_id):
    env = make_env(env_id, EnvConfig(num_envs=2))
    policy = ActorCritic(env.single_observation_space.shape, env.single_action_space)
    with torch.no_grad():
        policy.policy_head.bias[0] = float("nan")
    collector = Collector(env, PolicySampling(policy, 2))
    collector.reset(0)
    with pytest.raises(FloatingPointError, match=r"non-finite log-probabilities \(first at rollout step 0, environment 0\)"):
        collector.collect(collector.make_storage(8), start_step=0)
