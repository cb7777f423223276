"""Cutting each environment's stream of steps into R2D2's fixed-length replay sequences.

A sequence holds ``length`` steps of one episode (80 in R2D2) and starts every ``period`` steps
(40: adjacent sequences overlap by ``length - period``). Sequences never cross an episode's end:
there the oldest open sequence is closed and padded, its ``mask`` False on the padding; the later
open ones hold only steps it holds too, and are dropped. Each sequence keeps the recurrent state the actor had before its first step, and
the action and reward before that step (zeros at an episode's start), which R2D2 feeds its LSTM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch


@dataclass
class Sequence:
    """One replay item. ``L`` = the writer's ``length``; ``n`` valid steps (``mask[:n]``)."""

    obs: torch.Tensor
    """``[L + 1, ...]``: s_0 .. s_{n-1}, then s'_{n-1} (the true successor of the last step: the
    final observation where the episode ended), zeros after."""
    actions: torch.Tensor
    """``[L, ...]``."""
    rewards: torch.Tensor
    """``[L]``."""
    behaviour_probs: torch.Tensor
    """``[L]``: mu(a_t | s_t), the probability the actor's policy gave the action it took (for off-policy
    corrections such as Retrace); zeros on the padding."""
    guided: torch.Tensor
    """``[L]`` bool: the steps a guide played (Jump-Start RL), whose actions DQfD's margin loss can imitate; False on
    the padding."""
    terminated: torch.Tensor
    """``[L]`` bool: True only at step n-1, if the episode terminated there."""
    truncated: torch.Tensor
    """``[L]`` bool: True only at step n-1, if the episode was cut there (time limit)."""
    mask: torch.Tensor
    """``[L]`` bool: the valid steps."""
    start_state: tuple[torch.Tensor, ...]
    """The actor's recurrent state before step 0 (each tensor without the env axis)."""
    previous_action: torch.Tensor
    """The action before step 0 (zeros at an episode's start)."""
    previous_reward: torch.Tensor
    """The reward before step 0 (zero at an episode's start), a scalar tensor."""
    starts_episode: bool
    """Step 0 is an episode's first step: ``start_state`` is exact, no burn-in needed."""


class _Lane:
    """One environment's steps since the oldest open sequence began."""

    def __init__(self) -> None:
        self.steps: list[tuple[torch.Tensor, ...]] = []  # (obs, action, reward, mu, guided)
        self.first = 0  # episode step index of steps[0]
        self.episode_step = 0
        self.opened: list[tuple[int, tuple[torch.Tensor, ...], torch.Tensor, torch.Tensor]] = []
        self.previous: tuple[torch.Tensor, torch.Tensor] | None = None


class SequenceWriter:
    """Feeds on vector steps, returns the sequences they complete.

    Args:
        num_envs: environments stepped together; length: steps per sequence; period: steps
            between the starts of consecutive sequences of an episode (``1 <= period <= length``).
    """

    def __init__(self, num_envs: int, length: int = 80, period: int = 40):
        if length < 1 or not 1 <= period <= length:
            raise ValueError(f"sequence length must be >= 1 and period in [1, length], got length {length}, period {period}")
        self.length, self.period = length, period
        self.lanes = [_Lane() for _ in range(num_envs)]

    def add(
        self,
        obs: torch.Tensor,
        actions: torch.Tensor,
        rewards: torch.Tensor,
        terminated: torch.Tensor,
        truncated: torch.Tensor,
        next_obs: torch.Tensor,
        states: tuple[torch.Tensor, ...],
        behaviour_probs: torch.Tensor,
        guided: torch.Tensor | None = None,
    ) -> list[Sequence]:
        """One vector step: ``obs``, ``actions``, ``next_obs`` (true successors) ``[N, ...]``;
        ``rewards`` ``[N]``; ``terminated``, ``truncated`` bool ``[N]``; ``states``: the recurrent
        state each env acted from, tensors ``[N, ...]``; ``behaviour_probs [N]``: mu(a_t | s_t); ``guided [N]`` bool:
        the environments a guide played (None: none)."""
        if guided is None:
            guided = torch.zeros(len(actions), dtype=torch.bool)
        done: list[Sequence] = []
        for env, lane in enumerate(self.lanes):
            if lane.previous is None:
                lane.previous = (torch.zeros_like(actions[env]), torch.zeros_like(rewards[env]))
            if lane.episode_step % self.period == 0:
                lane.opened.append((lane.episode_step, tuple(s[env].clone() for s in states), *lane.previous))
            lane.steps.append((obs[env].clone(), actions[env].clone(), rewards[env].clone(), behaviour_probs[env].clone(),
                               guided[env].clone()))
            lane.previous = lane.steps[-1][1:3]
            ends_terminal, ends_cut = bool(terminated[env]), bool(truncated[env]) and not bool(terminated[env])
            if ends_terminal or ends_cut:
                done.append(self._close(lane, next_obs[env], ends_terminal, ends_cut))
                self.lanes[env] = _Lane()  # the later open sequences were suffixes of the one closed
                continue
            if lane.episode_step - lane.opened[0][0] + 1 == self.length:
                done.append(self._close(lane, next_obs[env], False, False))
            lane.episode_step += 1
            keep_from = lane.opened[0][0] if lane.opened else lane.episode_step
            del lane.steps[: keep_from - lane.first]
            lane.first = keep_from
        return done

    def state_dict(self) -> dict[str, Any]:
        """The open sequences of each environment (tensors, ints, lists and tuples: read back with ``weights_only``)."""
        return {"lanes": [{"steps": list(lane.steps), "first": lane.first, "episode_step": lane.episode_step,
                           "opened": list(lane.opened), "previous": lane.previous} for lane in self.lanes]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        lanes = state.get("lanes") if isinstance(state, dict) else None
        if not isinstance(lanes, list) or len(lanes) != len(self.lanes):
            raise ValueError(f"the saved sequences in progress are not those of {len(self.lanes)} environments")
        restored = []
        for saved in lanes:
            lane = _Lane()
            if (not isinstance(saved, dict) or set(saved) != set(vars(lane)) or not _all_tensors(saved["steps"])
                    or not all(len(step) in (4, 5) for step in saved["steps"])
                    or not isinstance(saved["first"], int) or not isinstance(saved["episode_step"], int)
                    or not all(isinstance(item, tuple) and len(item) == 4 and isinstance(item[0], int) and _all_tensors([item[1]])
                               and _all_tensors([item[2:]], 2) for item in saved["opened"])
                    or not (saved["previous"] is None or _all_tensors([saved["previous"]], 2))):
                raise ValueError("a damaged sequence in progress")
            vars(lane).update(saved)
            lane.steps = [step if len(step) == 5 else (*step, torch.tensor(False)) for step in lane.steps]  # saved before guided
            restored.append(lane)
        self.lanes = restored

    def _close(self, lane: _Lane, next_obs: torch.Tensor, terminated: bool, truncated: bool) -> Sequence:
        """The oldest open sequence, ending at the lane's latest step."""
        start, state, previous_action, previous_reward = lane.opened.pop(0)
        obs, actions, rewards, behaviour_probs, guided = (torch.stack(field) for field in zip(*lane.steps[start - lane.first:]))
        n = len(rewards)
        mask = torch.arange(self.length) < n
        last = torch.arange(self.length) == n - 1
        return Sequence(
            obs=pad(torch.cat([obs, next_obs.unsqueeze(0)]), self.length + 1),
            actions=pad(actions, self.length),
            rewards=pad(rewards, self.length),
            behaviour_probs=pad(behaviour_probs, self.length),
            guided=pad(guided, self.length),
            terminated=last & terminated,
            truncated=last & truncated,
            mask=mask,
            start_state=state,
            previous_action=previous_action,
            previous_reward=previous_reward,
            starts_episode=start == 0,
        )


def _all_tensors(items: Any, size: int | None = None) -> bool:
    """``items`` is a list of tuples of tensors (each of ``size`` tensors when given)."""
    return isinstance(items, list) and all(
        isinstance(item, tuple) and (size is None or len(item) == size) and all(isinstance(t, torch.Tensor) for t in item)
        for item in items)


def pad(tensor: torch.Tensor, length: int) -> torch.Tensor:
    """``tensor [n, ...]`` with zeros appended along the first axis up to ``length``."""
    out = torch.zeros((length, *tensor.shape[1:]), dtype=tensor.dtype)
    out[: tensor.shape[0]] = tensor
    return out
