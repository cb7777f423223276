"""Pure tensor math: returns, off-policy targets, losses and running statistics."""

from voidrl.math.losses import approx_kl, clipped_surrogate_loss, entropy_loss, explained_variance, policy_gradient_loss, standardize, value_loss
from voidrl.math.off_policy import (
    double_q_bootstrap,
    inverse_value_rescale,
    large_margin_loss,
    n_step_targets,
    prioritised_td_loss,
    retrace_targets,
    retrace_traces,
    sequence_priorities,
    value_rescale,
)
from voidrl.math.returns import discounted_returns, discounted_running_sums, episode_sums, episode_start_values, generalized_advantage_estimate
from voidrl.math.running_stats import RunningMeanStd
from voidrl.math.trust_region import backtracking_line_search, conjugate_gradient, fisher_vector_product, flat_gradient, max_kl_step, natural_gradient_step

__all__ = [
    "RunningMeanStd",
    "approx_kl",
    "backtracking_line_search",
    "clipped_surrogate_loss",
    "conjugate_gradient",
    "discounted_returns",
    "discounted_running_sums",
    "episode_sums",
    "double_q_bootstrap",
    "entropy_loss",
    "episode_start_values",
    "explained_variance",
    "fisher_vector_product",
    "flat_gradient",
    "generalized_advantage_estimate",
    "inverse_value_rescale",
    "large_margin_loss",
    "max_kl_step",
    "n_step_targets",
    "natural_gradient_step",
    "policy_gradient_loss",
    "prioritised_td_loss",
    "retrace_targets",
    "retrace_traces",
    "sequence_priorities",
    "standardize",
    "value_loss",
    "value_rescale",
]
