"""Policy-gradient losses as pure functions returning ``(loss, metrics)``.

Every argument is a flat ``[B]`` tensor (one entry per sample of a minibatch).
Losses are to be *minimised*; metrics are detached scalars with stable names.
"""

from __future__ import annotations

import torch

Metrics = dict[str, torch.Tensor]


def policy_gradient_loss(log_prob: torch.Tensor, advantages: torch.Tensor) -> tuple[torch.Tensor, Metrics]:
    """The vanilla (likelihood-ratio) policy gradient of REINFORCE and A2C, negated.

    L = -E[log pi(a|s) A]; the advantages are constants (detached), so the gradient is
    -E[A grad log pi(a|s)] (Williams 1992).
    """
    loss = -(log_prob * advantages.detach()).mean()
    return loss, {"train/policy_loss": loss.detach()}


def clipped_surrogate_loss(
    log_prob: torch.Tensor, old_log_prob: torch.Tensor, advantages: torch.Tensor, clip: float
) -> tuple[torch.Tensor, Metrics]:
    """PPO's clipped surrogate (Schulman et al. 2017), negated.

    L = -E[min(r A, clip(r, 1 - clip, 1 + clip) A)],  r = exp(log_prob - old_log_prob).
    ``clip_fraction`` is the share of samples whose ratio lies outside the band.
    """
    log_ratio = log_prob - old_log_prob
    ratio = log_ratio.exp()
    unclipped = ratio * advantages
    clipped = ratio.clamp(1.0 - clip, 1.0 + clip) * advantages
    loss = -torch.minimum(unclipped, clipped).mean()
    with torch.no_grad():
        clip_fraction = ((ratio - 1.0).abs() > clip).float().mean()
    return loss, {
        "train/policy_loss": loss.detach(),
        "train/clip_fraction": clip_fraction,
        "train/approx_kl": approx_kl(log_prob.detach(), old_log_prob),
    }


def approx_kl(log_prob: torch.Tensor, old_log_prob: torch.Tensor) -> torch.Tensor:
    """Unbiased low-variance estimate of KL(pi_old || pi): E[(r - 1) - log r] (Schulman's k3)."""
    log_ratio = log_prob - old_log_prob
    return (log_ratio.exp() - 1.0 - log_ratio).mean()


def value_loss(
    values: torch.Tensor,
    returns: torch.Tensor,
    old_values: torch.Tensor | None = None,
    clip: float | None = None,
) -> tuple[torch.Tensor, Metrics]:
    """Half mean squared error 0.5 E[(V - G)^2], optionally clipped as in PPO2.

    With ``clip``, the loss per sample is max((V - G)^2, (V_clipped - G)^2) with
    V_clipped = V_old + clamp(V - V_old, -clip, clip).
    """
    squared = (values - returns).pow(2)
    if clip is not None:
        if old_values is None:
            raise ValueError("value_loss: old_values is required when clip is set")
        clipped_values = old_values + (values - old_values).clamp(-clip, clip)
        squared = torch.maximum(squared, (clipped_values - returns).pow(2))
    loss = 0.5 * squared.mean()
    return loss, {"train/value_loss": loss.detach()}


def entropy_loss(entropy: torch.Tensor) -> tuple[torch.Tensor, Metrics]:
    """Negated mean entropy, so that minimising it with a positive coefficient raises entropy."""
    mean_entropy = entropy.mean()
    return -mean_entropy, {"train/entropy": mean_entropy.detach()}


def standardize(values: torch.Tensor) -> torch.Tensor:
    """``(values - mean) / (std + 1e-8)`` over all elements (advantage normalisation)."""
    return (values - values.mean()) / (values.std() + 1e-8)


def explained_variance(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """1 - Var[targets - predictions] / Var[targets]; NaN when the targets are constant."""
    target_variance = targets.var()
    if target_variance == 0:
        return torch.tensor(float("nan"))
    return 1.0 - (targets - predictions).var() / target_variance
