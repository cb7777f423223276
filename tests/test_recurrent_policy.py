"""Recurrent PPO (``--memory lstm``): the collector's stepping equals the update's unroll, states reset at episode
starts and nowhere else, a time-limit cut bootstraps from the episode's own state, no gradient crosses an episode
boundary, sequences cut from a rollout, and the command line (train, resume, evaluate, bad input)."""

import csv
import json

import gymnasium as gym
import pytest
import torch

from tests.learning import assert_majority, greedy_scores, train_seeds
from tests.test_collector import Recorder
from voidrl.algos.a2c import A2C
from voidrl.algos.ppo import PPO
from voidrl.cli import main
from voidrl.configs.ppo import PPOConfig
from voidrl.envs import EnvConfig, make_env
from voidrl.io.checkpoint import load_checkpoint
from voidrl.nets.actor_critic import LSTMState, RecurrentActorCritic
from voidrl.nets.parts import load_parts
from voidrl.nets.recurrent import lstm_over_episodes
from voidrl.rollout import Collector
from voidrl.rollout.collector import PolicySampling
from voidrl.rollout.minibatches import sequence_steps, shuffled_sequence_minibatches
from voidrl.training.presets import make_config


def collect(num_steps=24, num_envs=3, shared=False, policy=None):
    """A rollout of a random recurrent policy (or ``policy``) on CartPole without velocities, episodes cut at 7 steps."""
    torch.manual_seed(0)
    env = Recorder(make_env("voidrl/CartPoleNoVelocity-v1", EnvConfig(num_envs=num_envs, max_episode_steps=7)))
    if policy is None:
        policy = RecurrentActorCritic(env.single_observation_space.shape, env.single_action_space, 8, hidden_sizes=(16,), shared=shared)
    collector = Collector(env, PolicySampling(policy, num_envs))
    collector.reset(0)
    storage = collector.make_storage(num_steps)
    collector.collect(storage, start_step=0)
    return env, policy, storage


def stored_state(storage, t):
    return LSTMState(storage.lstm_hidden[t], storage.lstm_cell[t])


TOLERANCE = 1e-5
"""The update's unroll (body and heads over all steps at once, the LSTM over each stretch between episode starts)
against the collector's steps, on log-probabilities and values."""


def assert_close(computed, stored):
    assert (computed - stored).abs().max() <= TOLERANCE


@pytest.mark.parametrize("shared", [False, True])
def test_the_update_unroll_equals_the_collectors_steps_within_float_rounding(shared):
    env, policy, storage = collect(shared=shared)
    assert storage.episode_starts[0].all() and storage.episode_starts[1:].any()  # episodes begin inside the rollout
    with torch.no_grad():
        dist, values, _ = policy(storage.obs, stored_state(storage, 0), storage.episode_starts)
        assert_close(values, storage.values[..., 0])
        assert_close(dist.log_prob(storage.actions), storage.log_probs)
        for start in range(0, 24, 8):  # sequences of 8 from their stored starting states, as the update unrolls them
            window = slice(start, start + 8)
            dist, values, _ = policy(storage.obs[window], stored_state(storage, start), storage.episode_starts[window])
            assert_close(values, storage.values[window, :, 0])
            assert_close(dist.log_prob(storage.actions[window]), storage.log_probs[window])


def stepwise_lstm(lstm, inputs, state, episode_starts):
    """The slow reference: one step at a time, the state zeroed at each episode start."""
    hidden, cell = state
    outputs = []
    for step_inputs, starts in zip(inputs, episode_starts):
        keep = (~starts).float().unsqueeze(-1)
        out, (hidden, cell) = lstm(step_inputs.unsqueeze(0), ((hidden * keep).unsqueeze(0), (cell * keep).unsqueeze(0)))
        hidden, cell = hidden.squeeze(0), cell.squeeze(0)
        outputs.append(out.squeeze(0))
    return torch.stack(outputs), (hidden, cell)


@pytest.mark.parametrize("pattern", ["random", "none", "every step", "first step only", "a column restarts at its last step"])
def test_lstm_over_episodes_equals_stepping_with_resets_values_and_gradients(pattern):
    torch.manual_seed(1)
    steps, batch = 12, 5
    lstm = torch.nn.LSTM(4, 6)
    inputs = torch.randn(steps, batch, 4, requires_grad=True)
    state = (torch.randn(batch, 6, requires_grad=True), torch.randn(batch, 6, requires_grad=True))
    starts = {"random": torch.rand(steps, batch) < 0.25, "none": torch.zeros(steps, batch, dtype=torch.bool),
              "every step": torch.ones(steps, batch, dtype=torch.bool),
              "first step only": torch.zeros(steps, batch, dtype=torch.bool).index_fill(0, torch.tensor([0]), True),
              "a column restarts at its last step": torch.zeros(steps, batch, dtype=torch.bool).index_put((torch.tensor([steps - 1]), torch.tensor([2])), torch.tensor(True))}[pattern]
    fast, fast_state = lstm_over_episodes(lstm, inputs, state, starts)
    slow, slow_state = stepwise_lstm(lstm, inputs, state, starts)
    assert (fast - slow).abs().max() <= TOLERANCE
    assert all((a - b).abs().max() <= TOLERANCE for a, b in zip(fast_state, slow_state))
    weights = torch.randn_like(fast)
    fast_grads = torch.autograd.grad((fast * weights).sum() + fast_state[0].sum(), (inputs, *state, *lstm.parameters()))
    slow_grads = torch.autograd.grad((slow * weights).sum() + slow_state[0].sum(), (inputs, *state, *lstm.parameters()))
    assert all((a - b).abs().max() <= 1e-4 for a, b in zip(fast_grads, slow_grads))


def test_a_state_dict_of_the_lstm_cell_networks_still_loads():
    """Checkpoints before the packed unroll held ``nn.LSTMCell`` weights (``actor_lstm.weight_ih``...)."""
    torch.manual_seed(0)
    policy = RecurrentActorCritic((3,), gym.spaces.Discrete(2), 8, hidden_sizes=(16,))
    old_names = {key.removesuffix("_l0"): value for key, value in policy.state_dict().items()}
    assert "actor_lstm.weight_ih" in old_names and "critic_lstm.bias_hh" in old_names
    loaded = RecurrentActorCritic((3,), gym.spaces.Discrete(2), 8, hidden_sizes=(16,))
    loaded.load_state_dict(old_names)
    assert all(torch.equal(a, b) for a, b in zip(policy.state_dict().values(), loaded.state_dict().values()))


def test_the_state_resets_exactly_where_an_episode_begins():
    env, policy, storage = collect()
    fresh = policy.initial_state(1)
    with torch.no_grad():
        for t in range(1, 24):
            for n in range(3):
                _, alone, _ = policy(storage.obs[t : t + 1, n : n + 1], fresh, torch.ones(1, 1, dtype=torch.bool))
                if storage.episode_starts[t, n]:
                    assert torch.allclose(alone.squeeze(), storage.values[t, n, 0])
                    assert torch.equal(storage.episode_starts[t, n], env.steps[t - 1].terminated[n] | env.steps[t - 1].truncated[n])
                else:  # carried on: the episode's memory changes the value
                    assert not torch.allclose(alone.squeeze(), storage.values[t, n, 0])


def test_a_time_limit_cut_bootstraps_from_the_state_after_the_cut_step():
    env, policy, storage = collect()
    cuts = 0
    with torch.no_grad():
        for t, step in enumerate(env.steps[:-1]):
            for n in (step.truncated & ~step.terminated).nonzero().flatten().tolist():
                after_cut = LSTMState(storage.lstm_hidden[t + 1, n : n + 1], storage.lstm_cell[t + 1, n : n + 1])
                expected = policy.bootstrap_values(step.final_obs[n : n + 1], after_cut)
                assert torch.allclose(storage.next_values[t, n], expected.squeeze(0))
                assert not torch.allclose(storage.next_values[t, n], policy.bootstrap_values(step.final_obs[n : n + 1], policy.initial_state(1)).squeeze(0))
                cuts += 1
    assert cuts > 0


def test_ppos_first_minibatch_reproduces_the_rollouts_policy():
    """Measured before its gradient step, the update's first minibatch (every sequence, unrolled from its stored
    starting state) has the rollout's log-probabilities: its KL stays under a target of 1e-7."""
    config = PPOConfig(memory="lstm", lstm_size=8, hidden_sizes=(16,), sequence_length=8, num_steps=24, minibatch_size=72,
                       epochs=1, target_kl=1e-7)
    torch.manual_seed(0)
    algo = PPO(config, (2,), gym.spaces.Discrete(2))
    with torch.no_grad():
        algo.policy.policy_head.weight.mul_(300.0)  # far from uniform, so a wrong state shows in the KL
    _, _, storage = collect(policy=algo.policy)
    metrics = algo.update(storage, progress=0.0)
    assert metrics["train/stopped_early"] == 0.0 and metrics["train/gradient_steps"] == 1.0
    assert metrics["train/approx_kl"] < 1e-7


@pytest.mark.parametrize("shared", [False, True])
def test_no_gradient_crosses_an_episode_start(shared):
    torch.manual_seed(0)
    policy = RecurrentActorCritic((3,), gym.spaces.Discrete(2), 8, hidden_sizes=(16,), shared=shared)
    obs = torch.randn(6, 2, 3, requires_grad=True)
    hidden, cell = (torch.randn(2, 1 if shared else 2, 8, requires_grad=True) for _ in range(2))
    starts = torch.zeros(6, 2, dtype=torch.bool)
    starts[3, 0] = True  # environment 0's second episode begins at step 3
    dist, values, _ = policy(obs, LSTMState(hidden, cell), starts)
    loss = values[4:].sum() + dist.log_prob(torch.zeros(6, 2, dtype=torch.long))[4:].sum()
    obs_grad, hidden_grad, cell_grad = torch.autograd.grad(loss, (obs, hidden, cell))
    assert (obs_grad[:3, 0] == 0).all() and (hidden_grad[0] == 0).all() and (cell_grad[0] == 0).all()
    assert (obs_grad[3:5, 0] != 0).any()
    assert (obs_grad[:3, 1] != 0).any() and (hidden_grad[1] != 0).any()  # environment 1's episode goes on


def test_sequence_steps_name_consecutive_steps_of_one_environment():
    steps, envs = sequence_steps(torch.tensor([0, 1, 2, 3]), sequence_length=2, num_envs=2)  # T = 4, N = 2
    assert steps.tolist() == [[0, 0, 2, 2], [1, 1, 3, 3]] and envs.tolist() == [[0, 1, 0, 1], [0, 1, 0, 1]]
    field = torch.randn(12, 3, 5)
    ids = torch.randperm(9)
    steps, envs = sequence_steps(ids, 4, 3)
    reference = torch.stack([field[i * 4 : (i + 1) * 4, n] for i in range(3) for n in range(3)])  # [9, L, 5]
    assert torch.equal(field[steps, envs], reference[ids].transpose(0, 1))


def test_sequence_minibatches_hold_whole_sequences_with_their_starting_states_once_each():
    t, n, length = 12, 3, 4
    fields = {"step": torch.arange(t * n).view(t, n), "lstm_hidden": torch.randn(t, n, 2, 5),
              "episode_starts": torch.rand(t, n) < 0.3}
    seen = []
    for batch in shuffled_sequence_minibatches(fields, length, minibatch_size=8):
        assert batch["step"].shape[0] == length and batch["lstm_hidden"].shape[1:] == (2, 5) and batch["step"].shape[1] <= 2
        for b in range(batch["step"].shape[1]):
            first = batch["step"][0, b].item()
            start, env = divmod(first, n)
            assert start % length == 0 and batch["step"][:, b].tolist() == [first + n * k for k in range(length)]
            assert torch.equal(batch["lstm_hidden"][b], fields["lstm_hidden"][start, env])  # the state before the first step
            assert torch.equal(batch["episode_starts"][:, b], fields["episode_starts"][start : start + length, env])
            seen.append(first)
    assert sorted(seen) == [i * length * n + env for i in range(t // length) for env in range(n)]
    with pytest.raises(ValueError, match="does not cut into sequences of 5"):
        next(shuffled_sequence_minibatches(fields, 5, 10))


def stepwise_states(policy, storage):
    """The slow reference of ``refresh_states``: the state before every step ``[T, N, K, H]``, each environment's
    rollout stepped one step at a time with ``policy`` from the rollout's first stored state."""
    state, hidden, cell = stored_state(storage, 0), [storage.lstm_hidden[0]], [storage.lstm_cell[0]]
    with torch.no_grad():
        for t in range(storage.obs.shape[0] - 1):
            state = policy(storage.obs[t], state, storage.episode_starts[t])[2]
            hidden.append(state.hidden)
            cell.append(state.cell)
    return LSTMState(torch.stack(hidden), torch.stack(cell))


@pytest.mark.parametrize("shared", [False, True])
def test_refreshed_minibatches_start_each_sequence_from_the_state_of_the_current_parameters(shared):
    """With ``refresh_states`` each minibatch is gathered after the gradient step before it, its sequences starting
    from the states the parameters of that moment reach (checked against stepping the rollout); the rollout's own
    stored states are left as collected."""
    config = PPOConfig(memory="lstm", lstm_size=8, hidden_sizes=(16,), shared=shared, sequence_length=8, num_steps=24,
                       minibatch_size=16, refresh_states=True)
    torch.manual_seed(0)
    algo = PPO(config, (2,), gym.spaces.Discrete(2))
    _, _, storage = collect(policy=algo.policy)
    collected = storage.lstm_hidden.clone(), storage.lstm_cell.clone()
    num_envs = storage.obs.shape[1]
    fields = {"obs": storage.obs, "step": torch.arange(storage.obs.shape[:2].numel()).view(storage.obs.shape[:2])}
    fields |= algo.sequence_fields(storage)
    stale = []
    for batch in algo.minibatches(fields, config.minibatch_size):  # 9 sequences, 2 a minibatch
        reference = stepwise_states(algo.policy, storage)
        for b in range(batch["step"].shape[1]):
            start, env = divmod(batch["step"][0, b].item(), num_envs)
            assert_close(batch["lstm_hidden"][b], reference.hidden[start, env])
            assert_close(batch["lstm_cell"][b], reference.cell[start, env])
            stale.append((reference.hidden[start, env] - collected[0][start, env]).abs().max().item())
        with torch.no_grad():  # a gradient step's worth of change
            for parameter in algo.policy.parameters():
                parameter.add_(0.05 * torch.randn_like(parameter))
    assert len(stale) == 9 and max(stale) > 100 * TOLERANCE  # the stored states were stale: the check can fail
    assert torch.equal(storage.lstm_hidden, collected[0]) and torch.equal(storage.lstm_cell, collected[1])


def test_refreshed_states_train_ppo_and_ppg(tmp_path):
    assert train(tmp_path / "ppo", "--refresh-states", "--steps", "256") == 0
    assert main(["train", "ppg", "--env", "voidrl/CartPoleNoVelocity-v1", "--memory", "lstm", "--lstm-size", "16",
                 "--sequence-length", "8", "--num-steps", "32", "--num-envs", "4", "--minibatch-size", "64",
                 "--policy-iterations", "2", "--aux-minibatch-size", "64", "--refresh-states", "--steps", "256",
                 "--torch-threads", "1", "--no-progress", "--run-dir", str(tmp_path / "ppg")]) == 0
    for run in ("ppo", "ppg"):
        assert json.loads((tmp_path / run / "config.json").read_text())["algo_config"]["refresh_states"] is True


def train(run_dir, *extra, command="train"):
    return main([command, "ppo", "--env", "voidrl/CartPoleNoVelocity-v1", "--memory", "lstm", "--lstm-size", "16",
                 "--sequence-length", "8", "--num-steps", "32", "--num-envs", "4", "--minibatch-size", "64", "--epochs", "2",
                 "--steps", "512", "--torch-threads", "1", "--no-progress", "--run-dir", str(run_dir), *extra])


def test_recurrent_ppo_trains_resumes_evaluates_and_lends_its_parts(tmp_path, capsys):
    assert train(tmp_path / "run", "--checkpoint-every", "1", "--eval-every", "256", "--eval-episodes", "2") == 0
    assert len(list(csv.DictReader((tmp_path / "run" / "evaluations.csv").open()))) == 2
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["algorithm"]["policy"]
    assert {"actor_lstm.weight_ih_l0", "critic_lstm.weight_ih_l0"} <= set(saved)
    assert train(tmp_path / "run", "--steps", "1024", "--resume") == 0
    rows = list(csv.DictReader((tmp_path / "run" / "metrics.csv").open()))
    assert int(float(rows[-1]["step"])) == 1024 and float(rows[-1]["train/gradient_steps"]) == 4
    capsys.readouterr()
    assert main(["eval", "--checkpoint", str(tmp_path / "run" / "checkpoint.pt"), "--episodes", "2"]) == 0
    assert "over 2 episodes (greedy actions)" in capsys.readouterr().out
    assert main(["eval", "--checkpoint", str(tmp_path / "run" / "checkpoint.pt"), "--episodes", "2", "--sampled"]) == 0
    fresh = RecurrentActorCritic((2,), make_env("voidrl/CartPoleNoVelocity-v1", EnvConfig(num_envs=1)).single_action_space, 16)
    copied = load_parts(fresh, str(tmp_path / "run" / "checkpoint.pt"), ("policy_body",))
    assert "actor_lstm.weight_hh_l0" in copied and not any(key.startswith("critic_lstm.") for key in copied)
    assert train(tmp_path / "tuned", "--from", str(tmp_path / "run" / "checkpoint.pt"), "--steps", "256", command="finetune") == 0


NO_VELOCITY = ["--env", "voidrl/CartPoleNoVelocity-v1"]


@pytest.mark.parametrize("command,message", [
    (["train", "ppo", "--memory", "gru", *NO_VELOCITY], "memory must be one of none, lstm, got 'gru'"),
    (["train", "ppo", "--memory", "lstm", "--sequence-length", "7", *NO_VELOCITY], "must be multiples of sequence_length (7)"),
    (["train", "reinforce", "--memory", "lstm", *NO_VELOCITY], "memory lstm is available for ppo, ppg, a2c, a3c; reinforce is feed-forward (memory none)"),
    (["train", "trpo", "--memory", "lstm", *NO_VELOCITY], "memory lstm is available for ppo, ppg, a2c, a3c; trpo is feed-forward"),
    (["train", "ppo", "--memory", "lstm", "--env", "Pendulum-v1", "--continuous-policy", "mixture", "--action-persistence", "0.9"],
     "action_persistence needs a feed-forward policy (memory none), not memory lstm"),
])
def test_bad_memory_options_are_one_line_errors(tmp_path, capsys, command, message):
    assert main([*command, "--run-dir", str(tmp_path / "bad")]) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1
    assert not (tmp_path / "bad").exists()


@pytest.mark.benchmark
@pytest.mark.parametrize("algo,solved,feed_forward_below", [("ppo", 400.0, 150.0), ("ppg", 400.0, 100.0)])
def test_only_the_recurrent_policy_solves_cartpole_without_velocities(tmp_path, algo, solved, feed_forward_below):
    """Position and angle only: the LSTM infers the velocities from history, the same body and schedule without
    the LSTM cannot. Greedy evaluation of each seed's final policy after 200k steps (PPO, one seed, one thread on a
    busy CPU: ~2 min)."""
    scores = {}
    for memory in ("lstm", "none"):
        runs = train_seeds(tmp_path / memory, algo, 200_000, env="voidrl/CartPoleNoVelocity-v1", preset="cartpole-memory",
                           memory=memory)
        scores[memory] = greedy_scores(runs, episodes=10)
    assert_majority(scores["lstm"], solved)
    assert_majority([-score for score in scores["none"]], -feed_forward_below)  # most feed-forward seeds stay below


def test_a2cs_loss_unrolls_each_environment_from_the_state_its_rollout_began_with(monkeypatch):
    """The second rollout begins mid-episode with non-zero states: the loss's log-probabilities are the collector's
    bit for bit only when the unroll starts from the stored states (zeros would differ)."""
    config = make_config("a2c", env="voidrl/CartPoleNoVelocity-v1", memory="lstm", lstm_size=8, hidden_sizes=(16,), num_steps=12)
    torch.manual_seed(0)
    env = make_env("voidrl/CartPoleNoVelocity-v1", EnvConfig(num_envs=3, max_episode_steps=7))
    algo = A2C(config.algo_config, env.single_observation_space.shape, env.single_action_space)
    collector = Collector(env, algo.acting(3))
    collector.reset(0)
    storage = collector.make_storage(12)
    for _ in range(2):
        collector.collect(storage, start_step=0)
    assert storage.lstm_hidden[0].abs().sum() > 0 and storage.episode_starts[1:].any()
    seen = {}

    def policy_gradient_loss(log_probs, advantages):
        seen["log_probs"] = log_probs
        return log_probs.sum() * 0, {}

    monkeypatch.setattr("voidrl.algos.a2c.policy_gradient_loss", policy_gradient_loss)
    algo.loss(algo.batch_fields(storage) | {"entropy_coef": torch.tensor(algo.config.entropy_coef)})
    assert_close(seen["log_probs"].detach(), storage.log_probs.reshape(-1))


@pytest.mark.parametrize("algo,extra", [("a2c", []), ("a3c", []),
                                        pytest.param("a3c", ["--actors", "2"], marks=[pytest.mark.xdist_group("ray"), pytest.mark.slow])],
                         ids=["a2c", "a3c", "a3c-ray"])  # "ray": with the other Ray tests, which count the Ray actors running
def test_recurrent_a2c_and_a3c_train_resume_and_evaluate(tmp_path, capsys, algo, extra):
    if extra:
        pytest.importorskip("ray")
    run_dir = tmp_path / algo
    options = ["--env", "voidrl/CartPoleNoVelocity-v1", "--memory", "lstm", "--lstm-size", "16", "--num-steps", "16", "--num-envs", "4",
               "--torch-threads", "1", "--no-progress", "--run-dir", str(run_dir), *extra]
    assert main(["train", algo, *options, "--steps", "640"]) == 0
    assert "actor_lstm.weight_ih_l0" in load_checkpoint(run_dir / "checkpoint.pt")["algorithm"]["policy"]
    assert main(["train", algo, *options, "--steps", "1280", "--resume"]) == 0
    assert load_checkpoint(run_dir / "checkpoint.pt")["step"] >= 1280
    capsys.readouterr()
    assert main(["eval", "--checkpoint", str(run_dir / "checkpoint.pt"), "--episodes", "2"]) == 0
    assert "over 2 episodes (greedy actions)" in capsys.readouterr().out


@pytest.mark.parametrize("algo,extra", [("ppo", []), ("ppg", ["--policy-iterations", "2", "--aux-minibatch-size", "128"])])
def test_a_recurrent_policy_pretrains_with_the_particle_reward(tmp_path, algo, extra):
    """APT's encoder reads observations, not the LSTM's state: reward-free pre-training works as for a feed-forward
    policy (PPG's auxiliary phase included), and the particle reward reaches the update."""
    run_dir = tmp_path / "apt"
    assert main(["pretrain", algo, "--env", "MinAtar/Breakout-v1", "--memory", "lstm", "--lstm-size", "16", "--num-envs", "4",
                 "--num-steps", "64", "--minibatch-size", "128", "--sequence-length", "16", "--steps", "1024", "--torch-threads", "1",
                 "--no-progress", "--run-dir", str(run_dir), *extra]) == 0
    rows = list(csv.DictReader((run_dir / "metrics.csv").open()))
    assert len(rows) == 4 and all(float(row["apt/buffer_size"]) > 0 for row in rows)
    assert any(float(row["apt/particle_reward"]) != 0 for row in rows)
    assert algo == "ppo" or sum(1 for row in rows if row.get("aux/states")) == 2
