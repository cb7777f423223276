"""Recurrent PPG (``ppg --memory lstm``): each phase moves only its own network, the auxiliary buffer cuts its
rollouts into the sequences the rollout was collected in (states, starts, returns), the auxiliary phase's pi_old is
the rollout's policy, gradient accumulation over whole sequences takes the same step, checkpoints keep the
sequences, and the command line trains, resumes, evaluates and fine-tunes."""

import csv

import gymnasium as gym
import pytest
import torch

from tests.test_recurrent_policy import collect
from voidrl.algos.ppg import PPG
from voidrl.cli import main
from voidrl.configs.ppg import PPGConfig
from voidrl.io.checkpoint import load_checkpoint, save_checkpoint

LENGTH = 8


def recurrent_ppg(seed=0, **options) -> PPG:
    """A small recurrent PPG for CartPole without velocities (2 observations, 2 actions) and rollouts of 24 x 3."""
    torch.manual_seed(seed)
    settings = dict(memory="lstm", lstm_size=8, hidden_sizes=(16,), sequence_length=LENGTH, num_steps=24, minibatch_size=24,
                    aux_minibatch_size=24, policy_iterations=2, aux_epochs=1) | options
    return PPG(PPGConfig(**settings), (2,), gym.spaces.Discrete(2))


def rollout_of(algo: PPG):
    with torch.no_grad():
        algo.policy.policy_head.weight.mul_(300.0)  # far from uniform, so a wrong state shows in the log-probabilities
    return collect(policy=algo.policy)[2]


def snapshot(params):
    return [p.detach().clone() for p in params]


def test_each_phase_moves_only_its_own_network():
    algo = recurrent_ppg()
    storage = rollout_of(algo)
    sequences = algo.sequence_fields(storage)
    critic_before, actor_before = snapshot(algo.policy.critic_parameters()), snapshot(algo.policy.actor_parameters())
    assert any(p is algo.policy.critic_lstm.weight_hh_l0 for p in algo.policy.critic_parameters())
    assert any(p is algo.policy.actor_lstm.weight_hh_l0 for p in algo.policy.actor_parameters())
    algo.policy_phase({"obs": storage.obs, "actions": storage.actions, "old_log_probs": storage.log_probs,
                       "advantages": torch.randn(24, 3)} | sequences)
    assert all(torch.equal(a, b) for a, b in zip(critic_before, algo.policy.critic_parameters()))
    assert any(not torch.equal(a, b) for a, b in zip(actor_before, algo.policy.actor_parameters()))
    actor_before = snapshot(algo.policy.actor_parameters())
    algo.critic_phase({"obs": storage.obs, "returns": torch.randn(24, 3, 1)} | sequences, 1, 24)
    assert all(torch.equal(a, b) for a, b in zip(actor_before, algo.policy.actor_parameters()))
    assert any(not torch.equal(a, b) for a, b in zip(critic_before, algo.policy.critic_parameters()))


def test_the_auxiliary_buffer_cuts_each_rollout_into_its_sequences():
    algo = recurrent_ppg()
    rollouts = [rollout_of(algo) for _ in range(2)]
    rollouts[1].obs.add_(100.0)  # collect() repeats its seed: tell the rollouts apart
    returns = [torch.randn(24, 3, 1) for _ in rollouts]
    for storage, rollout_returns in zip(rollouts, returns):
        algo.aux_buffer.add(storage.obs, rollout_returns, algo.sequence_fields(storage))
    per_rollout = 24 // LENGTH * 3
    ids = torch.randperm(2 * per_rollout)
    got = algo.aux_buffer.sequences(ids)
    for b, sequence in enumerate(ids.tolist()):  # slow reference: rollout r, the i-th sequence of environment n
        r, local = divmod(sequence, per_rollout)
        i, n = divmod(local, 3)
        steps = slice(i * LENGTH, (i + 1) * LENGTH)
        assert torch.equal(got["obs"][:, b], rollouts[r].obs[steps, n])
        assert torch.equal(got["returns"][:, b], returns[r][steps, n])
        assert torch.equal(got["episode_starts"][:, b], rollouts[r].episode_starts[steps, n])
        assert torch.equal(got["lstm_hidden"][b], rollouts[r].lstm_hidden[i * LENGTH, n])
        assert torch.equal(got["lstm_cell"][b], rollouts[r].lstm_cell[i * LENGTH, n])


def test_pi_old_of_the_auxiliary_phase_is_the_rollouts_policy():
    """Every stored sequence, unrolled from its stored starting state, gives the log-probabilities the rollout
    was collected with; with the actor's learning rate at 0, the behaviour-cloning KL stays at 0 throughout, up to
    float32 rounding: minibatches of other sizes than pi_old's pass take other vectorised paths, a KL of 1.2e-9 on an
    AMD EPYC (over 1e-9, this test's bound before). Training from a zero LSTM state instead of the stored one gives
    5.7e-6, from another sequence's state 1.6e-3."""
    algo = recurrent_ppg(policy_iterations=1, aux_epochs=2, learning_rate="lin_3e-4")  # 0 at the end of the run
    storage = rollout_of(algo)
    algo.aux_buffer.add(storage.obs, torch.randn(24, 3, 1), algo.sequence_fields(storage))
    sequences = algo.aux_buffer.sequences(torch.arange(24 // LENGTH * 3))
    with torch.no_grad():
        dist = algo.policy.distribution(*algo.network_inputs(sequences))
    steps = torch.arange(24).view(3, LENGTH).repeat_interleave(3, 0).T  # [L, sequences]: sequence i * 3 + n
    envs = torch.arange(3).repeat(3).expand(LENGTH, -1)
    assert torch.equal(sequences["obs"], storage.obs[steps, envs])
    assert torch.allclose(dist.log_prob(storage.actions[steps, envs]), storage.log_probs[steps, envs], atol=1e-5)
    algo.aux_buffer.clear()
    metrics = algo.update(storage, 1.0)
    assert algo.actor.optimizer.param_groups[0]["lr"] == 0.0
    assert metrics["aux/policy_steps"] == 2 * 3 and abs(metrics["aux/clone_kl"]) < 1e-7


def test_gradient_accumulation_over_whole_sequences_takes_the_same_steps():
    """Chunks of one sequence give the whole-minibatch update in the policy, critic and auxiliary phases."""
    results = []
    for chunk_size in (None, LENGTH):
        algo = recurrent_ppg(policy_iterations=1, aux_epochs=2, chunk_size=chunk_size)
        storage = rollout_of(algo)
        torch.manual_seed(1)
        metrics = algo.update(storage, 0.0)
        results.append((metrics, snapshot(algo.policy.parameters())))
    (whole, whole_params), (chunked, chunked_params) = results
    for name in ("train/policy_loss", "train/value_loss", "aux/aux_value_loss", "aux/clone_kl", "aux/value_loss"):
        assert chunked[name] == pytest.approx(whole[name], rel=1e-4, abs=1e-7), name
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(whole_params, chunked_params))


def test_a_checkpoint_keeps_the_auxiliary_sequences(tmp_path):
    algo = recurrent_ppg()
    algo.update(rollout_of(algo), 0.0)
    save_checkpoint(tmp_path / "c.pt", {"algorithm": algo.state_dict()})
    restored = recurrent_ppg(seed=1)
    restored.load_state_dict(load_checkpoint(tmp_path / "c.pt")["algorithm"])
    every = torch.arange(24 // LENGTH * 3)
    saved, loaded = algo.aux_buffer.sequences(every), restored.aux_buffer.sequences(every)
    assert saved.keys() == loaded.keys() and all(torch.equal(saved[name], loaded[name]) for name in saved)


@pytest.mark.parametrize("option,message", [
    (["--aux-minibatch-size", "20"], "memory lstm: aux_minibatch_size (20) must be a multiple of sequence_length (8)"),
    (["--chunk-size", "12"], "memory lstm: chunk_size (12) must be a multiple of sequence_length (8)"),
])
def test_sizes_that_cut_sequences_are_refused_in_one_line(tmp_path, capsys, option, message):
    assert train(tmp_path / "bad", *option) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1


def train(run_dir, *extra, command="train"):
    return main([command, "ppg", "--env", "voidrl/CartPoleNoVelocity-v1", "--memory", "lstm", "--lstm-size", "16",
                 "--sequence-length", "8", "--num-steps", "32", "--num-envs", "4", "--minibatch-size", "64",
                 "--aux-minibatch-size", "64", "--policy-iterations", "2", "--steps", "256", "--torch-threads", "1",
                 "--no-progress", "--run-dir", str(run_dir), *extra])


def test_recurrent_ppg_trains_resumes_evaluates_and_fine_tunes(tmp_path, capsys):
    assert train(tmp_path / "run", "--checkpoint-every", "1") == 0
    saved = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["algorithm"]
    assert {"actor_lstm.weight_ih_l0", "critic_lstm.weight_ih_l0", "aux_value_head.weight"} <= set(saved["policy"])
    assert train(tmp_path / "run", "--steps", "512", "--resume") == 0
    rows = list(csv.DictReader((tmp_path / "run" / "metrics.csv").open()))
    assert int(float(rows[-1]["step"])) == 512 and sum(1 for row in rows if row.get("aux/states")) == 2  # an auxiliary phase every 2 rollouts
    capsys.readouterr()
    assert main(["eval", "--checkpoint", str(tmp_path / "run" / "checkpoint.pt"), "--episodes", "2"]) == 0
    assert "over 2 episodes (greedy actions)" in capsys.readouterr().out
    assert train(tmp_path / "tuned", "--from", str(tmp_path / "run" / "checkpoint.pt"), command="finetune") == 0
