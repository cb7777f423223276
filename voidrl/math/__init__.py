"""Pure tensor math: returns, losses and running statistics."""

from voidrl.math.losses import approx_kl, clipped_surrogate_loss, entropy_loss, explained_variance, value_loss
from voidrl.math.returns import discounted_returns, generalized_advantage_estimate
from voidrl.math.running_stats import RunningMeanStd

__all__ = [
    "RunningMeanStd",
    "approx_kl",
    "clipped_surrogate_loss",
    "discounted_returns",
    "entropy_loss",
    "explained_variance",
    "generalized_advantage_estimate",
    "value_loss",
]
