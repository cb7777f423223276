"""NPG and TRPO: the KL, the trust region, the step length, gradient routing, validation, learning CartPole."""

import copy
import json
import math

import gymnasium as gym
import pytest
import torch

from tests.learning import assert_majority, mean_of_last, train_seeds
from tests.cli_helpers import voidrl as voidrl_cli
from voidrl.algos import NPG, TRPO, NPGConfig, TRPOConfig
from voidrl.algos.npg import add_flat_step
from voidrl.nets.actor_critic import first_step_inputs
from voidrl.nets.distributions import Categorical, DiagonalGaussian, MixtureOfGaussians, TanhGaussian, kl_divergence
from tests.test_ppo import random_rollout

DISCRETE = gym.spaces.Discrete(3)
BOX = gym.spaces.Box(-1.0, 1.0, (2,))
F64 = torch.float64


def make(cls, action_space=DISCRETE, seed=0, **config):
    torch.manual_seed(seed)
    return cls(cls.config_class(hidden_sizes=(16, 16), **config), (5,), action_space)


def actor_snapshot(algo) -> list[torch.Tensor]:
    return [p.detach().clone() for p in algo.policy.actor_parameters()]


def bitwise_equal(params, saved) -> bool:
    return all(torch.equal(p.detach().view(torch.int32), s.view(torch.int32)) for p, s in zip(params, saved))


def mean_kl(before, after, obs) -> float:
    with torch.no_grad():
        return kl_divergence(before.distribution(*first_step_inputs(before, obs)), after.distribution(*first_step_inputs(after, obs))).mean().item()


# --- the KL divergence ---------------------------------------------------------------------------


def test_gaussian_kl_matches_torch_distributions():
    g = torch.Generator().manual_seed(0)
    mean_old, mean_new = torch.randn(64, 3, generator=g, dtype=F64), torch.randn(64, 3, generator=g, dtype=F64)
    log_std_old, log_std_new = torch.randn(64, 3, generator=g, dtype=F64), torch.randn(3, generator=g, dtype=F64)
    expected = torch.distributions.kl_divergence(
        torch.distributions.Normal(mean_old, log_std_old.exp()), torch.distributions.Normal(mean_new, log_std_new.exp())
    ).sum(-1)
    ours = kl_divergence(DiagonalGaussian(mean_old, log_std_old), DiagonalGaussian(mean_new, log_std_new))
    assert ours.shape == (64,)
    torch.testing.assert_close(ours, expected, rtol=1e-12, atol=1e-12)
    low, high = torch.tensor([-1.0, 0.0, -3.0], dtype=F64), torch.tensor([1.0, 2.0, 5.0], dtype=F64)
    squashed = kl_divergence(TanhGaussian(mean_old, log_std_old, low, high), TanhGaussian(mean_new, log_std_new, low, high))
    torch.testing.assert_close(squashed, expected, rtol=1e-12, atol=1e-12)


def test_tanh_gaussian_kl_equals_a_monte_carlo_estimate_over_squashed_actions():
    """KL is invariant under the invertible squash: E_{a ~ old}[log p_old(a) - log p_new(a)] with the action densities."""
    low, high = torch.tensor([-1.0, 0.0], dtype=F64), torch.tensor([1.0, 4.0], dtype=F64)
    old = TanhGaussian(torch.tensor([[0.3, -0.5]], dtype=F64), torch.tensor([-0.7, -0.4], dtype=F64), low, high)
    new = TanhGaussian(torch.tensor([[0.1, 0.0]], dtype=F64), torch.tensor([-0.5, -0.6], dtype=F64), low, high)
    torch.manual_seed(0)
    samples = 200_000
    wide_old, wide_new = (TanhGaussian(d.mean.expand(samples, -1), d.log_std[0], low, high) for d in (old, new))
    actions = wide_old.sample()
    log_ratio = wide_old.log_prob(actions) - wide_new.log_prob(actions)
    standard_error = log_ratio.std().item() / math.sqrt(samples)
    assert kl_divergence(old, new).item() == pytest.approx(log_ratio.mean().item(), abs=4 * standard_error)


def test_categorical_kl_by_hand():
    old = Categorical(torch.tensor([[0.5, 0.25, 0.25], [0.2, 0.3, 0.5]]).log())
    new = Categorical(torch.tensor([[0.25, 0.25, 0.5], [0.2, 0.3, 0.5]]).log())
    # 0.5 log(0.5 / 0.25) + 0.25 log(1) + 0.25 log(0.25 / 0.5) = 0.25 log 2; identical rows give 0
    torch.testing.assert_close(kl_divergence(old, new), torch.tensor([0.25 * math.log(2.0), 0.0]))


@pytest.mark.parametrize("kind", ["categorical", "gaussian", "tanh_gaussian"])
def test_detached_copy_is_off_the_graph_and_keeps_its_values(kind):
    space = DISCRETE if kind == "categorical" else BOX
    algo = make(TRPO, space, **({} if kind == "categorical" else {"continuous_policy": kind}))
    obs = torch.randn(8, 5)
    dist = algo.policy.distribution(*first_step_inputs(algo.policy, obs))
    old = dist.detach()
    kl = kl_divergence(old, dist)
    assert torch.equal(kl, torch.zeros(8))
    gradients = torch.autograd.grad(kl.mean(), algo.policy.actor_parameters(), allow_unused=True)
    assert all(g is None or g.abs().max() < 1e-7 for g in gradients)  # KL's gradient at theta_old is 0
    with torch.no_grad():  # a state-independent log_std is a view of the parameter: the copy must not follow it
        for p in algo.policy.actor_parameters():
            p.add_(0.1 * torch.randn_like(p))
    assert (kl_divergence(old, algo.policy.distribution(*first_step_inputs(algo.policy, obs))) > 0).all()


def test_kl_rejects_the_mixture_and_mismatched_kinds():
    mixture = MixtureOfGaussians(torch.zeros(2, 1, 3), torch.zeros(2, 1, 3), torch.ones(2, 1, 3))
    with pytest.raises(TypeError, match="no closed-form"):
        kl_divergence(mixture, mixture)
    with pytest.raises(TypeError, match="one kind"):
        kl_divergence(Categorical(torch.zeros(2, 3)), DiagonalGaussian(torch.zeros(2, 3), torch.zeros(3)))


# --- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize("config_class", [NPGConfig, TRPOConfig])
def test_reject_the_mixture_policy_and_a_shared_body(config_class):
    with pytest.raises(ValueError, match="mixture.*no closed-form KL"):
        config_class(continuous_policy="mixture").validate()
    with pytest.raises(ValueError, match=r"separate actor and critic networks \(shared=False\)"):
        config_class(shared=True).validate()


def test_reject_bad_step_settings():
    with pytest.raises(ValueError, match="step_size"):
        NPGConfig(step_size=0.0).validate()
    with pytest.raises(ValueError, match="max_kl"):
        TRPOConfig(max_kl=-1.0).validate()
    with pytest.raises(ValueError, match="backtrack_ratio"):
        TRPOConfig(backtrack_ratio=1.0).validate()


# --- the trust region ----------------------------------------------------------------------------


@pytest.mark.parametrize("cg_damping", [0.1, 0.0])
@pytest.mark.parametrize("action_space", [DISCRETE, BOX])
@pytest.mark.parametrize("seed", range(4))
def test_trpo_update_never_exceeds_the_kl_bound(action_space, seed, cg_damping):
    """Undamped, the full step on these small random batches overshoots the bound (see the next test)."""
    algo = make(TRPO, action_space, seed, max_kl=0.01, cg_damping=cg_damping, backtrack_ratio=0.5)
    rollout = random_rollout(action_space=action_space, seed=seed)
    before = copy.deepcopy(algo.policy)
    saved = actor_snapshot(algo)
    metrics = algo.update(rollout, 0.0)
    kl = mean_kl(before, algo.policy, rollout.flat("obs"))
    if metrics["train/step_accepted"]:
        assert 0.0 < kl <= 0.01
        assert metrics["train/kl"] == pytest.approx(kl, rel=1e-6)
        assert metrics["train/surrogate_improvement"] > 0
    else:
        assert bitwise_equal(algo.policy.actor_parameters(), saved)


def test_trpo_backtracks_when_the_full_step_overshoots():
    """Without damping, CG's direction on 64 samples leans on near-null directions of F and the quadratic
    model underestimates the KL of the full step: the line search must shrink it."""
    for seed in range(4):
        algo = make(TRPO, DISCRETE, seed, max_kl=0.05, cg_damping=0.0, backtrack_ratio=0.5)
        rollout = random_rollout(seed=seed)
        before = copy.deepcopy(algo.policy)
        metrics = algo.update(rollout, 0.0)
        assert metrics["train/step_accepted"] == 1.0 and metrics["train/backtracks"] >= 1
        assert mean_kl(before, algo.policy, rollout.flat("obs")) <= 0.05


@pytest.mark.parametrize("seed", range(3))
def test_trpo_with_an_impossible_kl_bound_keeps_the_old_parameters_bit_for_bit(seed):
    algo = make(TRPO, DISCRETE, seed, max_kl=1e-30, max_backtracks=4)
    saved = actor_snapshot(algo)
    metrics = algo.update(random_rollout(seed=seed), 0.0)
    assert metrics["train/step_accepted"] == 0.0 and metrics["train/backtracks"] == 4.0
    assert metrics["train/kl"] == 0.0 and metrics["train/step_norm"] == 0.0
    assert bitwise_equal(algo.policy.actor_parameters(), saved)


class NeverImproves(TRPO):
    """TRPO whose line search sees no improvement, while recording that the candidates did move the parameters."""

    def accept_step(self, gradient, direction, fisher_product, evaluate):
        self.moved = []

        def no_improvement(step):
            _, kl = evaluate(step)
            self.moved.append(kl > 0)
            return 0.0, kl

        return super().accept_step(gradient, direction, fisher_product, no_improvement)


def test_trpo_restores_the_old_parameters_bit_for_bit_after_a_failed_line_search():
    algo = make(NeverImproves, BOX, max_backtracks=3)
    saved = actor_snapshot(algo)
    metrics = algo.update(random_rollout(action_space=BOX), 0.0)
    assert algo.moved == [True, True, True]
    assert metrics["train/step_accepted"] == 0.0 and metrics["train/backtracks"] == 3.0
    assert bitwise_equal(algo.policy.actor_parameters(), saved)


@pytest.mark.parametrize("cls", [NPG, TRPO])
def test_zero_advantages_take_no_step(cls):
    algo = make(cls, DISCRETE)
    saved = actor_snapshot(algo)
    metrics = algo.update(random_rollout(zero_rewards=True), 0.0)
    assert metrics["train/step_accepted"] == 0.0 and metrics["train/surrogate_improvement"] == 0.0
    assert bitwise_equal(algo.policy.actor_parameters(), saved)


# --- the natural-gradient step -------------------------------------------------------------------


class RecordsQuadraticModel(NPG):
    """NPG that evaluates 0.5 s^T (F + damping I) s of its step while the Fisher product is valid."""

    def accept_step(self, gradient, direction, fisher_product, evaluate):
        step, metrics = super().accept_step(gradient, direction, fisher_product, evaluate)
        self.quadratic_kl = 0.5 * (step @ fisher_product(step)).item()
        return step, metrics


@pytest.mark.parametrize("cg_damping", [0.1, 0.0])
@pytest.mark.parametrize("action_space", [DISCRETE, BOX])
@pytest.mark.parametrize("step_size", [0.05, 0.3])
def test_npg_step_has_quadratic_kl_model_step_size_squared_over_two(action_space, step_size, cg_damping):
    """CG's iterate d (from 0) satisfies d^T A d = g . d after any number of iterations, A = F + damping I,
    so 0.5 s^T A s = alpha^2 / 2 for s = alpha d / sqrt(g . d), converged or not."""
    algo = make(RecordsQuadraticModel, action_space, step_size=step_size, cg_damping=cg_damping)
    metrics = algo.update(random_rollout(action_space=action_space), 0.0)
    assert algo.quadratic_kl == pytest.approx(step_size**2 / 2, rel=1e-3)
    assert metrics["train/kl"] == pytest.approx(step_size**2 / 2, rel=0.5)  # the true KL, to second order


def test_flat_step_is_read_row_major_whatever_the_memory_layout():
    transposed = torch.nn.Parameter(torch.zeros(3, 4).t())  # [4, 3], column-major in memory
    vector = torch.nn.Parameter(torch.ones(2))
    base = [transposed.detach().clone(), vector.detach().clone()]
    add_flat_step([transposed, vector], base, torch.arange(14.0))
    assert torch.equal(transposed, torch.arange(12.0).reshape(4, 3))
    assert torch.equal(vector, torch.tensor([13.0, 14.0]))


# --- gradient routing, spaces, checkpoints -------------------------------------------------------


@pytest.mark.parametrize("cls", [NPG, TRPO])
def test_value_fit_never_touches_actor_parameters(cls):
    algo = make(cls, BOX)
    rollout = random_rollout(action_space=BOX)
    saved_actor = actor_snapshot(algo)
    saved_critic = [p.detach().clone() for p in algo.policy.critic_parameters()]
    metrics = algo.fit_value(rollout.flat("obs"), torch.randn(64))
    assert math.isfinite(metrics["train/value_loss"])
    assert bitwise_equal(algo.policy.actor_parameters(), saved_actor)
    assert all(not torch.equal(p, s) for p, s in zip(algo.policy.critic_parameters(), saved_critic))


@pytest.mark.parametrize(("continuous_policy", "std_parameterization"),
                         [("gaussian", "log_std"), ("gaussian", "softplus"), ("tanh_gaussian", "log_std")])
def test_gaussian_trpo_update_runs_on_a_box(continuous_policy, std_parameterization):
    algo = make(TRPO, BOX, continuous_policy=continuous_policy, std_parameterization=std_parameterization)
    rollout = random_rollout(action_space=BOX)
    before = copy.deepcopy(algo.policy)
    metrics = algo.update(rollout, 0.0)
    expected = {"train/surrogate_improvement", "train/kl", "train/step_norm", "train/value_loss",
                "train/explained_variance", "train/entropy", "train/backtracks", "train/step_accepted"}
    assert expected <= set(metrics) and all(math.isfinite(v) for v in metrics.values())
    assert metrics["train/step_accepted"] == 1.0
    assert mean_kl(before, algo.policy, rollout.flat("obs")) <= 0.01


def test_state_dict_round_trip():
    algo = make(TRPO, DISCRETE)
    algo.update(random_rollout(), 0.0)
    other = make(TRPO, DISCRETE, seed=1)
    other.load_state_dict(algo.state_dict())
    assert all(torch.equal(a, b) for a, b in zip(algo.policy.parameters(), other.policy.parameters()))
    assert other.critic.optimizer.state_dict()["state"][0]["step"] == algo.critic.optimizer.state_dict()["state"][0]["step"]


# --- learning CartPole ---------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("algo", [pytest.param("npg", marks=pytest.mark.benchmark), "trpo"])
def test_most_seeds_solve_cartpole_in_40k_steps(tmp_path, algo):
    """NPG's seeds 0-2 first average 475 at 22-26k steps here and hold 500 by 60k; the budget leaves ~15k
    steps of margin, and the majority criterion one seed that another CPU sends another way. NPG's run is
    opt-in (``--run-benchmarks``) to keep the default suite within ten minutes: TRPO's shares every part of
    its update but the step acceptance, which the unit tests check against references."""
    run_dirs = train_seeds(tmp_path, algo, 40_000)
    assert_majority([mean_of_last(run_dir) for run_dir in run_dirs], 450)


def test_cli_trains_trpo(tmp_path):
    result = voidrl_cli("train", "trpo", "--env", "CartPole-v1", "--steps", "4096", "--run-dir", "run", "--no-progress", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "run" / "checkpoint.pt").is_file()
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["algo"] == "trpo" and config["env"]["num_envs"] == 2  # the cartpole preset
