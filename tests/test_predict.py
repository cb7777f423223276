"""``Agent.predict``: raw observations, one or a batch, numpy or torch, in; numpy actions (and the next recurrent state)
out, equal to the batched ``act`` / ``act_with`` on the normalised batch."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import voidrl
from tests.agents import untrained_agent
from voidrl.algos.roles import Memory


def normalized(agent, obs):
    normalizer = agent.interface.normalizer
    return torch.as_tensor(obs) if normalizer is None else normalizer.normalize(torch.as_tensor(obs))


def random_observations(agent, count, seed=0):
    """``count`` raw observations ``[count, *obs_shape]``: uint8 frames, or vectors of std 2 around 0."""
    generator = torch.Generator().manual_seed(seed)
    shape = (count, *agent.interface.observation_space.shape)
    if agent.interface.observation_space.dtype == np.uint8:
        return torch.randint(0, 256, shape, dtype=torch.uint8, generator=generator).numpy()
    return (2.0 * torch.randn(shape, generator=generator)).numpy()


def test_a_new_users_loop_on_gymnasiums_observations(tmp_path):
    torch.manual_seed(0)
    agent = voidrl.train("ppo", env="CartPole-v1", steps=512, num_envs=2, num_steps=128, normalize_observation=True,
                         run_dir=str(tmp_path / "run"), progress=False)
    env = gym.make("CartPole-v1")
    obs, _ = env.reset(seed=0)
    for _ in range(20):
        action, state = agent.predict(obs)
        assert action.shape == () and state is None
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            obs, _ = env.reset()
    env.close()


@pytest.mark.parametrize("algo,env,options", [
    ("ppo", "CartPole-v1", {"normalize_observation": True}),
    ("ppo", "MinAtar/Breakout-v1", {}),
    ("a2c", "Pendulum-v1", {"normalize_observation": True, "continuous_policy": "tanh_gaussian"}),
], ids=["vector", "image", "box"])
def test_predict_one_and_a_batch_equals_the_batched_act(algo, env, options):
    torch.manual_seed(0)
    agent = untrained_agent(algo, env, **options)
    obs = random_observations(agent, 5)
    expected = agent.act(normalized(agent, obs)).numpy()
    for batch in (obs, torch.as_tensor(obs)):
        actions, state = agent.predict(batch)
        assert isinstance(actions, np.ndarray) and state is None
        np.testing.assert_array_equal(actions, expected)
    for index in range(len(obs)):
        action, _ = agent.predict(obs[index])
        assert action.shape == expected.shape[1:]
        np.testing.assert_allclose(action, expected[index], rtol=1e-6)  # a batch of one may round otherwise


@pytest.mark.parametrize("algo,options", [
    ("ppo", {"memory": "lstm", "lstm_size": 16, "normalize_observation": True}),
    ("r2d2", {"lstm_size": 16, "head_size": 16}),
], ids=["recurrent-ppo", "r2d2"])
def test_a_recurrent_policy_carries_the_state_it_returns_as_act_with_does(algo, options):
    torch.manual_seed(0)
    agent = untrained_agent(algo, "voidrl/CartPoleNoVelocity-v1", **options)
    first, second = random_observations(agent, 3, seed=1), random_observations(agent, 3, seed=2)
    starts, rewards = torch.tensor([False, True, False]), torch.tensor([1.0, 0.0, 1.0])
    memory = Memory(agent.recurrent_act(), agent.policy.initial_state(3), 3)
    expected_first = agent.act_with(memory, normalized(agent, first)).numpy()
    memory.episode_start, memory.previous_reward = starts, rewards
    expected_second = agent.act_with(memory, normalized(agent, second)).numpy()

    actions, state = agent.predict(first)
    np.testing.assert_array_equal(actions, expected_first)
    actions, state = agent.predict(second, state, episode_start=starts.numpy(), previous_reward=rewards.numpy())
    np.testing.assert_array_equal(actions, expected_second)
    for got, want in zip(state, memory.state):
        assert torch.equal(got, want)

    for index in range(3):
        action, state = agent.predict(first[index])
        assert action.shape == () and state.hidden.shape[0] == 1
        assert action == expected_first[index]
        action, _ = agent.predict(second[index], state, episode_start=bool(starts[index]), previous_reward=float(rewards[index]))
        assert action == expected_second[index]


def one_line(error):
    message = str(error.value)
    assert "\n" not in message
    return message


def test_a_wrong_shape_is_refused_in_one_line_naming_the_expected_shape():
    agent = untrained_agent("ppo", "MinAtar/Breakout-v1")
    for obs in (np.zeros((4, 10)), np.zeros((2, 10, 10, 4)), np.zeros(())):
        with pytest.raises(ValueError) as error:
            agent.predict(obs)
        assert one_line(error).startswith("obs must be one observation of shape [4, 10, 10] or a batch of shape [B, 4, 10, 10], got shape")
    with pytest.raises(ValueError) as error:  # what a new user tried first: one observation to the batched act
        agent.act(np.zeros((4, 10, 10)))
    assert one_line(error) == "act takes a batch of shape [B, 4, 10, 10], got shape [4, 10, 10]; predict(obs) takes one raw observation or a batch"
    recurrent = untrained_agent("ppo", "CartPole-v1", memory="lstm", lstm_size=8)
    with pytest.raises(ValueError) as error:
        recurrent.predict(np.zeros((3, 4)), episode_start=[True, False])
    assert one_line(error) == "episode_start must be a scalar or one value per observation, shape [3]; got shape [2]"
    with pytest.raises(ValueError) as error:
        recurrent.act(torch.zeros(3, 4))
    assert "ppo policy is recurrent: act with act_with(memory, obs) or predict(obs, state)" in one_line(error)
    with pytest.raises(ValueError) as error:
        untrained_agent("r2d2", "CartPole-v1", lstm_size=8, head_size=8).predict(np.zeros(4), deterministic=False)
    assert "r2d2 acts greedily on its Q-values (in Python: deterministic must be True)" in one_line(error)
