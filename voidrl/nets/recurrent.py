"""R2D2's recurrent Q-network: torso, LSTM fed the previous action and reward, duelling head."""

from __future__ import annotations

import functools
from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from voidrl.nets.bodies import make_body, orthogonal_init


def zero_where(state: torch.Tensor, episode_starts: torch.Tensor) -> torch.Tensor:
    """``state [B, ...]`` with the rows whose episode begins (``episode_starts [B]`` bool) set to zero."""
    return state * (~episode_starts).to(state.dtype).view(-1, *(1,) * (state.dim() - 1))


def lstm_step(lstm: nn.LSTM, inputs: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """One step of the one-layer ``lstm`` for ``inputs [B, F]`` from ``state`` (``h``, ``c`` each ``[B, H]``) -> the
    next ``(h, c)``. ``torch.lstm_cell`` with the LSTM's weights: ``nn.LSTM``'s arithmetic (to float rounding) at a
    third of its time for one step on a CPU, where ``nn.LSTM`` sets up a whole-sequence kernel."""
    return torch.lstm_cell(inputs, state, lstm.weight_ih_l0, lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0)


SATURATION = 1e4
"""A gate pre-activation that saturates sigmoid to exactly 0 or 1 in float32 while the rest of
the gate's sum stays below a few thousand in size."""


@functools.cache
def _control_weights(hidden_size: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """``[4 H, 2]`` input weights of two control inputs, gates in ``nn.LSTM``'s order (input, forget, cell, output):
    *reset* closes the input, forget and output gates, so the step's state is exactly zero (c = 0 c' + 0 g, h = 0
    tanh c); *hold* closes the input gate and opens the forget gate, so the cell state passes unchanged (c = 1 c' +
    0 g). Saturated gates have a zero derivative: no gradient crosses either step. Constant: made once per size."""
    gates = torch.zeros(4, hidden_size, 2, dtype=dtype, device=device)
    gates[(0, 1, 3), :, 0] = -SATURATION
    gates[0, :, 1], gates[1, :, 1] = -SATURATION, SATURATION
    return gates.reshape(4 * hidden_size, 2)


class ResetSchedule(NamedTuple):
    """Where the steps of sequences ``[T, B]`` go in ``lstm_over_episodes``'s unrolled run of ``U`` steps per column,
    reset steps inserted: the same for every LSTM that reads those sequences."""

    length: int
    """``U``: T plus the most episode starts after step 0 in one column."""
    sources: torch.Tensor
    """``[U * B]`` long: what each unrolled step reads, step-major: real step ``t * B + b``, ``T * B`` a reset, ``T * B
    + 1`` a hold."""
    places: torch.Tensor
    """``[T * B]`` long: where real step ``t * B + b`` lies among the ``U * B`` unrolled steps."""


def reset_schedule(episode_starts: torch.Tensor) -> ResetSchedule | None:
    """The unrolled run for sequences with ``episode_starts [T, B]`` (bool), or None where no episode starts after
    step 0 (the LSTM then runs over the sequences as they are)."""
    steps, batch = episode_starts.shape
    if steps == 1 or not episode_starts[1:].any():
        return None
    resets = episode_starts.clone()
    resets[0] = False  # a start at step 0 is the zeroed initial state
    position = torch.arange(steps, device=resets.device).unsqueeze(1) + resets.cumsum(0)  # [T, B]: each step's place
    length = int(position[-1].max()) + 1
    places = (position * batch + torch.arange(batch, device=resets.device)).flatten()
    sources = torch.full((length * batch,), steps * batch + 1, dtype=torch.long, device=resets.device)
    sources[places] = torch.arange(steps * batch, device=resets.device)
    sources[places[resets.flatten()] - batch] = steps * batch  # the reset goes just before the start, in its column
    return ResetSchedule(length, sources, places)


def lstm_over_episodes(lstm: nn.LSTM, inputs: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor],
                       episode_starts: torch.Tensor, final_state: bool = True, schedule: ResetSchedule | None | bool = True
                       ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor] | None]:
    """One-layer ``lstm`` over ``inputs [T, B, F]`` from ``state`` (``h``, ``c`` each ``[B, H]``, before step 0), the
    state zeroed wherever ``episode_starts [T, B]`` (bool) is set -> outputs ``[T, B, H]`` and the state after step
    T - 1 (None without ``final_state``). Equals stepping ``lstm`` one step at a time with the state zeroed at each
    start, to float rounding, values and gradients; neither crosses an episode start. ``schedule``: the sequences'
    ``reset_schedule``, for LSTMs that read the same sequences to share (True: make it here).

    One ``nn.LSTM`` kernel call over all columns, however many episodes begin inside them: before each start after
    step 0 a *reset* step is inserted into that column (two control inputs beside the features drive its gates
    shut, ``_control_weights``), and each column is filled up to the longest with *hold* steps that keep its cell
    state, so the call's final cell state is each column's own. The LSTM thus runs B x (T + most resets in a
    column) steps, where cutting the columns into pieces padded to the longest ran about twice the real steps
    (CartPole without velocities, sequences of 32)."""
    steps, batch, features = inputs.shape
    keep = (~episode_starts[0]).to(state[0].dtype).unsqueeze(1)
    initial = ((state[0] * keep).unsqueeze(0).contiguous(), (state[1] * keep).unsqueeze(0).contiguous())
    if schedule is True:
        schedule = reset_schedule(episode_starts)
    if schedule is None:
        outputs, (h, c) = lstm(inputs, initial)
        return outputs, (h.squeeze(0), c.squeeze(0)) if final_state else None
    controls = _control_weights(lstm.hidden_size, inputs.dtype, inputs.device)
    extended = torch.cat([F.pad(inputs.reshape(steps * batch, features), (0, 2)), F.pad(torch.eye(2, dtype=inputs.dtype, device=inputs.device),
                                                                                          (features, 0))])
    unrolled = extended[schedule.sources].view(schedule.length, batch, features + 2)
    weights = [torch.cat([lstm.weight_ih_l0, controls], dim=1), lstm.weight_hh_l0, lstm.bias_ih_l0, lstm.bias_hh_l0]
    out, _, c = torch.lstm(unrolled, initial, weights, True, 1, 0.0, lstm.training, False, False)
    outputs = out.reshape(schedule.length * batch, -1)[schedule.places].view(steps, batch, -1)
    return outputs, (outputs[-1], c.squeeze(0)) if final_state else None


class RecurrentState(NamedTuple):
    """What a recurrent Q-network carries between steps of ``B`` environments."""

    hidden: torch.Tensor
    """``[B, lstm_size]``."""
    cell: torch.Tensor
    """``[B, lstm_size]``."""
    previous_action: torch.Tensor
    """``[B]`` long: the action taken at the last step (0 at an episode's start)."""


class RecurrentQNetwork(nn.Module):
    """Q(s_t, .) from the history: ``torso(s_t)``, one-hot a_{t-1} and r_{t-1} (and any context, such as
    NGU's one-hot family member j) into an LSTM, then Q = V + A - mean(A) (Wang et al., 2016; Kapturowski
    et al., 2019).

    Args:
        obs_shape: the environment's observation shape.
        num_actions: the environment's number of actions.
        network: the torso (``make_body``).
        hidden_sizes: the torso's hidden sizes (``make_body``).
        lstm_size: LSTM units (512 in R2D2).
        head_size: hidden units of each duelling stream.
        memory: ``lstm``, or ``none``: a feed-forward ReLU layer of the same width in the LSTM's place (the state
            passes through unchanged), the memoryless ablation of the same size.
        reward_inputs: rewards fed back per step (1; NGU: 2, extrinsic and intrinsic).
        context_size: width of a per-sequence context input (0: none).
        prior: a frozen feed-forward actor-critic over the same observations and actions, or None; with it
            Q(s, a) = Q_theta(s, a) + prior_coef log pi_prior(a|s) (R2D2's ``prior``).
        prior_coef: see ``prior``.
    """

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, network: str = "auto",
                 hidden_sizes: tuple[int, ...] = (64, 64), lstm_size: int = 512, head_size: int = 512, memory: str = "lstm",
                 reward_inputs: int = 1, context_size: int = 0, prior: nn.Module | None = None, prior_coef: float = 1.0):
        super().__init__()
        self.prior, self.prior_coef = prior, prior_coef
        self.num_actions = num_actions = int(num_actions)
        self.torso = make_body(network, obs_shape, hidden_sizes)
        inputs = self.torso.out_features + num_actions + reward_inputs + context_size
        self.lstm = nn.LSTM(inputs, lstm_size) if memory == "lstm" else nn.Sequential(orthogonal_init(nn.Linear(inputs, lstm_size)), nn.ReLU())
        self.lstm_size = lstm_size
        self.value = nn.Sequential(orthogonal_init(nn.Linear(lstm_size, head_size)), nn.ReLU(), orthogonal_init(nn.Linear(head_size, 1), 1.0))
        self.advantage = nn.Sequential(orthogonal_init(nn.Linear(lstm_size, head_size)), nn.ReLU(),
                                       orthogonal_init(nn.Linear(head_size, num_actions), 1.0))

    def initial_state(self, batch: int) -> RecurrentState:
        device = self.value[0].weight.device
        zeros = torch.zeros(batch, self.lstm_size, device=device)
        return RecurrentState(zeros, zeros.clone(), torch.zeros(batch, dtype=torch.long, device=device))

    def unroll(self, obs: torch.Tensor, previous_actions: torch.Tensor, previous_rewards: torch.Tensor,
               hidden: tuple[torch.Tensor, torch.Tensor], context: torch.Tensor | None = None
               ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """``obs [T, B, ...]``, ``previous_actions`` ``[T, B]`` (long), ``previous_rewards`` ``[T, B]`` (or
        ``[T, B, reward_inputs]``), LSTM ``(h, c)`` each ``[B, lstm_size]``, ``context [B, context_size]`` ->
        Q ``[T, B, A]`` and the LSTM state after step T - 1. No episode may begin inside."""
        steps, batch = obs.shape[:2]
        features = self.torso(obs.flatten(0, 1)).view(steps, batch, -1)
        rewards = previous_rewards if previous_rewards.dim() == 3 else previous_rewards.unsqueeze(-1)
        parts = [features, F.one_hot(previous_actions, self.num_actions).to(features.dtype), rewards.to(features.dtype)]
        if context is not None:
            parts.append(context.to(features.dtype).unsqueeze(0).expand(steps, -1, -1))
        inputs = torch.cat(parts, dim=-1)
        if not isinstance(self.lstm, nn.LSTM):
            output, after = self.lstm(inputs), hidden
        else:
            output, (h, c) = self.lstm(inputs, (hidden[0].unsqueeze(0).contiguous(), hidden[1].unsqueeze(0).contiguous()))
            after = (h.squeeze(0), c.squeeze(0))
        advantage = self.advantage(output)
        q = self.value(output) + advantage - advantage.mean(dim=-1, keepdim=True)
        if self.prior is not None:
            q = q + self.prior_coef * self.prior_log_probs(obs)
        return q, after

    @torch.no_grad()
    def prior_log_probs(self, obs: torch.Tensor) -> torch.Tensor:
        """log pi_prior(. | s) ``[T, B, A]`` of ``obs [T, B, ...]``."""
        flat = obs.flatten(0, 1)
        starts = torch.zeros(len(flat), dtype=torch.bool, device=flat.device)
        return self.prior.distribution(flat, self.prior.initial_state(len(flat)), starts).log_probs.view(*obs.shape[:2], -1)

    def reset_where(self, state: RecurrentState, episode_starts: torch.Tensor) -> RecurrentState:
        """``state`` with the environments whose episode begins (``episode_starts [B]`` bool) set to zero."""
        return RecurrentState(zero_where(state.hidden, episode_starts), zero_where(state.cell, episode_starts),
                              torch.where(episode_starts, 0, state.previous_action))

    def step(self, obs: torch.Tensor, state: RecurrentState, previous_reward: torch.Tensor) -> tuple[torch.Tensor, RecurrentState]:
        """One step of ``B`` environments: ``obs [B, ...]``, ``previous_reward [B]`` (0 at an episode's
        start). Returns Q ``[B, A]`` and the LSTM state after it (``previous_action`` is the caller's to set)."""
        q, (h, c) = self.unroll(obs.unsqueeze(0), state.previous_action.unsqueeze(0), previous_reward.unsqueeze(0),
                                (state.hidden, state.cell))
        return q.squeeze(0), RecurrentState(h, c, state.previous_action)

    @torch.no_grad()
    def act(self, obs: torch.Tensor, state: RecurrentState, episode_starts: torch.Tensor, previous_reward: torch.Tensor
            ) -> tuple[torch.Tensor, RecurrentState]:
        """Greedy actions ``[B]`` and the next state (a Q-network's evaluation policy is greedy)."""
        q, state = self.step(obs, self.reset_where(state, episode_starts), previous_reward)
        action = q.argmax(dim=-1)
        return action, state._replace(previous_action=action)
