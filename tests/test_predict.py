"""``Agent.predict``: raw observations, one or a batch, numpy or torch, in; numpy actions (and the next recurrent state)
out, equal to the batched ``act`` / ``act_with`` on the normalised batch."""

import gymnasium as gym
import numpy as np
import pytest
import torch

import voidrl
from tests.agents import untrained_agent


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
    state, episode_start = None, True
    for _ in range(20):  # the loop that serves every policy, with memory or without (whose state is empty)
        action, state = agent.predict(obs, state, episode_start)
        assert action.shape == () and state.hidden.numel() == 0
        obs, _, terminated, truncated, _ = env.step(action)
        episode_start = terminated or truncated
        if episode_start:
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
        assert isinstance(actions, np.ndarray) and state.hidden.shape == state.cell.shape == (len(obs), 0, 0)  # empty
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
    memory = agent.memory(3)
    expected_first = agent.act_with(memory, normalized(agent, first)).numpy()
    memory.episode_starts, memory.previous_reward = starts, rewards
    expected_second = agent.act_with(memory, normalized(agent, second)).numpy()

    actions, state = agent.predict(first)
    np.testing.assert_array_equal(actions, expected_first)
    actions, state = agent.predict(second, state, episode_start=starts.numpy(), previous_reward=rewards.numpy())
    np.testing.assert_array_equal(actions, expected_second)
    for got, want in zip(state, memory.state):
        assert torch.equal(got, want) and not got.requires_grad  # acting builds no autograd graph

    for index in range(3):
        action, state = agent.predict(first[index])
        assert action.shape == () and state.hidden.shape[0] == 1
        assert action == expected_first[index]
        action, _ = agent.predict(second[index], state, episode_start=bool(starts[index]), previous_reward=float(rewards[index]))
        assert action == expected_second[index]


@pytest.mark.parametrize("algo,env,options", [
    ("ppo", "CartPole-v1", {}),
    ("a2c", "Pendulum-v1", {"continuous_policy": "tanh_gaussian"}),
], ids=["categorical", "box"])
def test_sampled_predictions_repeat_after_set_random_seed_whatever_torchs_generator_holds(algo, env, options):
    agent = untrained_agent(algo, env, **options)
    obs = random_observations(agent, 64)

    def sampled(seed, global_seed):
        torch.manual_seed(global_seed)
        agent.set_random_seed(seed)
        global_state = torch.get_rng_state()
        actions = [agent.predict(obs, deterministic=False)[0] for _ in range(3)]
        assert torch.equal(torch.get_rng_state(), global_state)  # predict draws from the agent's own generator
        return actions

    first = sampled(7, global_seed=0)
    assert not np.array_equal(first[0], first[1])  # the stream goes on from call to call
    for got, want in zip(sampled(7, global_seed=1), first):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(sampled(8, global_seed=0)[0], first[0])
    # an agent made anew (as Agent.load makes one) starts from the run's seed
    agent.set_random_seed(agent.config.run.seed)
    expected = agent.predict(obs, deterministic=False)[0]
    made_anew = voidrl.Agent(agent.config, agent.policy, agent.env_state)
    np.testing.assert_array_equal(made_anew.predict(obs, deterministic=False)[0], expected)
    # greedy actions neither draw from it nor change
    stream = agent.action_generator.get_state()
    np.testing.assert_array_equal(agent.predict(obs)[0], agent.act(normalized(agent, obs)).numpy())
    assert torch.equal(agent.action_generator.get_state(), stream)
    with pytest.raises(ValueError) as error:
        agent.set_random_seed("7")
    assert one_line(error) == "seed must be an integer, got '7'"


def test_a_sampled_evaluation_repeats_for_its_seed_whatever_torchs_generator_holds(monkeypatch):
    agent = untrained_agent("ppo", "CartPole-v1")
    played = []
    act_with = agent.act_with

    def recording(memory, obs):
        actions = act_with(memory, obs)
        played.append(actions)
        return actions

    monkeypatch.setattr(agent, "act_with", recording)

    def evaluation(seed, global_seed, deterministic=False):
        torch.manual_seed(global_seed)
        played.clear()
        returns = agent.evaluate(4, deterministic=deterministic, num_envs=2, seed=seed)
        return returns, torch.cat(played).tolist()

    stream = agent.action_generator.get_state()
    returns, actions = evaluation(3, global_seed=0)
    assert evaluation(3, global_seed=1) == (returns, actions)
    assert evaluation(4, global_seed=0)[1] != actions
    assert evaluation(3, global_seed=0, deterministic=True)[1] != actions  # sampling matters on this task
    assert torch.equal(agent.action_generator.get_state(), stream)  # predict's stream is left alone


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
    assert "ppo policy carries one from step to step: act with act_with(agent.memory(B), obs) or predict(obs, state)" in one_line(error)
    with pytest.raises(ValueError) as error:
        untrained_agent("r2d2", "CartPole-v1", lstm_size=8, head_size=8).predict(np.zeros(4), deterministic=False)
    assert "r2d2 acts greedily on its Q-values (in Python: deterministic must be True)" in one_line(error)


def test_predict_refuses_what_it_cannot_act_on_in_one_line_naming_it():
    agent = untrained_agent("ppo", "CartPole-v1")
    cases = [
        (dict(obs=np.array([0.0, np.nan, 0.0, 0.0])), "obs holds NaN or infinite values (in observation [0] of the batch)"),
        (dict(obs=np.array([[0.0] * 4, [np.inf, 0, 0, 0], [0.0] * 4])), "obs holds NaN or infinite values (in observation [1] of the batch)"),
        (dict(obs=np.zeros(4), deterministic="no"), "deterministic must be True or False, got 'no'"),
        (dict(obs=np.zeros(4), state=(np.zeros(1), np.zeros(1))), "state.hidden must have shape [1, 0, 0] for 1 observation(s), got [1]"),
        (dict(obs={"x": 1}), "obs must be an array or tensor of shape [4] or [B, 4], got dict"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as error:
            agent.predict(**kwargs)
        assert one_line(error).startswith(message), one_line(error)


def test_a_recurrent_state_may_come_back_as_plain_arrays_and_a_wrong_one_is_named():
    agent = untrained_agent("ppo", "CartPole-v1", memory="lstm", lstm_size=8)
    obs = random_observations(agent, 3)
    actions, state = agent.predict(obs)
    again, again_state = agent.predict(obs, state)
    as_arrays, arrays_state = agent.predict(obs, (state.hidden.numpy(), state.cell.numpy()))  # (h, c), numpy
    np.testing.assert_array_equal(again, as_arrays)
    assert all(torch.equal(a, b) for a, b in zip(again_state, arrays_state))
    cases = [
        (dict(state=None, episode_start=[2, 0, 0]), "episode_start must be True/False (or 1/0) per observation, got [2, 0, 0]"),
        (dict(state={"h": 1}), "state must be the state predict returned, a LSTMState(hidden, cell) for 3 observation(s), or "
                               "None to start episodes; got dict"),
        (dict(state=(state.hidden[:2], state.cell[:2])), "state.hidden must have shape [3, 2, 8] for 3 observation(s), got [2, 2, 8]"),
        (dict(state=(state.hidden, "c")), "state.cell must be an array or tensor of shape [3, 2, 8], got str"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as error:
            agent.predict(obs, **kwargs)
        assert one_line(error) == message


def test_evaluate_and_save_refuse_bad_arguments_before_any_work(tmp_path):
    agent = untrained_agent("ppo", "CartPole-v1")
    for kwargs, message in [(dict(episodes=1.5), "episodes must be a positive integer, got 1.5"),
                            (dict(episodes=True), "episodes must be a positive integer, got True"),
                            (dict(episodes=2, num_envs=0), "num_envs must be a positive integer or None, got 0"),
                            (dict(episodes=2, deterministic="yes"), "deterministic must be True or False, got 'yes'")]:
        with pytest.raises(ValueError) as error:
            agent.evaluate(**kwargs)
        assert one_line(error) == message
    with pytest.raises(ValueError) as error:
        agent.save(tmp_path)
    assert one_line(error) == f"Agent.save: {str(tmp_path)!r} is a directory; give the file to write"
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError) as error:
        agent.save(tmp_path / "file" / "agent.pt")
    assert "Agent.save's folder" in one_line(error) and "is a file" in one_line(error) and ".tmp" not in one_line(error)
    with pytest.raises(ValueError) as error:
        voidrl.load(str(tmp_path))
    assert one_line(error) == f"checkpoint {str(tmp_path)!r} is a directory; give the checkpoint file in it (RUN_DIR/checkpoint.pt)"
