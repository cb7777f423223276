"""PPG: phases touch the right parameters, the auxiliary phase sees every stored rollout, a critic warm-up holds the policy."""

import csv

import gymnasium as gym
import pytest
import torch

import voidrl
from voidrl.algos import PPG, PPGConfig
from voidrl.callbacks import Callback
from voidrl.io.checkpoint import load_checkpoint, save_checkpoint
from voidrl.nets.actor_critic import first_step_inputs
from voidrl.rollout.frames import gather_across
from voidrl.training.loop import Trainer
from voidrl.training.presets import make_config
from tests.learning import assert_majority, mean_of_last, train_seeds
from tests.test_ppo import random_rollout

DISCRETE = gym.spaces.Discrete(3)


def policy_consistent_rollout(algo, seed=0):
    rollout = random_rollout(seed=seed)
    with torch.no_grad():
        rollout.log_probs.view(-1).copy_(algo.policy.distribution(*first_step_inputs(algo.policy, rollout.flat("obs"))).log_prob(rollout.flat("actions")))
    return rollout


def snapshot(params):
    return [p.detach().clone() for p in params]


def test_policy_phase_never_touches_the_critic_and_critic_phase_never_touches_the_policy():
    algo = PPG(PPGConfig(num_steps=16, minibatch_size=16, policy_iterations=100), (5,), DISCRETE)
    rollout = policy_consistent_rollout(algo)
    critic_before = snapshot(algo.policy.critic_parameters())
    actor_before = snapshot(algo.policy.actor_parameters())
    algo.policy_phase({"obs": rollout.obs, "actions": rollout.actions, "old_log_probs": rollout.log_probs,
                       "advantages": torch.randn(16, 4)} | algo.sequence_fields(rollout))
    assert all(torch.equal(a, b) for a, b in zip(critic_before, algo.policy.critic_parameters()))
    assert any(not torch.equal(a, b) for a, b in zip(actor_before, algo.policy.actor_parameters()))
    actor_before = snapshot(algo.policy.actor_parameters())
    algo.critic_phase({"obs": rollout.obs, "returns": torch.randn(16, 4, 1)} | algo.sequence_fields(rollout), 1, 16)
    assert all(torch.equal(a, b) for a, b in zip(actor_before, algo.policy.actor_parameters()))


def test_auxiliary_phase_runs_every_n_pi_updates_over_all_their_states():
    algo = PPG(PPGConfig(num_steps=16, minibatch_size=16, policy_iterations=3, aux_minibatch_size=8), (5,), DISCRETE)
    seen = []
    original = algo.auxiliary_phase

    def spy(head_weights):
        seen.append(gather_across(algo.aux_buffer.stores, torch.arange(algo.aux_buffer.num_states)))
        return original(head_weights)

    algo.auxiliary_phase = spy
    rollouts = [policy_consistent_rollout(algo, seed) for seed in range(6)]
    metrics = [algo.update(r, 0.0) for r in rollouts]
    assert [("aux/states" in m) for m in metrics] == [False, False, True, False, False, True]
    assert metrics[2]["aux/states"] == 3 * 16 * 4
    expected = torch.cat([r.flat("obs") for r in rollouts[3:]])
    assert torch.equal(seen[1], expected)  # exactly the three rollouts since the last phase, in order


def test_aux_kl_stop_halts_policy_updates_but_not_the_critic():
    config = PPGConfig(num_steps=16, minibatch_size=16, policy_iterations=1, aux_epochs=20, aux_minibatch_size=8,
                       learning_rate=0.05, aux_kl_stop=1e-4)
    algo = PPG(config, (5,), DISCRETE)
    metrics = algo.update(policy_consistent_rollout(algo), 0.0)
    assert metrics["aux/stopped_early"] == 1.0
    assert 0 < metrics["aux/policy_steps"] < 20 * 8


def test_auxiliary_policy_loss_never_reaches_the_critic():
    """Only the critic's own regression may move the critic during the aux phase."""
    config = PPGConfig(num_steps=16, minibatch_size=16, policy_iterations=1, aux_epochs=2, aux_minibatch_size=8)
    algo = PPG(config, (5,), DISCRETE)
    critic_losses = []

    def no_critic_regression(batch, share=1.0):
        critic_losses.append(share)
        return torch.zeros(())

    algo._critic_backward = no_critic_regression  # the critic's own regression is switched off
    critic_before = snapshot(algo.policy.critic_parameters())
    actor_before = snapshot(algo.policy.actor_parameters())
    rollout = random_rollout(seed=3)
    algo.aux_buffer.add(rollout.obs, torch.randn(16, 4, 1), algo.sequence_fields(rollout))
    metrics = algo.auxiliary_phase()
    assert metrics["aux/policy_steps"] == 2 * 8 and len(critic_losses) == 2 * 8
    assert all(torch.equal(a, b) for a, b in zip(critic_before, algo.policy.critic_parameters()))
    assert any(not torch.equal(a, b) for a, b in zip(actor_before, algo.policy.actor_parameters()))
    assert algo.critic.flat.grad.abs().sum() == 0  # the aux and clone losses left no critic gradient


def test_clone_kl_is_zero_against_the_unchanged_policy():
    algo = PPG(PPGConfig(num_steps=16), (5,), DISCRETE)
    obs = torch.randn(10, 5)
    dist = algo.policy.distribution(*first_step_inputs(algo.policy, obs))
    assert torch.allclose(dist.kl_from(dist.log_probs.detach()), torch.zeros(10), atol=1e-7)
    other = torch.log_softmax(torch.randn(10, 3), -1)
    assert (dist.kl_from(other) > 0).all()


def test_checkpoint_round_trip_keeps_the_auxiliary_buffer(tmp_path):
    config = PPGConfig(num_steps=16, minibatch_size=16, policy_iterations=2)
    algo = PPG(config, (5,), DISCRETE)
    algo.update(policy_consistent_rollout(algo), 0.0)
    save_checkpoint(tmp_path / "c.pt", {"algorithm": algo.state_dict()})
    restored = PPG(config, (5,), DISCRETE)
    restored.load_state_dict(load_checkpoint(tmp_path / "c.pt")["algorithm"])
    assert len(restored.aux_buffer) == 1
    everything = torch.arange(16 * 4)
    assert torch.equal(gather_across(restored.aux_buffer.stores, everything), gather_across(algo.aux_buffer.stores, everything))


def test_thesis_networks_and_head_scale():
    algo = PPG(PPGConfig(network="dqn2013", critic_network="nature"), (4, 84, 84), gym.spaces.Discrete(18))
    assert algo.policy.actor_body.out_features == 256 and algo.policy.critic_body.out_features == 512
    assert algo.policy.aux_value_head.weight.norm().item() == pytest.approx(0.01, rel=1e-3)


@pytest.mark.slow
def test_most_seeds_learn_cartpole_in_100k_steps(tmp_path):
    """At 100k steps seeds 0-9 here average 433.9, 500, 418.3, 500, 494.1 and 500 five times over their last 20
    episodes (Intel Xeon, 019f259); another CPU once left seed 0 at 165, and a change of rounding alone took seeds 0
    and 2 from above 450 to below it. So five seeds, of which most must pass 400; a learner that does not learn stays
    near 22."""
    run_dirs = train_seeds(tmp_path, "ppg", 100_000, seeds=(0, 1, 2, 3, 4))
    assert_majority([mean_of_last(run_dir) for run_dir in run_dirs], 400)


def test_gradient_accumulation_takes_the_same_steps_in_every_phase():
    """Chunks of 3 (so one chunk of each minibatch is shorter) give the whole-minibatch update."""
    results = []
    for chunk_size in (None, 3):
        torch.manual_seed(0)
        config = PPGConfig(num_steps=16, minibatch_size=8, policy_iterations=1, aux_epochs=2, aux_minibatch_size=8,
                           chunk_size=chunk_size)
        algo = PPG(config, (5,), DISCRETE)
        metrics = algo.update(policy_consistent_rollout(algo), 0.0)
        results.append((metrics, snapshot(algo.policy.parameters())))
    (whole, whole_params), (chunked, chunked_params) = results
    assert whole["aux/policy_steps"] == chunked["aux/policy_steps"] == 2 * 8
    for name in ("train/policy_loss", "train/approx_kl", "train/entropy", "train/grad_norm", "train/value_loss",
                 "aux/aux_value_loss", "aux/clone_kl", "aux/value_loss"):
        assert chunked[name] == pytest.approx(whole[name], rel=1e-4, abs=1e-7), name
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(whole_params, chunked_params))
    torch.manual_seed(0)
    untrained = snapshot(PPG(PPGConfig(num_steps=16), (5,), DISCRETE).policy.parameters())
    assert all(not torch.equal(a, b) for a, b in zip(whole_params, untrained))


TINY_CARTPOLE = {"env": "CartPole-v1", "num_envs": 2, "num_steps": 16, "minibatch_size": 16, "policy_iterations": 1,
                 "aux_minibatch_size": 16, "seed": 0, "progress": False}
"""Updates of 2 envs x 16 steps, an auxiliary phase after each rollout it keeps."""
STEPS_PER_UPDATE = 32


class EachUpdate(Callback):
    """The metrics and the actor's and critic's parameters after each update."""

    def __init__(self):
        self.metrics, self.actors, self.critics = [], [], []

    def on_update(self, step, metrics):
        policy = self.agent().policy
        self.metrics.append(metrics)
        self.actors.append(snapshot(policy.actor_parameters()))
        self.critics.append(snapshot(policy.critic_parameters()))


def same(params, others):
    return all(torch.equal(a, b) for a, b in zip(params, others, strict=True))


def test_critic_warmup_trains_the_critic_alone_for_its_rollouts(tmp_path):
    """Not even the auxiliary phase, due after every rollout here, moves the policy during the warm-up; the first
    one after it sees that rollout's states alone."""
    config = make_config("ppg", steps=3 * STEPS_PER_UPDATE, critic_warmup_rollouts=2, run_dir=str(tmp_path / "run"), **TINY_CARTPOLE)
    trainer = Trainer(config)
    initial_actor, initial_critic = snapshot(trainer.algo.policy.actor_parameters()), snapshot(trainer.algo.policy.critic_parameters())
    seen = EachUpdate()
    trainer.train([seen])
    assert same(seen.actors[0], initial_actor) and same(seen.actors[1], initial_actor)
    assert not same(seen.critics[0], initial_critic) and not same(seen.critics[1], seen.critics[0])
    assert not same(seen.actors[2], initial_actor)
    assert [("train/policy_loss" in m, "aux/states" in m) for m in seen.metrics] == [(False, False), (False, False), (True, True)]
    assert seen.metrics[2]["aux/states"] == STEPS_PER_UPDATE
    with open(tmp_path / "run" / "metrics.csv", newline="") as handle:
        assert [row["train/critic_warmup"] for row in csv.DictReader(handle)] == ["1", "1", "0"]


def test_without_a_warmup_the_first_update_moves_the_policy_and_logs_no_warmup(tmp_path):
    config = make_config("ppg", steps=STEPS_PER_UPDATE, critic_warmup_rollouts=0, run_dir=str(tmp_path / "run"), **TINY_CARTPOLE)
    trainer = Trainer(config)
    initial_actor = snapshot(trainer.algo.policy.actor_parameters())
    seen = EachUpdate()
    trainer.train([seen])
    assert not same(seen.actors[0], initial_actor)
    assert "train/policy_loss" in seen.metrics[0] and "train/critic_warmup" not in seen.metrics[0]


def test_a_resumed_run_goes_on_counting_the_warmup(tmp_path):
    options = {"critic_warmup_rollouts": 3, "run_dir": str(tmp_path / "run"), **TINY_CARTPOLE}
    first, resumed = EachUpdate(), EachUpdate()
    voidrl.train("ppg", steps=STEPS_PER_UPDATE, callbacks=[first], **options)
    voidrl.train("ppg", steps=4 * STEPS_PER_UPDATE, resume=True, callbacks=[resumed], **options)
    assert [m["train/critic_warmup"] for m in first.metrics + resumed.metrics] == [1.0, 1.0, 1.0, 0.0]
    assert same(resumed.actors[0], first.actors[0]) and same(resumed.actors[1], first.actors[0])
    assert not same(resumed.actors[2], first.actors[0])


def test_a_negative_warmup_is_refused_by_name():
    with pytest.raises(ValueError, match="critic_warmup_rollouts must be >= 0, got -1"):
        PPGConfig(critic_warmup_rollouts=-1).validate()
