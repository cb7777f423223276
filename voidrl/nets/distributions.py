"""Action distributions written out directly (no argument validation on the hot path).

Every method works on a batch: parameters ``[B, ...]``, actions ``[B]``
(categorical) or ``[B, A]`` (multi-categorical, continuous), log-probabilities and entropies ``[B]``.
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn.functional as F

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
LOG_2 = math.log(2.0)


def noise_like(like: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """An uninitialised tensor of ``like``'s shape and dtype for a sample's noise, to fill from ``generator`` and move to
    ``like``'s device: on ``generator``'s device, so that a CPU generator's draws do not depend on where the policy runs
    (as ``voidrl.math.elbo.reparameterize`` draws); ``torch.empty_like(like)`` without one (torch's global generator)."""
    if generator is None:
        return torch.empty_like(like)
    return torch.empty(like.shape, dtype=like.dtype, device=generator.device)


class Categorical:
    def __init__(self, logits: torch.Tensor):
        self.log_probs = logits.log_softmax(-1)  # one kernel: logits - logsumexp took 8 of a step's 140 us on a CPU

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """``[B]`` actions: argmax of p / Exp(1) noise, what ``torch.multinomial(p, 1)`` computes (the same draws from the
        same generator state) without its per-call validity checks, in a third of its time for 8 x 2 on a CPU
        (benchmarks/bench_recurrent_parts.py); a collector checks its rollout's log-probabilities once instead
        (``PolicySampling.finish``). The noise comes from ``generator`` (``noise_like``), else torch's global generator."""
        probs = self.log_probs.exp()
        return (probs / noise_like(probs, generator).exponential_(generator=generator).to(probs.device)).argmax(-1)

    def mode(self) -> torch.Tensor:
        return self.log_probs.argmax(-1)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        return -(self.log_probs.exp() * self.log_probs).sum(-1)

    def kl_from(self, old_log_probs: torch.Tensor) -> torch.Tensor:
        """KL(old || self) ``[B]`` for an old distribution given by its log-probabilities ``[B, A]``."""
        return (old_log_probs.exp() * (old_log_probs - self.log_probs)).sum(-1)

    def detach(self) -> Categorical:
        """A copy cut from the autograd graph (pi_old of a KL); it keeps its values when the parameters change."""
        old = copy.copy(self)
        old.log_probs = self.log_probs.detach().clone()
        return old


class MultiCategorical(Categorical):
    """Independent categoricals, one per action dimension (a ``MultiDiscrete`` space): logits ``[B, D, K]``, K the
    largest number of choices (a dimension's missing choices masked to probability 0), actions ``[B, D]``;
    log-probabilities, entropies and KL divergences of the joint action, summed over the D dimensions: ``[B]``."""

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return super().log_prob(actions).sum(-1)

    def entropy(self) -> torch.Tensor:
        return super().entropy().sum(-1)

    def kl_from(self, old_log_probs: torch.Tensor) -> torch.Tensor:
        return super().kl_from(old_log_probs).sum(-1)


class DiagonalGaussian:
    """Independent normal per action coordinate; ``log_std`` broadcasts against ``mean``."""

    def __init__(self, mean: torch.Tensor, log_std: torch.Tensor):
        self.mean = mean
        self.log_std = log_std.expand_as(mean)

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """Actions ``[B, A]``, the standard normal noise from ``generator`` (``noise_like``), else torch's global generator."""
        return self.mean + self.log_std.exp() * noise_like(self.mean, generator).normal_(generator=generator).to(self.mean.device)

    def mode(self) -> torch.Tensor:
        return self.mean

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        z = (actions - self.mean) * torch.exp(-self.log_std)
        return (-0.5 * z.pow(2) - self.log_std - LOG_SQRT_2PI).sum(-1)

    def entropy(self) -> torch.Tensor:
        return (0.5 + LOG_SQRT_2PI + self.log_std).sum(-1)

    def detach(self) -> DiagonalGaussian:
        """A copy cut from the autograd graph (pi_old of a KL); it keeps its values when the parameters change
        (a state-independent ``log_std`` is a view of the parameter, hence the clone)."""
        old = copy.copy(self)
        old.mean, old.log_std = self.mean.detach().clone(), self.log_std.detach().clone()
        return old


def _squash_log_derivative(pre_squash: torch.Tensor) -> torch.Tensor:
    """log(1 - tanh(u)^2) elementwise, stable for large |u|: 2 (log 2 - u - softplus(-2u))."""
    return 2.0 * (LOG_2 - pre_squash - F.softplus(-2.0 * pre_squash))


class TanhGaussian:
    """Diagonal Gaussian squashed into the box ``[low, high]``: a = center + half_range * tanh(u).

    ``mean [B, A]`` and ``log_std`` (``[A]`` or ``[B, A]``) parameterise u ~ N(mean, std);
    ``low``/``high [A]`` are finite bounds. Actions and modes are ``[B, A]``,
    log-probabilities and entropies ``[B]``.
    """

    ATANH_MARGIN = 1e-6
    """Actions are clamped this far inside the box before atanh, so saturated ones keep a finite log-probability."""

    def __init__(self, mean: torch.Tensor, log_std: torch.Tensor, low: torch.Tensor, high: torch.Tensor):
        self.mean = mean
        self.log_std = log_std.expand_as(mean)
        self.center = 0.5 * (high + low)
        self.half_range = 0.5 * (high - low)

    def _squash(self, pre_squash: torch.Tensor) -> torch.Tensor:
        return self.center + self.half_range * torch.tanh(pre_squash)

    def _log_jacobian(self, pre_squash: torch.Tensor) -> torch.Tensor:
        """sum over coordinates of log |da/du| = log(half_range (1 - tanh(u)^2)), ``[B]``."""
        return (self.half_range.log() + _squash_log_derivative(pre_squash)).sum(-1)

    def _base_sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """u ``[B, A]``, the standard normal noise from ``generator`` (``noise_like``), else torch's global generator."""
        return self.mean + self.log_std.exp() * noise_like(self.mean, generator).normal_(generator=generator).to(self.mean.device)

    def sample(self, generator: torch.Generator | None = None) -> torch.Tensor:
        """Actions ``[B, A]``, u drawn with ``generator`` (``_base_sample``)."""
        return self._squash(self._base_sample(generator))

    def mode(self) -> torch.Tensor:
        """The squashed mean (not the density's maximum, which moves towards the bounds for wide u)."""
        return self._squash(self.mean)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        """Exact change of variables: log N(u; mean, std) - sum log |da/du| at u = atanh((a - center) / half_range)."""
        unit = ((actions - self.center) / self.half_range).clamp(-1.0 + self.ATANH_MARGIN, 1.0 - self.ATANH_MARGIN)
        pre_squash = torch.atanh(unit)
        z = (pre_squash - self.mean) * torch.exp(-self.log_std)
        base = (-0.5 * z.pow(2) - self.log_std - LOG_SQRT_2PI).sum(-1)
        return base - self._log_jacobian(pre_squash)

    def entropy(self) -> torch.Tensor:
        """Unbiased one-sample estimate of the action entropy, ``[B]``.

        H[a] = H[u] + E[log |da/du|] has no closed form; this returns the base Gaussian's
        entropy plus the log-Jacobian at one fresh reparameterised sample of u, so it is
        random (draws from the global RNG) and differentiable. Unlike the base entropy
        alone it falls when the policy saturates at the bounds.
        """
        base = (0.5 + LOG_SQRT_2PI + self.log_std).sum(-1)
        return base + self._log_jacobian(self._base_sample())

    def detach(self) -> TanhGaussian:
        """A copy cut from the autograd graph (pi_old of a KL); it keeps its values when the parameters change
        (a state-independent ``log_std`` is a view of the parameter, hence the clone)."""
        old = copy.copy(self)
        old.mean, old.log_std = self.mean.detach().clone(), self.log_std.detach().clone()
        return old


SOFTPLUS_MIN_STD = 1e-3
"""Floor added to softplus standard deviations so they never collapse to zero."""


def softplus_std_offset(initial_std: float, min_std: float = SOFTPLUS_MIN_STD) -> float:
    """The offset c with softplus(0 + c) + min_std = initial_std (negative for initial_std below ~0.69)."""
    if not initial_std > min_std:
        raise ValueError(f"initial standard deviation {initial_std} must exceed the minimum {min_std}")
    excess = initial_std - min_std
    return excess + math.log(-math.expm1(-excess))


def softplus_log_std(pre_activation: torch.Tensor, offset: float, min_std: float = SOFTPLUS_MIN_STD) -> torch.Tensor:
    """State-dependent log-std (Andrychowicz et al. 2021): log(softplus(pre_activation + offset) + min_std), same shape."""
    return torch.log(F.softplus(pre_activation + offset) + min_std)


MIXTURE_MIN_STD = 1e-4


class MixtureOfGaussians:
    """Independent univariate mixture of M Gaussians per action coordinate (Leite's (2022) policy).

    ``weight_logits``, ``means``, ``stds`` are ``[B, A, M]``; actions and modes ``[B, A]``,
    log-probabilities and entropies ``[B]``. ``from_head`` builds one from raw network output.
    """

    def __init__(self, weight_logits: torch.Tensor, means: torch.Tensor, stds: torch.Tensor):
        self.log_weights = weight_logits.log_softmax(-1)
        self.means = means
        self.stds = stds

    @classmethod
    def from_head(cls, raw: torch.Tensor) -> MixtureOfGaussians:
        """``raw [B, A, M, 3]`` = (weight logit, mean, std pre-activation) per coordinate and mode.

        Means are clamped to [-1, 1] and std = sigmoid(raw) / A + 1e-4. Leite (2022) samples
        with sigmoid(-raw) but evaluates log-probabilities with sigmoid(raw); sigmoid(raw) is
        used everywhere here.
        """
        action_dim = raw.shape[-3]
        stds = torch.sigmoid(raw[..., 2]) / action_dim + MIXTURE_MIN_STD
        return cls(raw[..., 0], raw[..., 1].clamp(-1.0, 1.0), stds)

    def _pick(self, values: torch.Tensor, modes: torch.Tensor) -> torch.Tensor:
        """``values [B, A, M]`` at mode indices ``modes [B, A]`` -> ``[B, A]``."""
        return values.gather(-1, modes.unsqueeze(-1)).squeeze(-1)

    def sample(self, uniforms: torch.Tensor | None = None, generator: torch.Generator | None = None) -> torch.Tensor:
        """Actions ``[B, A]`` by inverse CDF from ``uniforms [B, A, 2]`` in [0, 1) on this device; where None, fresh ones
        drawn from ``generator`` (on its device, then moved to this one, as ``noise_like``), else torch's global generator.

        ``uniforms[..., 0]`` picks the first mode k with u < cumsum(weights)_k; ``uniforms[..., 1]``
        is the Gaussian quantile level, clamped into the open interval so the quantile stays finite.
        """
        if uniforms is None:
            where = self.means.device if generator is None else generator.device
            uniforms = torch.rand(*self.means.shape[:-1], 2, generator=generator, dtype=self.means.dtype, device=where)
            uniforms = uniforms.to(self.means.device)
        cumulative = self.log_weights.exp().cumsum(-1)
        num_modes = cumulative.shape[-1]
        modes = (uniforms[..., :1] >= cumulative).sum(-1).clamp_max(num_modes - 1)
        tail = torch.finfo(uniforms.dtype).eps
        quantile = torch.special.ndtri(uniforms[..., 1].clamp(tail, 1.0 - tail))
        return self._pick(self.means, modes) + self._pick(self.stds, modes) * quantile

    def mode(self) -> torch.Tensor:
        """Greedy action (temperature 0): per coordinate, the mean of the highest-weight mode."""
        return self._pick(self.means, self.log_weights.argmax(-1))

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        """Exact mixture log-density per coordinate (logsumexp over modes), summed over coordinates."""
        z = (actions.unsqueeze(-1) - self.means) / self.stds
        per_mode = self.log_weights - 0.5 * z.pow(2) - self.stds.log() - LOG_SQRT_2PI
        return per_mode.logsumexp(-1).sum(-1)

    def entropy(self) -> torch.Tensor:
        """Upper bound H(weights) + sum_k w_k H(N_k) per coordinate (tight when modes do not overlap), summed.

        Leite (2022) also subtracts mean^4 as a penalty near the clamp bounds; that term is not
        an entropy and is left out.
        """
        weights = self.log_weights.exp()
        mode_entropies = 0.5 + LOG_SQRT_2PI + self.stds.log()
        return (weights * (mode_entropies - self.log_weights)).sum((-2, -1))


def kl_divergence(old: Categorical | DiagonalGaussian | TanhGaussian, new: Categorical | DiagonalGaussian | TanhGaussian) -> torch.Tensor:
    """KL(old || new) ``[B]`` between two distributions of one kind over the same batch (the trust region's KL).

    Categorical: sum_a p_old(a) (log p_old(a) - log p_new(a)). Diagonal Gaussians, summed over the
    coordinates: log(s_new / s_old) + (s_old^2 + (m_old - m_new)^2) / (2 s_new^2) - 1/2, written with
    expm1 so that it stays accurate for nearby distributions and is exactly 0 for identical ones.
    Tanh-squashed Gaussians (on the same box): a KL divergence does not change when one invertible map
    is applied to both distributions, and a = center + half_range tanh(u) is invertible, so the KL of
    the actions is that of the base Gaussians on u. The mixture of Gaussians has no closed-form KL and
    is rejected with a ``TypeError``.
    """
    if type(old) is not type(new):
        raise TypeError(f"kl_divergence needs two distributions of one kind, got {type(old).__name__} and {type(new).__name__}")
    if isinstance(new, Categorical):
        return new.kl_from(old.log_probs)
    if isinstance(new, (DiagonalGaussian, TanhGaussian)):
        log_std_ratio = new.log_std - old.log_std
        scaled_mean_gap = (old.mean - new.mean) * torch.exp(-new.log_std)
        # log r + (1/r^2 - 1) / 2 with r = s_new / s_old, plus the mean term
        return (log_std_ratio + 0.5 * torch.expm1(-2.0 * log_std_ratio) + 0.5 * scaled_mean_gap.pow(2)).sum(-1)
    raise TypeError(f"kl_divergence: {type(new).__name__} has no closed-form KL divergence")
