"""Advantage and return estimators over an explicit time axis.

All functions take tensors shaped ``[T, N]`` (time first, then environments)
and keep ``terminated`` and ``truncated`` apart:

* ``terminated[t]``: the transition at ``t`` entered a terminal state, so the
  value of its next state is zero (no bootstrap).
* ``truncated[t]``: the episode was cut at ``t`` (time limit) although it could
  have gone on; the recursion stops there, but ``next_values[t]`` (the value of
  the true final observation) is still bootstrapped.
* The end of the rollout (``t = T - 1``) is an implicit cut: ``next_values[T-1]``
  is the value of the state after the last stored one.

``next_values[t]`` is the critic's value of the state that followed step ``t``
(for a truncated step, of the final observation, not of the reset one).
"""

from __future__ import annotations

import torch


def _episode_continues(terminated: torch.Tensor, truncated: torch.Tensor) -> torch.Tensor:
    return 1.0 - (terminated | truncated).to(torch.float32)


def generalized_advantage_estimate(
    rewards: torch.Tensor,
    values: torch.Tensor,
    next_values: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    gamma: float,
    gae_lambda: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE(gamma, lambda) of Schulman et al. (2016).

    delta_t = r_t + gamma (1 - terminated_t) V(s'_t) - V(s_t)
    A_t     = delta_t + gamma lambda (1 - done_t) A_{t+1},  A_T = 0

    Args:
        rewards: float ``[T, N]``.
        values: float ``[T, N]``, V(s_t).
        next_values: float ``[T, N]``, V(s'_t) of the true successor.
        terminated: bool ``[T, N]``.
        truncated: bool ``[T, N]``.
    Returns:
        ``(advantages, returns)``, both ``[T, N]``; ``returns = advantages + values``
        are the critic's regression targets.
    """
    bootstrap = 1.0 - terminated.to(values.dtype)
    deltas = rewards + gamma * bootstrap * next_values - values
    decay = gamma * gae_lambda * _episode_continues(terminated, truncated).to(values.dtype)
    advantages = torch.empty_like(values)
    running = torch.zeros_like(values[0])
    for t in range(values.shape[0] - 1, -1, -1):
        running = deltas[t] + decay[t] * running
        advantages[t] = running
    return advantages, advantages + values


def discounted_returns(
    rewards: torch.Tensor,
    next_values: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """Bootstrapped discounted return G_t = r_t + gamma G_{t+1}, per episode.

    At a termination G_t = r_t; at a truncation or at the rollout's end
    G_t = r_t + gamma V(s'_t). Over whole episodes that end in termination this
    is the Monte-Carlo return used by REINFORCE.

    Args:
        rewards: float ``[T, N]``.
        next_values: float ``[T, N]``, V(s'_t) of the true successor.
        terminated: bool ``[T, N]``.
        truncated: bool ``[T, N]``.
    Returns:
        ``[T, N]`` returns.
    """
    done = terminated | truncated
    bootstrap = next_values * (~terminated).to(next_values.dtype)
    returns = torch.empty_like(rewards)
    following = torch.zeros_like(rewards[0])
    last = rewards.shape[0] - 1
    for t in range(last, -1, -1):
        tail = torch.where(done[t] | (t == last), bootstrap[t], following)
        following = rewards[t] + gamma * tail
        returns[t] = following
    return returns


def episode_start_values(values: torch.Tensor, terminated: torch.Tensor, truncated: torch.Tensor) -> torch.Tensor:
    """Each step's ``values`` entry at its episode's first step within the rollout.

    ``out[t] = values[s]`` with ``s`` the last step ``<= t`` that starts an episode: the
    rollout's first step, or one right after a termination or truncation. REINFORCE without
    reward-to-go weights every step by its episode's first-step return this way.

    Args:
        values: float ``[T, N]``; terminated, truncated: bool ``[T, N]``.
    Returns:
        ``[T, N]``.
    """
    done = terminated | truncated
    out = torch.empty_like(values)
    current = values[0]
    out[0] = current
    for t in range(1, values.shape[0]):
        current = torch.where(done[t - 1], values[t], current)
        out[t] = current
    return out


def discounted_running_sums(rewards: torch.Tensor, previous: torch.Tensor, gamma: float) -> torch.Tensor:
    """s_t = gamma s_{t-1} + r_t along time, per environment and across episode ends, from ``s_{-1} = previous``:
    the running discounted sums whose spread RND divides its rewards by.

    Args:
        rewards: float ``[T, N]``; previous: ``[N]`` (the last sum of the previous rollout; zeros at the start).
    Returns:
        ``[T, N]``.
    """
    sums = torch.empty_like(rewards)
    running = previous.to(rewards.dtype)
    for t in range(rewards.shape[0]):
        running = gamma * running + rewards[t]
        sums[t] = running
    return sums


def episode_sums(rewards: torch.Tensor, episode_ends: torch.Tensor, running: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Undiscounted sums of each episode's rewards across rollouts (an intrinsic reward's episode returns).

    Args:
        rewards: float ``[T, N]``; episode_ends: bool ``[T, N]``, step t ends its episode (terminated or truncated);
        running: ``[N]``, each environment's sum so far of the episode it is in (zeros at the start).
    Returns:
        ``(finished, running)``: the sums of the episodes that ended ``[K]``, in order of time and then environment,
        and the sums of the episodes still running after the last step ``[N]``.
    """
    finished = []
    running = running.to(rewards.dtype).clone()
    for t in range(rewards.shape[0]):
        running += rewards[t]
        finished.append(running[episode_ends[t]])
        running[episode_ends[t]] = 0.0
    return torch.cat(finished), running
