"""PPO: gradient routing, target-KL early stop, checkpoint round trips."""

import copy
import dataclasses

import gymnasium as gym
import pytest
import torch

from voidrl.algos import PPO, PPOConfig
from voidrl.io.checkpoint import load_checkpoint, save_checkpoint
from voidrl.math import clipped_surrogate_loss, value_loss
from voidrl.nets import ActorCritic
from voidrl.nets.actor_critic import first_step_inputs
from voidrl.rollout import RolloutStorage
from voidrl.seeding import rng_state, set_rng_state
from voidrl.training.preflight import preflight
from voidrl.training.presets import make_config

DISCRETE = gym.spaces.Discrete(3)
BOX = gym.spaces.Box(-1.0, 1.0, (2,))


def random_rollout(T=16, N=4, obs_dim=5, action_space=DISCRETE, seed=0, zero_rewards=False):
    """Random observations, actions inside the box, rewards and values; optionally all rewards and values 0."""
    g = torch.Generator().manual_seed(seed)
    continuous = isinstance(action_space, gym.spaces.Box)
    storage = RolloutStorage(T, N, (obs_dim,), torch.float32, action_space.shape, torch.float32 if continuous else torch.long)
    storage.obs.copy_(torch.randn(T, N, obs_dim, generator=g))
    if continuous:
        storage.actions.copy_(torch.rand(T, N, *action_space.shape, generator=g) * 1.8 - 0.9)
    else:
        storage.actions.copy_(torch.randint(0, action_space.n, (T, N), generator=g))
    storage.log_probs.copy_(-torch.rand(T, N, generator=g))
    if not zero_rewards:
        storage.values.copy_(torch.randn(T, N, 1, generator=g))
        storage.next_values.copy_(torch.randn(T, N, 1, generator=g))
        storage.rewards.copy_(torch.randn(T, N, generator=g))
    storage.terminated.copy_(torch.rand(T, N, generator=g) < 0.1)
    storage.truncated.copy_(torch.rand(T, N, generator=g) < 0.05)
    return storage


@pytest.mark.parametrize("action_space", [DISCRETE, BOX])
def test_critic_loss_reaches_only_critic_parameters_when_separate(action_space):
    policy = ActorCritic((5,), action_space, shared=False)
    obs = torch.randn(8, 5)
    dist, values, _ = policy(*first_step_inputs(policy, obs))
    loss, _ = value_loss(values, torch.randn(8))
    loss.backward()
    critic = {id(p) for p in policy.critic_parameters()}
    for name, param in policy.named_parameters():
        if id(param) in critic:
            assert param.grad is not None and param.grad.abs().sum() > 0, name
        else:
            assert param.grad is None, name


def test_policy_loss_reaches_no_critic_parameter_when_separate():
    policy = ActorCritic((5,), DISCRETE, shared=False)
    obs = torch.randn(8, 5)
    dist, _, _ = policy(*first_step_inputs(policy, obs))
    actions = dist.sample()
    loss, _ = clipped_surrogate_loss(dist.log_prob(actions), torch.zeros(8), torch.randn(8), 0.2)
    loss.backward()
    for param in policy.critic_parameters():
        assert param.grad is None


def test_shared_body_receives_both_gradients():
    policy = ActorCritic((5,), DISCRETE, shared=True)
    _, values, _ = policy(*first_step_inputs(policy, torch.randn(8, 5)))
    values.sum().backward()
    assert all(p.grad is not None for p in policy.actor_body.parameters())
    assert policy.policy_head.weight.grad is None


def test_policy_head_is_initialised_100x_smaller():
    policy = ActorCritic((5,), DISCRETE, hidden_sizes=(64, 64))
    head = policy.policy_head.weight
    body = policy.actor_body.net[2].weight
    ratio = (head.norm() / head.shape[0] ** 0.5) / (body.norm() / body.shape[0] ** 0.5)
    assert ratio.item() == pytest.approx(0.01 / 2 ** 0.5, rel=1e-3)


def test_update_changes_parameters_and_reports_metrics():
    algo = PPO(PPOConfig(num_steps=16, minibatch_size=16, epochs=2), (5,), DISCRETE)
    before = copy.deepcopy(algo.policy.state_dict())
    metrics = algo.update(random_rollout(), progress=0.0)
    assert metrics["train/gradient_steps"] == 8
    for name in ("train/policy_loss", "train/value_loss", "train/entropy", "train/approx_kl",
                 "train/clip_fraction", "train/explained_variance", "train/learning_rate"):
        assert name in metrics
    assert any(not torch.equal(before[k], v) for k, v in algo.policy.state_dict().items())


def test_target_kl_stops_before_the_offending_step():
    config = PPOConfig(num_steps=16, minibatch_size=8, epochs=50, learning_rate=0.05, target_kl=0.01)
    algo = PPO(config, (5,), DISCRETE)
    rollout = random_rollout()
    with torch.no_grad():  # the rollout's log-probabilities are the current policy's, as after collection
        rollout.log_probs.view(-1).copy_(algo.policy.distribution(*first_step_inputs(algo.policy, rollout.flat("obs"))).log_prob(rollout.flat("actions")))
    metrics = algo.update(rollout, progress=0.0)
    assert metrics["train/stopped_early"] == 1.0
    assert 0 < metrics["train/gradient_steps"] < 50 * 8


def test_an_update_steps_at_its_schedules_values():
    algo = PPO(PPOConfig(num_steps=16, minibatch_size=64, epochs=1, learning_rate="lin_1e-3", clip="lin_0.2"), (5,), DISCRETE)
    metrics = algo.update(random_rollout(), progress=0.75)
    assert metrics["train/learning_rate"] == pytest.approx(2.5e-4)
    assert algo.parameters.optimizer.param_groups[0]["lr"] == pytest.approx(2.5e-4)
    assert metrics["train/clip"] == pytest.approx(0.05) and algo.now.clip == pytest.approx(0.05)


@pytest.mark.parametrize("action_space", [DISCRETE, BOX])
def test_checkpoint_round_trip_gives_identical_actions_and_next_update(tmp_path, action_space):
    config = PPOConfig(num_steps=16, minibatch_size=16, epochs=2)
    torch.manual_seed(0)
    original = PPO(config, (5,), action_space)
    original.update(random_rollout(action_space=action_space, seed=1), progress=0.0)  # non-trivial optimiser state
    save_checkpoint(tmp_path / "ckpt.pt", {"algorithm": original.state_dict(), "rng": rng_state()})

    restored = PPO(config, (5,), action_space)
    payload = load_checkpoint(tmp_path / "ckpt.pt")
    restored.load_state_dict(payload["algorithm"])
    obs = torch.randn(32, 5)
    set_rng_state(payload["rng"])
    actions_a, _ = original.policy.act(*first_step_inputs(original.policy, obs))
    set_rng_state(payload["rng"])
    actions_b, _ = restored.policy.act(*first_step_inputs(restored.policy, obs))
    assert torch.equal(actions_a, actions_b)

    rollout = random_rollout(action_space=action_space, seed=2)
    set_rng_state(payload["rng"])
    metrics_a = original.update(rollout, progress=0.5)
    set_rng_state(payload["rng"])
    metrics_b = restored.update(rollout, progress=0.5)
    assert metrics_a == metrics_b
    for (name, a), b in zip(original.policy.state_dict().items(), restored.policy.state_dict().values()):
        assert torch.equal(a, b), name


@pytest.mark.slow
def test_compiled_update_follows_the_eager_one_and_repeats_itself():
    """``compile``: the same update as eager up to rounding (parameters within 1e-5 after 8 gradient steps), the same
    to the bit from the same start, and refused for a recurrent policy."""
    config = PPOConfig(num_steps=16, minibatch_size=16, epochs=2)
    compiled_config = PPOConfig(num_steps=16, minibatch_size=16, epochs=2, compile=True)
    rollout = random_rollout()
    algos = []
    for each in (config, compiled_config, compiled_config):
        torch.manual_seed(0)
        algos.append(PPO(each, (5,), DISCRETE))
        algos[-1].update(rollout, progress=0.0)
    assert algos[0].gradient == algos[0].eager_gradient and algos[1].gradient != algos[1].eager_gradient
    eager, compiled, again = (algo.policy.state_dict() for algo in algos)
    for name in eager:
        torch.testing.assert_close(compiled[name], eager[name], rtol=1e-5, atol=1e-5)
        assert torch.equal(compiled[name], again[name])
    with pytest.raises(ValueError, match="compile needs a feed-forward policy"):
        PPOConfig(memory="lstm", compile=True).validate()


@pytest.mark.slow
def test_a_compiled_update_takes_scheduled_values_without_recompiling():
    """The clip range and entropy weight reach the compiled loss as tensors: three updates at three values compile
    once, and each follows the eager update at its value."""
    config = PPOConfig(num_steps=16, minibatch_size=16, epochs=1, clip="lin_0.3", entropy_coef="lin_0.05")
    rollout = random_rollout()
    algos = []
    torch._dynamo.reset()  # compiles of earlier tests in this process (other configs) would count as recompiles
    with torch._dynamo.config.patch(error_on_recompile=True):
        for compile_ in (False, True):
            torch.manual_seed(0)
            algos.append(PPO(dataclasses.replace(config, compile=compile_), (5,), DISCRETE))
            for progress in (0.0, 0.3, 0.6):
                metrics = algos[-1].update(rollout, progress=progress)
            assert metrics["train/clip"] == pytest.approx(0.12) and metrics["train/entropy_coef"] == pytest.approx(0.02)
    eager, compiled = (algo.policy.state_dict() for algo in algos)
    for name in eager:
        torch.testing.assert_close(compiled[name], eager[name], rtol=1e-5, atol=1e-5)


def test_bfloat16_bodies_round_the_features_and_keep_heads_losses_and_parameters_float32():
    """``bfloat16``: the bodies' features are float32 tensors holding bfloat16 values (8 significant bits) within
    bfloat16's rounding of the float32 network's; the heads' outputs, the parameters and the optimiser's state stay
    float32; an update lands near float32's and repeats itself to the bit; a recurrent policy is refused."""
    rollout = random_rollout()
    algos = []
    for bfloat16 in (False, True, True):
        torch.manual_seed(0)
        algos.append(PPO(PPOConfig(num_steps=16, minibatch_size=16, epochs=2, bfloat16=bfloat16), (5,), DISCRETE))
    plain, rounded, _ = (algo.policy for algo in algos)
    obs, state, starts = first_step_inputs(plain, rollout.obs[0])
    exact, features = plain.encode(obs, state, starts)[0], rounded.encode(obs, state, starts)[0]
    assert features.dtype == torch.float32 and torch.equal(features, features.bfloat16().float())
    assert not torch.equal(features, exact)
    torch.testing.assert_close(features, exact, rtol=2 ** -6, atol=2 ** -6)
    dist, values, _ = rounded.forward_heads(obs, state, starts)
    assert dist.log_probs.dtype == values.dtype == torch.float32

    for algo in algos:
        torch.manual_seed(1)  # the same minibatches
        algo.update(rollout, progress=0.0)
    exact_after, after, again = (algo.policy.state_dict() for algo in algos)
    for name in exact_after:
        assert after[name].dtype == torch.float32 and torch.equal(after[name], again[name])
        torch.testing.assert_close(after[name], exact_after[name], rtol=1e-2, atol=1e-3)
    assert all(value.dtype == torch.float32 for group in algos[1].parameters.optimizer.state.values()
               for value in group.values() if value.is_floating_point())
    with pytest.raises(ValueError, match="bfloat16 needs a feed-forward policy"):
        PPOConfig(memory="lstm", bfloat16=True).validate()


def test_compile_without_a_cpp_compiler_is_refused_before_the_run(monkeypatch):
    monkeypatch.setenv("CXX", "no-such-compiler-here")
    with pytest.raises(ValueError, match="compile needs a C\\+\\+ compiler .*'no-such-compiler-here' is not on the PATH"):
        preflight(make_config("ppo", compile=True))


def test_a_loss_needing_another_field_adds_it_in_batch_fields_and_update_cuts_it_into_minibatches():
    class WeightedPPO(PPO):
        """Each step's surrogate weighted by a field of its own (here: 1 where the step did not end an episode)."""

        def batch_fields(self, rollout):
            return super().batch_fields(rollout) | {"weights": (~(rollout.terminated | rollout.truncated)).float()}

        def loss(self, batch):
            seen.append(batch["weights"].shape == batch["advantages"].shape == (16,))
            return super().loss({**batch, "advantages": batch["advantages"] * batch["weights"]})

    seen = []
    torch.manual_seed(0)
    algo = WeightedPPO(PPOConfig(num_steps=16, minibatch_size=16, epochs=2), (5,), DISCRETE)
    metrics = algo.update(random_rollout(), progress=0.0)
    assert seen and all(seen) and len(seen) == metrics["train/gradient_steps"] == 8  # 64 steps / 16, twice
