"""Action distributions written out directly (no argument validation on the hot path).

Every method works on a batch: parameters ``[B, ...]``, actions ``[B]``
(categorical) or ``[B, A]`` (Gaussian), log-probabilities and entropies ``[B]``.
"""

from __future__ import annotations

import math

import torch

LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


class Categorical:
    def __init__(self, logits: torch.Tensor):
        self.log_probs = logits - logits.logsumexp(-1, keepdim=True)

    def sample(self) -> torch.Tensor:
        return torch.multinomial(self.log_probs.exp(), 1).squeeze(-1)

    def mode(self) -> torch.Tensor:
        return self.log_probs.argmax(-1)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.log_probs.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        return -(self.log_probs.exp() * self.log_probs).sum(-1)

    def kl_from(self, old_log_probs: torch.Tensor) -> torch.Tensor:
        """KL(old || self) ``[B]`` for an old distribution given by its log-probabilities ``[B, A]``."""
        return (old_log_probs.exp() * (old_log_probs - self.log_probs)).sum(-1)


class DiagonalGaussian:
    """Independent normal per action coordinate; ``log_std`` broadcasts against ``mean``."""

    def __init__(self, mean: torch.Tensor, log_std: torch.Tensor):
        self.mean = mean
        self.log_std = log_std.expand_as(mean)

    def sample(self) -> torch.Tensor:
        return self.mean + self.log_std.exp() * torch.randn_like(self.mean)

    def mode(self) -> torch.Tensor:
        return self.mean

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        z = (actions - self.mean) * torch.exp(-self.log_std)
        return (-0.5 * z.pow(2) - self.log_std - LOG_SQRT_2PI).sum(-1)

    def entropy(self) -> torch.Tensor:
        return (0.5 + LOG_SQRT_2PI + self.log_std).sum(-1)
