"""Continuous policies: densities against numerical integrals, sampling, action persistence, ActorCritic wiring."""

import io
import math

import gymnasium as gym
import numpy as np
import pytest
import torch

from voidrl.nets import ActorCritic
from voidrl.nets.actor_critic import CONTINUOUS_POLICIES, STD_PARAMETERIZATIONS, first_step_inputs
from voidrl.nets.distributions import (
    SOFTPLUS_MIN_STD,
    Categorical,
    DiagonalGaussian,
    MixtureOfGaussians,
    MultiCategorical,
    TanhGaussian,
    softplus_std_offset,
)
from voidrl.nets.persistence import PersistentUniforms

F64 = torch.float64


def normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def normal_mass_between(lower: float, upper: float) -> float:
    """Phi(upper) - Phi(lower), from the tail that keeps precision (no difference of two numbers near 1)."""
    if lower > 0:
        return 0.5 * (math.erfc(lower / math.sqrt(2.0)) - math.erfc(upper / math.sqrt(2.0)))
    return normal_cdf(upper) - normal_cdf(lower)


def squashed_density_by_cdf(x: float, low: float, high: float, mean: float, std: float) -> float:
    """Density of center + half_range * tanh(u), u ~ N(mean, std), by central differences of its CDF
    P(a <= x) = Phi((atanh((x - center) / half_range) - mean) / std)."""
    center, half_range = 0.5 * (high + low), 0.5 * (high - low)
    step = 1e-4 * min(x - low, high - x)  # atanh bends on the scale of the distance to the bound

    def standardised(value):
        return (math.atanh((value - center) / half_range) - mean) / std

    return normal_mass_between(standardised(x - step), standardised(x + step)) / (2.0 * step)


def tanh_gaussian(mean, std, low, high) -> TanhGaussian:
    """One distribution ``[1, A]`` from per-coordinate lists."""
    return TanhGaussian(
        torch.tensor([mean], dtype=F64), torch.tensor(std, dtype=F64).log(),
        torch.tensor(low, dtype=F64), torch.tensor(high, dtype=F64),
    )


def repeat(dist: TanhGaussian, batch: int) -> TanhGaussian:
    return TanhGaussian(dist.mean.expand(batch, -1), dist.log_std.expand(batch, -1), dist.center - dist.half_range, dist.center + dist.half_range)


# (mean, std) of u on the box [-2, 3]: unimodal, and wide enough to pile mass towards the lower bound
TANH_CASES = [(0.3, 0.8), (-1.0, 1.2)]


@pytest.mark.parametrize("mean, std", TANH_CASES)
def test_tanh_gaussian_density_matches_finite_differences_of_its_cdf(mean, std):
    low, high = -2.0, 3.0
    xs = np.linspace(low + 0.01, high - 0.01, 97)
    dist = repeat(tanh_gaussian([mean], [std], [low], [high]), len(xs))
    density = dist.log_prob(torch.tensor(xs, dtype=F64)[:, None]).exp().numpy()
    expected = [squashed_density_by_cdf(x, low, high, mean, std) for x in xs]
    np.testing.assert_allclose(density, expected, rtol=1e-6)


def test_tanh_gaussian_2d_density_is_the_product_of_coordinate_densities():
    low, high, mean, std = [-1.0, 0.0], [1.0, 4.0], [-0.4, 1.2], [0.5, 1.5]
    g = torch.Generator().manual_seed(0)
    points = torch.tensor(low, dtype=F64) + torch.rand(50, 2, generator=g, dtype=F64) * torch.tensor([2.0, 4.0], dtype=F64)
    density = repeat(tanh_gaussian(mean, std, low, high), 50).log_prob(points).exp().numpy()
    expected = [
        math.prod(squashed_density_by_cdf(float(p[j]), low[j], high[j], mean[j], std[j]) for j in range(2)) for p in points
    ]
    np.testing.assert_allclose(density, expected, rtol=1e-6)


@pytest.mark.parametrize("mean, std", TANH_CASES)
def test_tanh_gaussian_density_integrates_to_one_over_the_box(mean, std):
    xs = torch.linspace(-2.0, 3.0, 200_001, dtype=F64)
    density = repeat(tanh_gaussian([mean], [std], [-2.0], [3.0]), len(xs)).log_prob(xs[:, None]).exp()
    assert torch.trapezoid(density, xs).item() == pytest.approx(1.0, abs=1e-6)


def test_tanh_gaussian_entropy_estimates_the_entropy_of_the_squashed_density():
    mean, std = 0.3, 0.8
    xs = torch.linspace(-2.0, 3.0, 200_001, dtype=F64)
    log_density = repeat(tanh_gaussian([mean], [std], [-2.0], [3.0]), len(xs)).log_prob(xs[:, None])
    numerical = -torch.trapezoid(torch.where(log_density > -700, log_density.exp() * log_density, 0.0), xs).item()
    torch.manual_seed(0)
    estimates = repeat(tanh_gaussian([mean], [std], [-2.0], [3.0]), 100_000).entropy()
    assert estimates.std().item() > 0.1  # a per-row random estimate, not a constant
    assert estimates.mean().item() == pytest.approx(numerical, abs=0.01)


def test_tanh_gaussian_sample_mode_and_saturated_log_prob():
    torch.manual_seed(0)
    low, high = torch.tensor([-2.0, 0.0]), torch.tensor([2.0, 1.0])
    mean = torch.tensor([[0.5, -1.0]]).expand(2000, -1)
    wide = TanhGaussian(mean, torch.full((2,), math.log(20.0)), low, high)
    actions = wide.sample()
    assert ((actions >= low) & (actions <= high)).all()
    assert (actions == high).any()  # float32 tanh saturates at this width...
    assert torch.isfinite(wide.log_prob(actions)).all()  # ...yet every log-probability stays finite
    torch.testing.assert_close(wide.mode()[0], torch.tensor([2.0 * math.tanh(0.5), 0.5 + 0.5 * math.tanh(-1.0)]))


# Two coordinates, three modes each: weights, means, stds per coordinate.
MIXTURE = {
    "weights": [[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]],
    "means": [[-0.5, 0.1, 0.8], [0.9, -0.9, 0.0]],
    "stds": [[0.1, 0.3, 0.05], [0.2, 0.2, 0.4]],
}


def mixture(weights, means, stds, batch: int = 1) -> MixtureOfGaussians:
    """``batch`` copies of one mixture given as ``[A][M]`` lists."""
    def param(values):
        return torch.tensor(values, dtype=F64).expand(batch, -1, -1)

    return MixtureOfGaussians(param(weights).log(), param(means), param(stds))


def coordinate(params: dict, j: int) -> dict:
    return {name: [values[j]] for name, values in params.items()}


def mixture_density_loop(x: float, weights, means, stds) -> float:
    return sum(w * math.exp(-0.5 * ((x - m) / s) ** 2) / (s * math.sqrt(2.0 * math.pi)) for w, m, s in zip(weights, means, stds))


@pytest.mark.parametrize("j", [0, 1])
def test_mixture_density_integrates_to_one_per_coordinate(j):
    xs = torch.linspace(-4.0, 4.0, 80_001, dtype=F64)
    density = mixture(**coordinate(MIXTURE, j), batch=len(xs)).log_prob(xs[:, None]).exp()
    assert torch.trapezoid(density, xs).item() == pytest.approx(1.0, abs=1e-8)


def test_mixture_log_prob_matches_a_loop_over_modes_and_coordinates():
    g = torch.Generator().manual_seed(0)
    actions = torch.cat([torch.rand(20, 2, generator=g, dtype=F64) * 3.0 - 1.5, torch.tensor([[2.5, -2.5]], dtype=F64)])
    log_prob = mixture(**MIXTURE, batch=len(actions)).log_prob(actions)
    expected = [
        sum(math.log(mixture_density_loop(float(a[j]), *(MIXTURE[k][j] for k in ("weights", "means", "stds")))) for j in range(2))
        for a in actions
    ]
    np.testing.assert_allclose(log_prob.numpy(), expected, rtol=1e-10)
    assert log_prob[-1].item() < 2.0 * math.log(1e-4)  # no +1e-4 floor inside the log


def numerical_entropy(params: dict) -> float:
    xs = torch.linspace(-5.0, 5.0, 100_001, dtype=F64)
    log_density = mixture(**params, batch=len(xs)).log_prob(xs[:, None])
    return -torch.trapezoid(torch.where(log_density > -700, log_density.exp() * log_density, 0.0), xs).item()


def test_mixture_entropy_bounds_the_numerical_entropy():
    bound = mixture(**MIXTURE).entropy().item()
    numerical = [numerical_entropy(coordinate(MIXTURE, j)) for j in range(2)]
    assert bound >= sum(numerical)
    separated = {"weights": [[0.3, 0.7]], "means": [[-0.8, 0.8]], "stds": [[0.05, 0.05]]}
    assert mixture(**separated).entropy().item() == pytest.approx(numerical_entropy(separated), abs=1e-6)
    overlapping = {"weights": [[0.5, 0.5]], "means": [[0.0, 0.1]], "stds": [[0.3, 0.3]]}
    assert mixture(**overlapping).entropy().item() > numerical_entropy(overlapping) + 0.5


def test_mixture_entropy_is_weight_entropy_plus_expected_mode_entropy():
    # per coordinate: H(1/2, 1/2) = log 2; H(N(., s)) = log(2 pi e s^2) / 2 for s = 1 and 2, each with weight 1/2
    dist = mixture([[0.5, 0.5]] * 2, [[0.0, 0.7]] * 2, [[1.0, 2.0]] * 2)
    one_coordinate = math.log(2.0) + 0.5 * math.log(2 * math.pi * math.e) + 0.5 * math.log(2.0)
    assert one_coordinate == pytest.approx(2.458660, abs=1e-6)
    assert dist.entropy().item() == pytest.approx(2.0 * one_coordinate, abs=1e-12)


def test_mixture_from_head_softmaxes_clamps_and_squashes_std():
    raw = torch.zeros(1, 2, 3, 3)
    raw[0, :, :, 0] = torch.tensor([0.0, math.log(2.0), math.log(5.0)])
    raw[0, :, :, 1] = torch.tensor([-3.0, 0.4, 2.0])
    raw[0, :, :, 2] = torch.tensor([0.0, -2.0, 10.0])
    dist = MixtureOfGaussians.from_head(raw)
    torch.testing.assert_close(dist.log_weights.exp()[0, 0], torch.tensor([1.0, 2.0, 5.0]) / 8.0)
    torch.testing.assert_close(dist.means[0, 0], torch.tensor([-1.0, 0.4, 1.0]))
    # std = sigmoid(raw) / A + 1e-4 with A = 2 (sigmoid(+raw), not the notebook's sampling sigmoid(-raw))
    expected_stds = torch.tensor([0.5 / 2, 1.0 / (1.0 + math.exp(2.0)) / 2, 1.0 / (1.0 + math.exp(-10.0)) / 2]) + 1e-4
    torch.testing.assert_close(dist.stds[0, 1], expected_stds)


def test_mixture_sample_with_fixed_uniforms_picks_the_mode_by_inverse_cdf():
    # coordinate 0: weights (0.2, 0.5, 0.3) -> cumulative (0.2, 0.7, 1.0); means (-0.5, 0.1, 0.8)
    dist = mixture(**MIXTURE, batch=6)
    uniforms = torch.full((6, 2, 2), 0.5, dtype=F64)
    uniforms[:, 0, 0] = torch.tensor([0.05, 0.19, 0.21, 0.69, 0.71, 0.99])
    actions = dist.sample(uniforms)
    torch.testing.assert_close(actions[:, 0], torch.tensor([-0.5, -0.5, 0.1, 0.1, 0.8, 0.8], dtype=F64))
    torch.testing.assert_close(dist.sample(uniforms), actions, rtol=0, atol=0)
    uniforms[:, 0, 1] = normal_cdf(1.0)  # one standard deviation above the chosen mean
    torch.testing.assert_close(dist.sample(uniforms)[:, 0], torch.tensor([-0.4, -0.4, 0.4, 0.4, 0.85, 0.85], dtype=F64))
    torch.testing.assert_close(dist.mode()[0], torch.tensor([0.1, 0.9], dtype=F64))
    first_mode_empty = mixture([[0.0, 0.5, 0.5]], [[-0.5, 0.1, 0.8]], [[0.1, 0.1, 0.1]])
    assert first_mode_empty.sample(torch.tensor([[[0.0, 0.5]]], dtype=F64)).item() == pytest.approx(0.1)


def test_mixture_fresh_samples_have_the_mixture_mean_and_variance():
    torch.manual_seed(0)
    samples = mixture(**MIXTURE, batch=200_000).sample()
    for j in range(2):
        w, m, s = (np.array(MIXTURE[k][j]) for k in ("weights", "means", "stds"))
        mean = (w * m).sum()
        variance = (w * (s**2 + m**2)).sum() - mean**2
        assert samples[:, j].mean().item() == pytest.approx(mean, abs=0.005)
        assert samples[:, j].var().item() == pytest.approx(variance, abs=0.005)


def test_persistence_one_never_redraws():
    persistent = PersistentUniforms(8, 3, 1.0, torch.Generator().manual_seed(0))
    first = persistent.draw().clone()
    assert first.shape == (8, 3, 2) and ((first >= 0) & (first < 1)).all()
    assert all(torch.equal(persistent.draw(), first) for _ in range(100))


def test_persistence_zero_redraws_every_env_every_time():
    persistent = PersistentUniforms(8, 3, 0.0, torch.Generator().manual_seed(0))
    previous = persistent.uniforms.clone()
    for _ in range(100):
        current = persistent.draw().clone()
        assert (current != previous).all()
        previous = current


def test_intermediate_persistence_redraws_whole_envs_at_rate_one_minus_p():
    num_envs, draws = 64, 2000
    persistent = PersistentUniforms(num_envs, 3, 0.75, torch.Generator().manual_seed(0))
    previous = persistent.uniforms.clone()
    redraws = torch.zeros(num_envs)
    for _ in range(draws):
        current = persistent.draw().clone()
        changed = current != previous
        assert torch.equal(changed.all((1, 2)), changed.any((1, 2)))  # all coordinates of an env together
        redraws += changed.all((1, 2)).float()
        previous = current
    rates = redraws / draws
    assert rates.mean().item() == pytest.approx(0.25, abs=0.01)
    assert (rates - 0.25).abs().max().item() < 0.05


def test_persistent_uniforms_state_dict_round_trip_reproduces_next_draws():
    persistent = PersistentUniforms(8, 3, 0.5, torch.Generator().manual_seed(0))
    for _ in range(5):
        persistent.draw()
    buffer = io.BytesIO()
    torch.save(persistent.state_dict(), buffer)
    buffer.seek(0)
    restored = PersistentUniforms(8, 3, 0.5, torch.Generator().manual_seed(123))
    restored.load_state_dict(torch.load(buffer, weights_only=True))
    assert torch.equal(restored.uniforms, persistent.uniforms)
    for _ in range(10):
        assert torch.equal(restored.draw(), persistent.draw())
    with pytest.raises(ValueError, match="do not fit"):
        PersistentUniforms(4, 3, 0.5).load_state_dict(persistent.state_dict())
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        PersistentUniforms(4, 3, 1.5)


SAMPLED = {
    "categorical": lambda: Categorical(torch.zeros(64, 5)),
    "multi-categorical": lambda: MultiCategorical(torch.zeros(64, 3, 4)),
    "gaussian": lambda: DiagonalGaussian(torch.zeros(64, 2), torch.zeros(2)),
    "tanh-gaussian": lambda: TanhGaussian(torch.zeros(64, 2), torch.zeros(2), -torch.ones(2), torch.ones(2)),
    "mixture": lambda: MixtureOfGaussians(torch.zeros(64, 2, 3), torch.tensor([-0.5, 0.0, 0.5]).expand(64, 2, 3),
                                          torch.full((64, 2, 3), 0.1)),
}


@pytest.mark.parametrize("kind", SAMPLED)
def test_samples_drawn_from_a_generator_follow_its_seed_and_leave_the_global_generator_alone(kind):
    dist = SAMPLED[kind]()
    global_state = torch.get_rng_state()
    first = dist.sample(generator=torch.Generator().manual_seed(3))
    assert torch.equal(torch.get_rng_state(), global_state)
    torch.manual_seed(99)  # whatever the global generator holds
    assert torch.equal(dist.sample(generator=torch.Generator().manual_seed(3)), first)
    assert not torch.equal(dist.sample(generator=torch.Generator().manual_seed(4)), first)


def test_persistent_uniforms_without_generator_follow_the_global_seed():
    torch.manual_seed(7)
    first = [PersistentUniforms(4, 2, 0.5).draw().clone() for _ in range(2)]
    torch.manual_seed(7)
    second = [PersistentUniforms(4, 2, 0.5).draw().clone() for _ in range(2)]
    assert all(torch.equal(a, b) for a, b in zip(first, second))
    assert not torch.equal(first[0], first[1])


BOX = gym.spaces.Box(-1.0, 1.0, (2,))


def test_softplus_offset_gives_the_initial_std():
    offset = softplus_std_offset(0.5)
    assert offset < 0
    assert math.log1p(math.exp(offset)) + SOFTPLUS_MIN_STD == pytest.approx(0.5, abs=1e-12)
    with pytest.raises(ValueError):
        softplus_std_offset(SOFTPLUS_MIN_STD)


@pytest.mark.parametrize("continuous_policy", ["gaussian", "tanh_gaussian"])
def test_softplus_std_starts_at_the_configured_std_and_depends_on_state(continuous_policy):
    torch.manual_seed(0)
    init_log_std = math.log(0.5)
    policy = ActorCritic((5,), BOX, init_log_std=init_log_std, continuous_policy=continuous_policy, std_parameterization="softplus")
    assert policy.log_std is None and policy.policy_head.out_features == 4
    obs = torch.randn(64, 5)
    std_at_init = policy.distribution(*first_step_inputs(policy, obs)).log_std.exp()
    torch.testing.assert_close(std_at_init, torch.full((64, 2), 0.5), rtol=0.05, atol=0)
    with torch.no_grad():
        policy.policy_head.weight.zero_()
    torch.testing.assert_close(policy.distribution(*first_step_inputs(policy, obs)).log_std.exp(), torch.full((64, 2), 0.5), rtol=0, atol=1e-5)
    with torch.no_grad():
        policy.policy_head.weight.normal_()
    assert policy.distribution(*first_step_inputs(policy, obs)).log_std.exp().std(0).min().item() > 0.05


@pytest.mark.parametrize(
    "continuous_policy, std_parameterization",
    [(policy, std) for policy in CONTINUOUS_POLICIES for std in STD_PARAMETERIZATIONS if (policy, std) != ("mixture", "softplus")],
)
def test_actor_critic_continuous_policies_shapes_and_gradients(continuous_policy, std_parameterization):
    torch.manual_seed(0)
    policy = ActorCritic((5,), BOX, continuous_policy=continuous_policy, std_parameterization=std_parameterization)
    obs = torch.randn(6, 5)
    dist, values, _ = policy(*first_step_inputs(policy, obs))
    actions = dist.sample()
    assert actions.shape == (6, 2) and dist.mode().shape == (6, 2) and values.shape == (6,)
    assert dist.log_prob(actions).shape == (6,) and dist.entropy().shape == (6,)
    assert torch.isfinite(dist.log_prob(actions)).all()
    torch.testing.assert_close(policy.act(*first_step_inputs(policy, obs), deterministic=True)[0], dist.mode())
    assert policy.act(*first_step_inputs(policy, obs))[0].shape == (6, 2)
    loss = -(dist.log_prob(actions.detach()) + 0.01 * dist.entropy()).mean()
    loss.backward()
    assert policy.policy_head.weight.grad.abs().sum() > 0
    assert policy.actor_body.net[0].weight.grad.abs().sum() > 0
    assert (policy.log_std is None) == (std_parameterization == "softplus" or continuous_policy == "mixture")
    if policy.log_std is not None:
        assert policy.log_std.grad.abs().sum() > 0
    assert all(p.grad is None for p in policy.critic_parameters())


def test_actor_critic_mixture_head_size_and_tanh_box_from_space():
    assert ActorCritic((5,), BOX, continuous_policy="mixture", mixture_modes=4).policy_head.out_features == 2 * 4 * 3
    torch.manual_seed(0)
    space = gym.spaces.Box(np.array([-2.0, 0.0], np.float32), np.array([2.0, 1.0], np.float32))
    policy = ActorCritic((5,), space, continuous_policy="tanh_gaussian", init_log_std=1.0)
    obs = torch.randn(1000, 5)
    torch.testing.assert_close(policy.act(*first_step_inputs(policy, obs), deterministic=True)[0], torch.tensor([[0.0, 0.5]]).expand(1000, -1), rtol=0, atol=0.05)
    actions = policy.act(*first_step_inputs(policy, obs))[0]
    assert (actions[:, 0].abs() <= 2.0).all() and ((actions[:, 1] >= 0.0) & (actions[:, 1] <= 1.0)).all()
    assert actions[:, 0].abs().max() > 1.5 and actions[:, 1].min() < 0.1


def test_actor_critic_rejects_bad_policy_arguments():
    with pytest.raises(ValueError, match="continuous_policy must be one of gaussian, tanh_gaussian, mixture; got 'beta'"):
        ActorCritic((5,), BOX, continuous_policy="beta")
    with pytest.raises(ValueError, match="std_parameterization must be one of log_std, softplus; got 'exp'"):
        ActorCritic((5,), BOX, std_parameterization="exp")
    with pytest.raises(ValueError, match="continuous_policy='mixture'.*need a Box action space"):
        ActorCritic((5,), gym.spaces.Discrete(3), continuous_policy="mixture")
    with pytest.raises(ValueError, match="std_parameterization applies to the Gaussian policies"):
        ActorCritic((5,), BOX, continuous_policy="mixture", std_parameterization="softplus")
    with pytest.raises(ValueError, match="mixture_modes"):
        ActorCritic((5,), BOX, continuous_policy="mixture", mixture_modes=0)
    with pytest.raises(ValueError, match="finite action bounds"):
        ActorCritic((5,), gym.spaces.Box(-np.inf, np.inf, (2,)), continuous_policy="tanh_gaussian")


def test_categorical_draws_what_torch_multinomial_draws_from_the_same_generator_state():
    logits = torch.randn(64, 5) * 3
    dist = Categorical(logits)
    for seed in range(20):
        torch.manual_seed(seed)
        ours = dist.sample()
        torch.manual_seed(seed)
        assert torch.equal(ours, torch.multinomial(logits.softmax(-1), 1).squeeze(-1))
    probs = torch.tensor([0.1, 0.0, 0.6, 0.3])  # a zero-probability action is never drawn; frequencies follow p
    counts = torch.bincount(Categorical(probs.log().expand(200_000, 4)).sample(), minlength=4) / 200_000
    assert counts[1] == 0 and torch.allclose(counts, probs, atol=0.005)
