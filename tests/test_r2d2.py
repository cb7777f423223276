"""R2D2: the recurrent network's stepping, burn-in without gradient, exploration rates, and the
learner through the command line (train, greedy evaluation, exact resume with its replay, bad input)."""

import csv
import warnings

import gymnasium as gym
import pytest
import torch

from tests.learning import assert_majority, greedy_scores, train_seeds
from voidrl.algos import PPG, PPGConfig
from voidrl.algos.r2d2 import R2D2, R2D2Config, epsilon_ladder, trained_steps
from voidrl.cli import main
from voidrl.configs.r2d2 import PRESETS
from voidrl.io.checkpoint import load_checkpoint, save_checkpoint
from voidrl.nets.parts import load_parts
from voidrl.nets.recurrent import RecurrentQNetwork
from voidrl.replay import Sequence

SMALL = {"sequence_length": 8, "burn_in": 4, "sequence_period": 4, "lstm_size": 16, "head_size": 16, "batch_size": 6,
         "min_replay": 6, "replay_capacity": 50}


def test_unrolling_a_sequence_equals_stepping_through_it():
    torch.manual_seed(0)
    net = RecurrentQNetwork((4,), 3, lstm_size=8, head_size=8)
    obs, actions, rewards = torch.randn(6, 2, 4), torch.randint(3, (6, 2)), torch.randn(6, 2)
    previous_actions = torch.cat([torch.zeros(1, 2, dtype=torch.long), actions[:-1]])
    previous_rewards = torch.cat([torch.zeros(1, 2), rewards[:-1]])
    unrolled, _ = net.unroll(obs, previous_actions, previous_rewards, net.initial_state(2)[:2])
    state, stepped = net.initial_state(2), []
    for t in range(6):
        q, state = net.step(obs[t], state, previous_rewards[t])
        stepped.append(q)
        state = state._replace(previous_action=actions[t])
    torch.testing.assert_close(torch.stack(stepped), unrolled)


def test_an_episode_start_resets_the_state_of_that_environment_only():
    net = RecurrentQNetwork((4,), 3, lstm_size=8, head_size=8)
    state = net.initial_state(2)._replace(hidden=torch.ones(2, 8), cell=torch.ones(2, 8), previous_action=torch.tensor([2, 1]))
    reset = net.reset_where(state, torch.tensor([True, False]))
    assert reset.hidden[0].eq(0).all() and reset.cell[0].eq(0).all() and reset.previous_action.tolist() == [0, 1]
    assert reset.hidden[1].eq(1).all() and reset.cell[1].eq(1).all()


def small_agent():
    torch.manual_seed(0)
    return R2D2(R2D2Config(**SMALL), (4,), gym.spaces.Discrete(2))


def random_sequences(agent, starts_episode: bool) -> list[Sequence]:
    """Six random sequences, none ending an episode."""
    length, size = agent.config.sequence_length, agent.config.lstm_size
    return [Sequence(obs=torch.randn(length + 1, 4), actions=torch.randint(2, (length,)), rewards=torch.randn(length), behaviour_probs=torch.rand(length),
                     guided=torch.zeros(length, dtype=torch.bool),
                     terminated=torch.zeros(length, dtype=torch.bool), truncated=torch.zeros(length, dtype=torch.bool),
                     mask=torch.ones(length, dtype=torch.bool), start_state=(torch.randn(size), torch.randn(size)),
                     previous_action=torch.tensor(1), previous_reward=torch.tensor(0.5), starts_episode=starts_episode)
            for _ in range(6)]


def sequence_batch(agent, starts_episode: bool):
    """Six random sequences, stored and sampled back."""
    agent.replay.add(random_sequences(agent, starts_episode))
    return agent.replay.sample(6)


@pytest.mark.parametrize("starts_episode", [False, True])
def test_burn_in_produces_the_state_but_no_gradient(starts_episode):
    agent = small_agent()
    batch = sequence_batch(agent, starts_episode)
    start = tuple(part.clone().requires_grad_(True) for part in batch.start_state)
    obs, actions, rewards = batch.obs, batch.actions, batch.rewards
    previous_actions = torch.cat([batch.previous_action.unsqueeze(0), actions])
    previous_rewards = torch.cat([batch.previous_reward.unsqueeze(0), rewards])
    q = agent.learner.unroll_with_burn_in(obs, previous_actions, previous_rewards, start, batch.starts_episode)
    burn_in = agent.config.burn_in
    q[burn_in:].sum().backward()  # the steps R2D2 trains on, whatever the target
    gradient = start[0].grad.abs().sum() + start[1].grad.abs().sum()
    assert (gradient > 0) == starts_episode
    # the burn-in still sets the state: the trained steps' Q depends on the stored start state
    with torch.no_grad():
        zeros = (torch.zeros_like(start[0]), torch.zeros_like(start[1]))
        other = agent.learner.unroll_with_burn_in(obs, previous_actions, previous_rewards, zeros, batch.starts_episode)
    assert not torch.allclose(other[burn_in:], q[burn_in:].detach())


def test_the_loss_skips_burn_in_and_padding_unless_a_sequence_starts_an_episode():
    mask = torch.tensor([[True, True], [True, True], [True, True], [True, False]])
    trained = trained_steps(mask, torch.tensor([False, True]), burn_in=2)
    assert trained.T.tolist() == [[False, False, True, True], [True, True, True, False]]


def test_a_learning_step_changes_the_priorities_and_counts_updates():
    agent = small_agent()
    batch = sequence_batch(agent, False)
    before = agent.replay.tree.priorities(batch.keys[:, 0].numpy()).copy()
    metrics = agent.learner.learn(batch)
    assert agent.updates == 1 and metrics["train/td_loss"] > 0
    assert (agent.replay.tree.priorities(batch.keys[:, 0].numpy()) != before).all()


@pytest.mark.parametrize("save_replay", [False, True])
def test_a_checkpoint_without_its_replay_warns_once_when_new_sequences_arrive(save_replay, tmp_path):
    agent = small_agent()
    agent.config.save_replay = save_replay
    space = gym.spaces.Box(-1, 1, (4,))
    agent.keep_replay_in(tmp_path, space)
    sequence_batch(agent, False)
    fresh = small_agent()
    fresh.config.save_replay = save_replay
    fresh.keep_replay_in(tmp_path, space)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fresh.load_state_dict(agent.state_dict())
        on_load, loaded = [str(w.message) for w in caught], len(fresh.replay)
        fresh.replay.add(random_sequences(fresh, False))
        fresh.replay.add(random_sequences(fresh, False))
        fresh.train_steps(0.0)
        fresh.train_steps(0.0)
    messages = [str(w.message) for w in caught]
    assert on_load == []  # a finished run reloaded (e.g. reused by a benchmark) learns nothing more: no warning
    if save_replay:
        assert messages == [] and loaded == len(agent.replay) > 0
    else:
        assert len(messages) == 1 and "--save-replay" in messages[0] and "6 new sequences" in messages[0]
        assert loaded == 0


def test_retrace_on_greedy_actions_with_lambda_one_is_the_double_q_return_to_the_sequence_end():
    torch.manual_seed(1)
    retrace = R2D2(R2D2Config(**SMALL, td_target="retrace", trace_lambda=1.0), (4,), gym.spaces.Discrete(3))
    n_step = R2D2(R2D2Config(**SMALL, n_step=SMALL["sequence_length"]), (4,), gym.spaces.Discrete(3))
    batch = sequence_batch(retrace, starts_episode=False)
    online_q, target_q = torch.randn(9, 6, 3), torch.randn(9, 6, 3)
    batch.actions = online_q[:-1].argmax(-1)
    batch.behaviour_probs = torch.ones(8, 6)
    batch.terminated[5, 0] = True  # an episode that ends inside, padded after
    batch.mask[6:, 0] = False
    batch.behaviour_probs[6:, 0] = 0.0
    batch.actions[6:, 0] = (batch.actions[6:, 0] + 1) % 3  # padding: action 0 stored, whatever is greedy
    targets = retrace.learner.targets(online_q, target_q, batch.rewards, retrace.config.gamma, batch)
    assert torch.isfinite(targets).all()
    expected = n_step.learner.targets(online_q, target_q, batch.rewards, n_step.config.gamma, batch)
    torch.testing.assert_close(targets[batch.mask], expected[batch.mask])


def test_exploration_rates_span_the_papers_range():
    rates = epsilon_ladder(8, 0.4, 7.0)
    assert rates[0].item() == pytest.approx(0.4) and rates[-1].item() == pytest.approx(0.4**8)
    assert (rates[1:] < rates[:-1]).all() and epsilon_ladder(1, 0.4, 7.0).tolist() == pytest.approx([0.4])


def train(run_dir, *extra):
    return main(["train", "r2d2", "--env", "CartPole-v1", "--preset", "cartpole", "--steps", "1600", "--torch-threads", "1",
                 "--no-progress", "--run-dir", str(run_dir), "--min-replay", "16", *extra])


def test_r2d2_trains_evaluates_greedily_and_resumes_with_its_replay(tmp_path):
    assert train(tmp_path / "run", "--save-replay", "--eval-every", "800", "--eval-episodes", "2", "--checkpoint-every", "1") == 0
    rows = list(csv.DictReader((tmp_path / "run" / "metrics.csv").open()))
    assert float(rows[-1]["train/updates"]) > 0 and float(rows[-1]["train/td_loss"]) >= 0
    assert len(list(csv.DictReader((tmp_path / "run" / "evaluations.csv").open()))) == 2
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["algorithm"]
    stored = saved["replay"]["index"]["added"]
    assert stored > 16 and saved["updates"] == float(rows[-1]["train/updates"])
    segments = sorted(path.name for path in (tmp_path / "run" / "replay").glob("*.pt"))
    assert segments[-1].endswith(f"-{stored:012d}.pt") and len(segments) > 1  # one segment per checkpoint
    assert train(tmp_path / "run", "--save-replay", "--steps", "2400", "--resume") == 0
    resumed = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["algorithm"]
    assert resumed["replay"]["index"]["added"] > stored and resumed["updates"] > saved["updates"]


def test_a_recurrent_checkpoint_starts_r2d2_whole_and_is_refused_by_an_actor_critic(tmp_path, capsys):
    assert train(tmp_path / "run", "--steps", "400") == 0
    source = str(tmp_path / "run" / "checkpoint.pt")
    saved = load_checkpoint(source)["algorithm"]["policy"]
    agent = R2D2(R2D2Config(**{**PRESETS["cartpole"]["algo_config"]}), (4,), gym.spaces.Discrete(2))
    assert load_parts(agent.policy, source) == list(saved)
    assert all(torch.equal(value, saved[key]) for key, value in agent.policy.state_dict().items())
    agent.learner.learn(sequence_batch(agent, starts_episode=True))  # the target network starts from what was loaded
    assert all(torch.equal(value, saved[key]) for key, value in agent.learner.target.state_dict().items())
    assert main(["finetune", "ppo", "--from", source, "--steps", "256", "--run-dir", str(tmp_path / "ppo")]) == 2
    assert "holds a recurrent Q-network (r2d2); an actor-critic cannot start from it" in capsys.readouterr().err
    assert main(["finetune", "r2d2", "--from", source, "--init-parts", "critic", "--run-dir", str(tmp_path / "parts")]) == 2
    assert "a Q-network loads policy_body (its torso), policy_convs (the torso's convolutions) or, without --init-parts, all of it; got critic" \
        in capsys.readouterr().err


def test_a_q_network_starts_its_torso_from_a_policy_body_and_keeps_a_fresh_head(tmp_path, capsys):
    assert main(["train", "ppg", "--env", "CartPole-v1", "--steps", "256", "--num-envs", "2", "--num-steps", "64", "--torch-threads", "1",
                 "--no-progress", "--run-dir", str(tmp_path / "ppg")]) == 0
    source = str(tmp_path / "ppg" / "checkpoint.pt")
    actor = load_checkpoint(source)["algorithm"]["policy"]
    agent = R2D2(R2D2Config(**{**PRESETS["cartpole"]["algo_config"]}), (4,), gym.spaces.Discrete(2))
    fresh = {key: value.clone() for key, value in agent.policy.state_dict().items()}
    copied = load_parts(agent.policy, source, ("policy_body",))
    own = agent.policy.state_dict()
    assert copied == [key for key in own if key.startswith("torso.")] and len(copied) == 4  # two linear layers
    assert all(torch.equal(own[key], actor["actor_body." + key.removeprefix("torso.")]) for key in copied)
    assert not any(torch.equal(own[key], fresh[key]) for key in copied)
    assert all(torch.equal(own[key], fresh[key]) for key in own if key not in copied)  # the LSTM and the Q-head start fresh
    r2d2_source = tmp_path / "r2d2"  # a Q-network's torso loads the same way
    assert train(r2d2_source, "--steps", "400") == 0
    saved = load_checkpoint(r2d2_source / "checkpoint.pt")["algorithm"]["policy"]
    assert load_parts(agent.policy, str(r2d2_source / "checkpoint.pt"), ("policy_body",)) == copied
    assert all(torch.equal(agent.policy.state_dict()[key], saved[key]) for key in copied)
    assert main(["finetune", "r2d2", "--from", source, "--init-parts", "policy_body", "--env", "CartPole-v1", "--preset", "cartpole",
                 "--steps", "160", "--min-replay", "4", "--torch-threads", "1", "--no-progress", "--run-dir", str(tmp_path / "ft")]) == 0
    assert main(["finetune", "r2d2", "--from", source, "--init-parts", "policy_body", "--env", "CartPole-v1", "--preset", "cartpole",
                 "--hidden-sizes", "32", "--run-dir", str(tmp_path / "misfit")]) == 2
    assert "its actor_body does not fit this Q-network's torso (use the same --network)" in capsys.readouterr().err
    with pytest.raises(ValueError, match="torso has no convolutions"):
        load_parts(agent.policy, source, ("policy_convs",))


def test_a_q_network_starts_its_torsos_convolutions_from_a_pixel_policy_body(tmp_path):
    torch.manual_seed(0)
    actor = PPG(PPGConfig(network="minatar"), (4, 10, 10), gym.spaces.Discrete(3))
    save_checkpoint(tmp_path / "pre.pt", {"algorithm": actor.state_dict()})
    saved = actor.policy.state_dict()
    agent = R2D2(R2D2Config(network="minatar", lstm_size=16, head_size=16), (4, 10, 10), gym.spaces.Discrete(3))
    fresh = {key: value.clone() for key, value in agent.policy.state_dict().items()}
    copied = load_parts(agent.policy, str(tmp_path / "pre.pt"), ("policy_convs",))
    assert copied == ["torso.convs.0.weight", "torso.convs.0.bias"]
    assert load_parts(agent.policy, str(tmp_path / "pre.pt"), ["policy_convs"]) == copied  # a list from the Python API alike
    for key, value in agent.policy.state_dict().items():
        assert torch.equal(value, saved["actor_body." + key.removeprefix("torso.")] if key in copied else fresh[key]), key


def test_shifted_replay_shows_the_online_and_target_networks_their_own_shift_of_each_sequence():
    torch.manual_seed(0)
    agent = R2D2(R2D2Config(**{**SMALL, "network": "minatar", "shift_pixels": 2}), (4, 10, 10), gym.spaces.Discrete(3))
    sequences = random_sequences(agent, False)
    for sequence in sequences:
        sequence.obs = torch.randint(0, 2, (agent.config.sequence_length + 1, 4, 10, 10), dtype=torch.uint8)
        sequence.actions = sequence.actions.clamp(max=2)
    agent.replay.add(sequences)
    batch = agent.replay.sample(6)
    online, target = agent.learner.replayed_views(batch.obs)
    assert online.shape == target.shape == batch.obs.shape
    assert not torch.equal(online, batch.obs) and not torch.equal(online, target)
    assert agent.learner.learn(batch)["train/td_loss"] > 0 and agent.updates == 1
    agent.config.shift_pixels = 0
    assert all(view is batch.obs for view in agent.learner.replayed_views(batch.obs))


@pytest.mark.parametrize("extra,message", [
    (["--burn-in", "15"], "burn_in must lie in [0, sequence_length - sequence_period = 10]"),
    (["--sequence-period", "30"], "sequence_period must be at most sequence_length (20)"),
    (["--env", "Pendulum-v1"], "r2d2 needs a discrete action space"),
    (["--shift-pixels", "4"], "shift_pixels shifts image observations [C, H, W]; this environment's are [4]: set shift_pixels to 0"),
    (["--shift-pixels", "-1"], "shift_pixels must be >= 0, got -1"),
])
def test_bad_r2d2_options_are_one_line_errors_before_anything_is_written(tmp_path, capsys, extra, message):
    assert train(tmp_path / "bad", *extra) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


@pytest.mark.benchmark
def test_r2d2_solves_cartpole(tmp_path):
    """Greedy evaluation of each seed's final network (training returns include epsilon up to 0.4). ~4 min:
    3 seeds side by side; at 40k steps only 1 of 3 had solved it (greedy 500, 316, 252)."""
    runs = train_seeds(tmp_path, "r2d2", 80_000, preset="cartpole")
    assert_majority(greedy_scores(runs), 475.0)


@pytest.mark.benchmark
def test_only_the_recurrent_network_solves_cartpole_without_velocities(tmp_path):
    """Position and angle only: the LSTM infers the velocities from history, the same-size feed-forward layer
    cannot (~2 min per seed). Greedy evaluation of each seed's final network."""
    scores = {}
    for memory in ("lstm", "none"):
        runs = train_seeds(tmp_path / memory, "r2d2", 60_000, preset="cartpole", env="voidrl/CartPoleNoVelocity-v1", memory=memory)
        scores[memory] = greedy_scores(runs, episodes=10)
    assert_majority(scores["lstm"], 300.0)
    assert_majority([-score for score in scores["none"]], -150.0)  # most feed-forward seeds stay below 150


@pytest.mark.benchmark
def test_r2d2_solves_minigrid_empty_with_its_preset(tmp_path):
    """MiniGrid's one sparse reward below 1 per solved episode: some seed's greedy network must walk the 6-step
    path (return 0.946; 0.9 allows 11 steps). ~14 min: 3 seeds side by side. Here greedy returns were 0.95,
    0.95 and 0.00 (that seed reached the goal in 1.5% of its episodes); with the paper's Adam epsilon of 1e-3,
    whose steps are too small for these gradients (see the preset), 0.00 on all three. One of three, not most:
    with the working preset one seed in three had still not solved it at 150k steps."""
    runs = train_seeds(tmp_path, "r2d2", 150_000, env="MiniGrid-Empty-5x5-v0", preset="minigrid")
    scores = greedy_scores(runs, episodes=3)
    assert max(scores) >= 0.9, scores


def test_the_td_target_keeps_its_old_name_as_a_flag_and_in_stored_configs(tmp_path, capsys):
    import voidrl
    from voidrl.config import TrainConfig

    stored = voidrl.make_config("r2d2", env="CartPole-v1").to_dict()
    stored["algo_config"]["target"] = stored["algo_config"].pop("td_target")
    stored["algo_config"]["target"] = "retrace"  # a config.json written before the rename
    assert TrainConfig.from_dict(stored).algo_config.td_target == "retrace"
    for flag in ("--td-target", "--target"):
        assert main(["train", "r2d2", "--env", "CartPole-v1", flag, "lambda", "--run-dir", str(tmp_path / "bad")]) == 2
        assert "td_target must be one of" in capsys.readouterr().err and not (tmp_path / "bad").exists()
