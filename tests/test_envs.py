"""Environment factory: shapes, dtypes, episode statistics across auto-resets, errors."""

import numpy as np
import pytest
import torch

from voidrl.envs import EnvConfig, UnknownEnvironment, list_env_ids, make_env, suite_of
from voidrl.training.preflight import check_task_fit


def run_random(env, steps, seed=0):
    torch.manual_seed(seed)
    obs = env.reset(seed)
    history = []
    for _ in range(steps):
        space = env.single_action_space
        if hasattr(space, "n"):
            actions = torch.randint(0, int(space.n), (env.num_envs,))
        else:
            actions = torch.rand(env.num_envs, *space.shape) * 2 - 1
        step = env.step(actions)
        history.append((obs, actions, step))
        obs = step.obs
    return history


def test_cartpole_same_step_reset_and_episode_stats():
    env = make_env("CartPole-v1", EnvConfig(num_envs=4))
    history = run_random(env, 300)
    lengths = np.zeros(4, dtype=int)
    returns_seen = []
    for _, _, step in history:
        lengths += 1
        done = (step.terminated | step.truncated).numpy()
        for i in np.flatnonzero(done):
            final, reset = step.final_obs[i], step.obs[i]
            assert step.terminated[i]  # random play never reaches 500 steps
            assert abs(final[0]) > 2.4 or abs(final[2]) > 0.2094  # outside the bounds: the true last state
            assert reset.abs().max() <= 0.05  # a fresh reset state
        assert step.episode_envs.tolist() == np.flatnonzero(done).tolist()
        assert step.episode_lengths.tolist() == lengths[done].tolist()
        assert step.episode_returns.tolist() == lengths[done].astype(float).tolist()  # reward 1 per step
        returns_seen += step.episode_returns.tolist()
        lengths[done] = 0
        not_done = ~done
        assert torch.equal(step.final_obs[not_done], step.obs[not_done])
    assert len(returns_seen) > 20


def test_time_limit_is_truncation_with_true_final_observation():
    env = make_env("CartPole-v1", EnvConfig(num_envs=2, max_episode_steps=5))
    history = run_random(env, 12)
    for t, (obs, _, step) in enumerate(history):
        if t % 5 == 4:
            assert step.truncated.all() and not step.terminated.any()
            assert step.episode_lengths.tolist() == [5, 5]
            assert not torch.equal(step.final_obs, step.obs)
        else:
            assert not step.truncated.any()


def test_mujoco_halfcheetah_truncates_at_1000_with_float32_observations():
    env = make_env("HalfCheetah-v5", EnvConfig(num_envs=1))
    history = run_random(env, 1000)
    assert history[0][0].dtype == torch.float32 and history[0][0].shape == (1, 17)
    assert not any(step.truncated.any() for _, _, step in history[:-1])
    last = history[-1][2]
    assert last.truncated.all() and not last.terminated.any()
    assert last.episode_lengths.tolist() == [1000]
    total = sum(step.reward.item() for _, _, step in history)
    assert last.episode_returns.item() == pytest.approx(total, rel=1e-4)


def test_minatar_pixels_are_uint8_channels_first():
    env = make_env("MinAtar/Breakout-v1", EnvConfig(num_envs=3))
    history = run_random(env, 200)
    obs = history[-1][2].obs
    assert obs.dtype == torch.uint8 and obs.shape == (3, 4, 10, 10)
    assert set(obs.unique().tolist()) <= {0, 255}
    assert sum(len(step.episode_returns) for _, _, step in history) > 0


def test_minigrid_views_are_one_hot_planes_of_object_colour_and_state():
    env = make_env("MiniGrid-DoorKey-5x5-v0", EnvConfig(num_envs=2))
    obs = env.reset(0)
    assert obs.dtype == torch.uint8 and obs.shape == (2, 11 + 6 + 3, 7, 7)
    import gymnasium as gym

    raw, _ = gym.make("MiniGrid-DoorKey-5x5-v0").reset(seed=0)
    image = torch.from_numpy(raw["image"]).long()
    planes = obs[0].long() // 255
    for channel, (start, size) in enumerate(((0, 11), (11, 6), (17, 3))):  # exactly one plane set per cell, the index's
        assert torch.equal(planes[start:start + size].argmax(0), image[..., channel])
        assert torch.equal(planes[start:start + size].sum(0), torch.ones(7, 7, dtype=torch.long))
    history = run_random(env, 300)
    assert any(step.truncated.any() or step.terminated.any() for _, _, step in history)


def test_minigrid_planes_match_a_cell_by_cell_one_hot_reference():
    """Every view of random play in DoorKey (keys, doors open, closed and locked, walls, the goal) against planes set
    one cell at a time."""
    import gymnasium as gym
    from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX, STATE_TO_IDX

    from voidrl.envs.gym_backend import MiniGridPlanes

    suite_of("MiniGrid-DoorKey-8x8-v0")  # registers MiniGrid's ids
    env = MiniGridPlanes(gym.make("MiniGrid-DoorKey-8x8-v0"))
    raw, _ = env.env.reset(seed=0)
    rng = np.random.default_rng(0)
    views, kinds = [], set()
    for _ in range(400):
        views.append(raw)
        kinds.update(map(tuple, raw["image"].reshape(-1, 3)[:, [0, 2]].tolist()))
        raw, _, terminated, truncated, _ = env.env.step(int(rng.integers(env.action_space.n)))
        if terminated or truncated:
            raw, _ = env.env.reset()
    firsts = (0, len(OBJECT_TO_IDX), len(OBJECT_TO_IDX) + len(COLOR_TO_IDX))
    for view in views:
        expected = np.zeros((len(OBJECT_TO_IDX) + len(COLOR_TO_IDX) + len(STATE_TO_IDX), 7, 7), np.uint8)
        for row in range(7):
            for column in range(7):
                for first, index in zip(firsts, view["image"][row, column]):
                    expected[first + index, row, column] = 255
        planes = env.observation(view)
        assert planes.dtype == np.uint8 and env.observation_space.contains(planes)
        np.testing.assert_array_equal(planes, expected)
    assert {(OBJECT_TO_IDX["door"], STATE_TO_IDX["locked"]), (OBJECT_TO_IDX["key"], 0)} <= kinds


def test_atari_preset_uint8_frames_and_full_action_space():
    env = make_env("ALE/MsPacman-v5", EnvConfig(num_envs=2))
    obs = env.reset(0)
    assert obs.dtype == torch.uint8 and obs.shape == (2, 4, 84, 84)
    assert env.single_action_space.n == 18


def test_atari_episodic_life_terminates_on_life_loss_but_reports_whole_games():
    """Same seed, same actions: training episodes end at each life loss, reported returns are per game."""
    steps = 1500
    actions = torch.randint(0, 18, (steps, 2), generator=torch.Generator().manual_seed(0))

    def play(episodic_life):
        env = make_env("ALE/MsPacman-v5", EnvConfig(num_envs=2, episodic_life=episodic_life))
        env.reset(7)
        terminations, episodes, raw_total = 0, [], 0.0
        for t in range(steps):
            step = env.step(actions[t])
            terminations += int(step.terminated.sum())
            episodes += list(zip(step.episode_envs.tolist(), step.episode_returns.tolist(), step.episode_lengths.tolist()))
            raw_total += step.reward.sum().item()
        env.close()
        return terminations, episodes, raw_total

    life_terminations, life_episodes, life_total = play(True)
    game_terminations, game_episodes, game_total = play(False)
    assert len(game_episodes) >= 2
    assert life_episodes == game_episodes  # identical games, identical reported returns and lengths
    assert life_total == game_total and life_total > 0  # raw rewards, not clipped
    assert life_terminations >= 3 * len(game_episodes)  # Ms. Pac-Man has 3 lives


def test_atari_final_observation_is_the_true_successor_on_life_loss_and_game_over():
    """A life loss does not reset the game: its successor continues the frame stack. A game over
    resets: the final observation continues the old stack and the new one does not."""
    env = make_env("ALE/MsPacman-v5", EnvConfig(num_envs=2))
    obs = env.reset(1)
    actions = torch.randint(0, 18, (1200, 2), generator=torch.Generator().manual_seed(0))
    life_losses = game_overs = 0
    for t in range(1200):
        step = env.step(actions[t])
        for i in step.terminated.nonzero().squeeze(-1).tolist():
            continued = torch.equal(step.final_obs[i, :3], obs[i, 1:])
            if i in step.episode_envs.tolist():  # a whole game ended
                game_overs += 1
                assert continued and not torch.equal(step.obs[i, :3], obs[i, 1:])
            else:
                life_losses += 1
                assert continued and torch.equal(step.final_obs[i], step.obs[i])
        obs = step.obs
    env.close()
    assert life_losses >= 4 and game_overs >= 2


def test_reward_transforms_do_not_change_reported_returns():
    base = make_env("CartPole-v1", EnvConfig(num_envs=2))
    scaled = make_env("CartPole-v1", EnvConfig(num_envs=2, reward_scale=0.1, normalize_reward=True))
    a, b = run_random(base, 100), run_random(scaled, 100)
    assert [s.episode_returns.tolist() for *_, s in a] == [s.episode_returns.tolist() for *_, s in b]
    assert not torch.equal(a[-1][2].reward, b[-1][2].reward)


def test_observation_normaliser_state_round_trip():
    env = make_env("CartPole-v1", EnvConfig(num_envs=2, normalize_observation=True))
    run_random(env, 50)
    twin = make_env("CartPole-v1", EnvConfig(num_envs=2, normalize_observation=True))
    twin.load_state_dict(env.state_dict())
    raw = torch.randn(2, 4)
    assert torch.equal(env.normalize(raw), twin.normalize(raw))


@pytest.mark.parametrize("env_id", ["CartPole-v0-nope", "ALE/NotAGame-v5", "MinAtar/Nope-v1", "MiniGrid-Nope-v0", ""])
def test_unknown_id_names_the_id_and_how_to_list(env_id):
    with pytest.raises(UnknownEnvironment, match="voidrl envs") as info:
        suite_of(env_id)
    assert repr(env_id) in str(info.value)


@pytest.mark.parametrize("env_id,suite", [("CartPole-v1", "classic"), ("ALE/MsPacman-v5", "atari"),
                                          ("MsPacmanNoFrameskip-v4", "atari"), ("Hopper-v5", "mujoco"),
                                          ("MinAtar/Breakout-v1", "minatar"), ("MiniGrid-DoorKey-8x8-v0", "minigrid")])
def test_suites(env_id, suite):
    assert suite_of(env_id) == suite


def test_notebook_pendulum_trains_on_fall_penalty_but_reports_the_task_return():
    env = make_env("voidrl/InvertedPendulumFall-v5", EnvConfig(num_envs=2))
    env.reset(0)
    rewards = []
    while True:
        step = env.step(torch.full((2, 1), 3.0))  # full push: the pole falls within a few steps
        rewards.append(step.reward)
        if len(step.episode_returns):
            break
    rewards = torch.stack(rewards)
    assert (rewards[:-1] == 0).all() and (rewards[-1] == -1).all()
    assert step.terminated.all()
    assert step.episode_returns.tolist() == [len(rewards) - 1.0] * 2  # gymnasium's +1 per step before the fall


def test_notebook_half_cheetah_is_cut_at_500_steps():
    env = make_env("voidrl/HalfCheetah500-v5", EnvConfig(num_envs=1))
    env.reset(0)
    for t in range(500):
        step = env.step(torch.zeros(1, 6))
    assert step.truncated.all() and not step.terminated.any() and step.episode_lengths.tolist() == [500]
    assert "voidrl/HalfCheetah500-v5" in list_env_ids()["voidrl"] and suite_of("voidrl/HalfCheetah500-v5") == "mujoco"


@pytest.mark.parametrize("limit,push,ends", [(6, 0.0, "truncated"), (None, 3.0, "terminated")])
def test_action_repeat_sums_the_rewards_of_its_steps_and_stops_where_an_episode_ends(limit, push, ends):
    """Each decision is 4 steps of the plain env with that action, rewards summed; the time limit (at step 6) or a fall
    (a full push topples the pole within 4 steps) inside the repeat ends it there, the two flags kept apart."""
    config = EnvConfig(num_envs=1, max_episode_steps=limit)
    plain = make_env("InvertedPendulum-v5", config)
    repeated = make_env("InvertedPendulum-v5", EnvConfig(num_envs=1, max_episode_steps=limit, action_repeat=4))
    assert (plain.action_repeat, repeated.action_repeat) == (1, 4)
    plain.reset(0), repeated.reset(0)
    action = torch.full((1, 1), push)
    decisions, steps_taken = 0, []
    while True:
        step = repeated.step(action)
        decisions += 1
        reward = 0.0
        for taken in range(1, 5):
            inner = plain.step(action)
            reward += inner.reward.item()
            if (inner.terminated | inner.truncated).any():
                break
        steps_taken.append(taken)
        assert step.reward.item() == pytest.approx(reward)
        assert torch.equal(step.final_obs, inner.final_obs)
        assert torch.equal(step.terminated, inner.terminated) and torch.equal(step.truncated, inner.truncated)
        if len(step.episode_returns):
            break
    assert steps_taken[-1] < 4 and all(taken == 4 for taken in steps_taken[:-1])  # it ended inside a repeat
    assert bool(getattr(step, ends)) and not bool(step.truncated if ends == "terminated" else step.terminated)
    assert step.episode_returns.item() == pytest.approx(inner.episode_returns.item())
    assert step.episode_lengths.tolist() == [decisions]  # lengths count decisions


def test_videos_of_repeated_actions_play_in_real_time():
    env = make_env("InvertedPendulum-v5", EnvConfig(num_envs=1, action_repeat=4), screens=True)
    assert env.screen_fps == 25 / 4  # the model's 25 steps a second, one screen per 4
    env.close()


def test_action_repeat_is_refused_on_atari_which_already_skips_frames():
    with pytest.raises(ValueError, match="action_repeat must be 1 on Atari, which already repeats each action for 4 frames, got 4"):
        check_task_fit(EnvConfig(action_repeat=4), "ALE/Pong-v5", suite_of("ALE/Pong-v5"))
    with pytest.raises(ValueError, match="action_repeat must be a positive integer, got 0"):
        EnvConfig(action_repeat=0).validate()


def test_previous_action_reward_appends_the_step_that_led_to_each_observation_and_zeros_where_an_episode_begins():
    plain = make_env("CartPole-v1", EnvConfig(num_envs=3))
    env = make_env("CartPole-v1", EnvConfig(num_envs=3, previous_action_reward=True))
    assert env.single_observation_space.shape == (4 + 2 + 1,)
    obs, plain_obs = env.reset(seed=4), plain.reset(seed=4)
    assert torch.equal(obs[:, :4], plain_obs) and not obs[:, 4:].any()
    generator, begun_once = torch.Generator().manual_seed(0), False
    for _ in range(60):
        actions = torch.randint(0, 2, (3,), generator=generator)
        step, plain_step = env.step(actions), plain.step(actions)
        begins = plain_step.terminated | plain_step.truncated
        assert torch.equal(step.obs[:, :4], plain_step.obs) and torch.equal(step.final_obs[:, :4], plain_step.final_obs)
        expected = torch.cat([torch.nn.functional.one_hot(actions, 2).float(), plain_step.reward.reshape(-1, 1)], 1)
        assert torch.equal(step.final_obs[:, 4:], expected)  # the episode's true last observation, with what led to it
        assert torch.equal(step.obs[:, 4:], torch.where(begins.unsqueeze(1), 0.0, expected))
        begun_once |= bool(begins.any())
    assert begun_once


def test_previous_action_reward_passes_a_box_action_and_refuses_frames_and_reward_free_runs():
    from voidrl.cli import main

    env = make_env("Pendulum-v1", EnvConfig(num_envs=2, previous_action_reward=True))
    env.reset(seed=0)
    step = env.step(torch.tensor([[0.5], [-1.5]]))
    assert env.single_observation_space.shape == (3 + 1 + 1,)
    assert torch.equal(step.obs[:, 3], torch.tensor([0.5, -1.5])) and torch.equal(step.obs[:, 4], step.reward)
    with pytest.raises(ValueError, match="previous_action_reward appends to vector observations"):
        make_env("MinAtar/Breakout-v1", EnvConfig(num_envs=1, previous_action_reward=True))
    assert main(["pretrain", "ppg", "--env", "CartPole-v1", "--previous-action-reward", "--steps", "4096"]) == 2
