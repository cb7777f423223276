"""Targets and priorities of the recurrent off-policy learners (R2D2, Retrace, Agent57).

Tensors are ``[T, B]`` (time first, then sequences in the batch), with the conventions of
:mod:`voidrl.math.returns`: step ``t`` is ``(s_t, a_t, r_t, s'_t)``; ``terminated[t]`` means
``s'_t`` is terminal (no bootstrap); ``truncated[t]`` means the episode was cut after step
``t`` (bootstrap from the true final observation ``s'_t``, but the recursion stops); the
last step of a sequence is an implicit cut. Per-step ``next_*`` inputs describe ``s'_t``.

Value rescaling (Pohlen et al., 2018) squashes large returns so one network fits games
whose scores differ by orders of magnitude: targets are formed in the raw space and
squashed again, ``h(r + gamma h^-1(Q))``.
"""

from __future__ import annotations

import torch

R2D2_RESCALE_EPS = 1e-3


def value_rescale(x: torch.Tensor, eps: float = R2D2_RESCALE_EPS) -> torch.Tensor:
    """h(x) = sign(x) (sqrt(|x| + 1) - 1) + eps x, elementwise."""
    return torch.sign(x) * (torch.sqrt(x.abs() + 1.0) - 1.0) + eps * x


def inverse_value_rescale(x: torch.Tensor, eps: float = R2D2_RESCALE_EPS) -> torch.Tensor:
    """The exact inverse of :func:`value_rescale`:
    h^-1(x) = sign(x) (((sqrt(1 + 4 eps (|x| + 1 + eps)) - 1) / (2 eps))^2 - 1).

    The root is computed as 2y / (sqrt(1 + 4 eps y) + 1), y = |x| + 1 + eps, the same number without
    the cancellation of sqrt(...) - 1, which in float32 costs about 1e-4 at eps = 1e-3."""
    y = x.abs() + 1.0 + eps
    root = 2.0 * y / (torch.sqrt(1.0 + 4.0 * eps * y) + 1.0)
    return torch.sign(x) * (root * root - 1.0)


def double_q_bootstrap(online_next_q: torch.Tensor, target_next_q: torch.Tensor) -> torch.Tensor:
    """Double Q-learning's value of ``s'``: the target network's value of the online network's
    greedy action. Both ``[..., A]``; returns ``[...]``."""
    greedy = online_next_q.argmax(dim=-1, keepdim=True)
    return target_next_q.gather(-1, greedy).squeeze(-1)


def n_step_targets(
    rewards: torch.Tensor,
    next_values: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    gamma: float | torch.Tensor,
    n: int,
    rescale_eps: float | None = None,
) -> torch.Tensor:
    """n-step Q-learning targets, each stopping early at an episode's end or the sequence's end.

    G_t = sum_{k<m} gamma^k r_{t+k} + gamma^m (1 - terminated_{t+m-1}) V(s'_{t+m-1}),
    m = min(n, steps to the first termination/truncation at or after t (inclusive), T - t).

    With ``rescale_eps`` the bootstrap values are in h-space: G_t = h(... + gamma^m h^-1(V)).

    Args:
        rewards: float ``[T, B]``; next_values: float ``[T, B]``, V(s'_t) (e.g.
            :func:`double_q_bootstrap`); terminated, truncated: bool ``[T, B]``; gamma: a number or
            ``[B]`` (one discount per sequence, as NGU's policy family has).
    Returns:
        ``[T, B]`` targets for Q(s_t, a_t).
    """
    if n < 1:
        raise ValueError(f"n must be a positive integer, got {n}")
    if rescale_eps is not None:
        next_values = inverse_value_rescale(next_values, rescale_eps)
    steps = rewards.shape[0]
    bootstrap = next_values * (~terminated).to(next_values.dtype)
    ends = terminated | truncated
    ends[-1] = True
    targets = torch.zeros_like(rewards)
    open_ = torch.ones_like(ends)
    for k in range(min(n, steps)):
        # Row t of these views is step t + k; rows past the sequence's end are closed already.
        reward, value, end = (x[k:] for x in (rewards, bootstrap, ends))
        now_open = open_[: steps - k]
        stops = now_open & (end | (k == n - 1))
        targets[: steps - k] += gamma**k * (now_open * reward + gamma * stops.to(value.dtype) * value)
        open_[: steps - k] = now_open & ~stops
    return targets if rescale_eps is None else value_rescale(targets, rescale_eps)


def retrace_targets(
    rewards: torch.Tensor,
    taken_q: torch.Tensor,
    next_q: torch.Tensor,
    next_policy: torch.Tensor,
    traces: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    gamma: float | torch.Tensor,
    rescale_eps: float | None = None,
) -> torch.Tensor:
    """Retrace(lambda) targets (Munos et al., 2016) as a backward recursion:

    G_t = r_t + gamma (1 - terminated_t) [E_pi Q(s'_t, .) + c_{t+1} (G_{t+1} - Q(s_{t+1}, a_{t+1}))]

    where the bracket's second term is dropped at a truncation and at the sequence's last step.
    ``c_t = lambda min(1, pi(a_t|s_t) / mu(a_t|s_t))`` (see :func:`retrace_traces`). With
    ``rescale_eps`` the Q inputs are in h-space: the recursion runs on h^-1(Q) and the
    targets come back through h (transformed Retrace, as in R2D2/Agent57).

    Args:
        rewards: ``[T, B]``; taken_q: ``[T, B]``, target-network Q(s_t, a_t);
        next_q: ``[T, B, A]``, target-network Q(s'_t, .); next_policy: ``[T, B, A]``, pi(.|s'_t);
        traces: ``[T, B]``, c_t; terminated, truncated: bool ``[T, B]``; gamma: a number or ``[B]``.
    Returns:
        ``[T, B]`` targets for Q(s_t, a_t).
    """
    if rescale_eps is not None:
        taken_q = inverse_value_rescale(taken_q, rescale_eps)
        next_q = inverse_value_rescale(next_q, rescale_eps)
    expected_next = (next_policy * next_q).sum(dim=-1) * (~terminated).to(rewards.dtype)
    continues = (~(terminated | truncated)).to(rewards.dtype)
    targets = torch.empty_like(rewards)
    following = rewards[-1] + gamma * expected_next[-1]
    targets[-1] = following
    for t in range(rewards.shape[0] - 2, -1, -1):
        correction = continues[t] * traces[t + 1] * (following - taken_q[t + 1])
        following = rewards[t] + gamma * (expected_next[t] + correction)
        targets[t] = following
    return targets if rescale_eps is None else value_rescale(targets, rescale_eps)


def retrace_traces(target_probs: torch.Tensor, behaviour_probs: torch.Tensor, trace_lambda: float) -> torch.Tensor:
    """c_t = lambda min(1, pi(a_t|s_t) / mu(a_t|s_t)); probabilities of the taken actions, any shape."""
    return trace_lambda * torch.clamp(target_probs / behaviour_probs, max=1.0)


def sequence_priorities(td_errors: torch.Tensor, mask: torch.Tensor, eta: float = 0.9) -> torch.Tensor:
    """R2D2's replay priority of each sequence: eta max_t |delta_t| + (1 - eta) mean_t |delta_t|
    over the steps in ``mask`` (burn-in and padding excluded).

    Args:
        td_errors: ``[T, B]``; mask: bool ``[T, B]`` with at least one step per sequence.
    Returns:
        ``[B]``.
    """
    if not bool(mask.any(dim=0).all()):
        raise ValueError("sequence_priorities: every sequence needs at least one step in mask")
    size = td_errors.abs() * mask.to(td_errors.dtype)
    mean = size.sum(dim=0) / mask.sum(dim=0).to(td_errors.dtype)
    return eta * size.max(dim=0).values + (1.0 - eta) * mean


def prioritised_td_loss(td_errors: torch.Tensor, trained: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """R2D2's loss of a batch of sequences: 1/2 sum_{t,b,h} w_b delta_{t,b,h}^2 over the trained steps, divided by their
    number, ``w_b`` each sequence's importance weight (prioritised replay's correction).

    Args:
        td_errors: ``[T, B, H]`` (one per value head); trained: bool ``[T, B]``; weights: ``[B]``.
    Returns:
        a scalar.
    """
    return 0.5 * ((weights.unsqueeze(0) * trained).unsqueeze(-1) * td_errors.pow(2)).sum() / trained.sum()


def large_margin_loss(q: torch.Tensor, demonstrated_actions: torch.Tensor, margin: float) -> torch.Tensor:
    """DQfD's supervised loss (Hester et al., 2018) for each step a demonstrator played:
    max_a [Q(s, a) + l(a_E, a)] - Q(s, a_E), where l(a_E, a) = ``margin`` for a != a_E and 0 for a_E; at least 0, and 0
    only where a_E's value leads every other action's by ``margin`` or more.

    Args:
        q: ``[..., A]`` values; demonstrated_actions: ``[...]`` long, the demonstrator's actions a_E.
    Returns:
        ``[...]``.
    """
    taken = demonstrated_actions.unsqueeze(-1)
    margins = torch.full_like(q, margin).scatter(-1, taken, 0.0)
    return (q + margins).amax(-1) - q.gather(-1, taken).squeeze(-1)
