"""R2D2's recurrent Q-network: torso, LSTM fed the previous action and reward, duelling head."""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from voidrl.nets.bodies import make_body, orthogonal_init


def zero_where(state: torch.Tensor, episode_start: torch.Tensor) -> torch.Tensor:
    """``state [B, ...]`` with the rows whose episode begins (``episode_start [B]`` bool) set to zero."""
    return state * (~episode_start).to(state.dtype).view(-1, *(1,) * (state.dim() - 1))


def lstm_over_episodes(lstm: nn.LSTM, inputs: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor],
                       episode_starts: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """One-layer ``lstm`` over ``inputs [T, B, F]`` from ``state`` (``h``, ``c`` each ``[B, H]``, before step 0), the
    state zeroed wherever ``episode_starts [T, B]`` (bool) is set -> outputs ``[T, B, H]`` and the state after step
    T - 1. Each column is cut at its episode starts; the pieces run as separate sequences of one call, those cut by a
    start from a zero state, so neither values nor gradients cross an episode start. Equals stepping ``lstm`` one step
    at a time with the state zeroed at each start, to float rounding.

    The pieces run padded to the longest, not packed: the padding after a piece's end never reaches its outputs, and
    on a CPU a padded ``nn.LSTM`` call with its backward pass took a third of a packed one's time (40 pieces of up to
    32 steps, 64 units). The state after step T - 1 comes from one more, packed, call over each column's last piece
    alone (its state at the padded call's end would include the padding)."""
    steps, batch = episode_starts.shape
    hidden, cell = zero_where(state[0], episode_starts[0]), zero_where(state[1], episode_starts[0])
    if steps == 1 or not episode_starts[1:].any():
        outputs, (h, c) = lstm(inputs, (hidden.unsqueeze(0).contiguous(), cell.unsqueeze(0).contiguous()))
        return outputs, (h.squeeze(0), c.squeeze(0))
    begins = episode_starts.t().clone()  # [B, T]: column by column, each column's steps in order
    begins[:, 0] = True
    begins = begins.reshape(-1)
    piece = begins.cumsum(0) - 1  # [B * T]: the piece each step belongs to
    piece_start = begins.nonzero().squeeze(1)
    column_major = torch.arange(batch * steps, device=inputs.device)  # b * T + t
    position = column_major - piece_start[piece]
    lengths = torch.bincount(piece)
    source = (column_major % steps) * batch + column_major // steps  # t * B + b: index into inputs.flatten(0, 1)
    padded = inputs.new_zeros(len(lengths), int(lengths.max()), inputs.shape[-1])
    padded[piece, position] = inputs.flatten(0, 1)[source]
    first, last = piece[::steps], piece[steps - 1::steps]  # each column's first and last piece
    h0, c0 = hidden.new_zeros(len(lengths), hidden.shape[-1]), cell.new_zeros(len(lengths), cell.shape[-1])
    h0[first], c0[first] = hidden, cell
    out, _ = lstm(padded.transpose(0, 1), (h0.unsqueeze(0), c0.unsqueeze(0)))
    outputs = out.transpose(0, 1)[piece, position].view(batch, steps, -1).transpose(0, 1)
    ends = nn.utils.rnn.pack_padded_sequence(padded[last], lengths[last].cpu(), batch_first=True, enforce_sorted=False)
    _, (h, c) = lstm(ends, (h0[last].unsqueeze(0), c0[last].unsqueeze(0)))
    return outputs, (h.squeeze(0), c.squeeze(0))


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
    """

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, network: str = "auto",
                 hidden_sizes: tuple[int, ...] = (64, 64), lstm_size: int = 512, head_size: int = 512, memory: str = "lstm",
                 reward_inputs: int = 1, context_size: int = 0):
        super().__init__()
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
        return q, after

    def reset_where(self, state: RecurrentState, episode_start: torch.Tensor) -> RecurrentState:
        """``state`` with the environments whose episode begins (``episode_start [B]`` bool) set to zero."""
        return RecurrentState(zero_where(state.hidden, episode_start), zero_where(state.cell, episode_start),
                              torch.where(episode_start, 0, state.previous_action))

    def step(self, obs: torch.Tensor, state: RecurrentState, previous_reward: torch.Tensor) -> tuple[torch.Tensor, RecurrentState]:
        """One step of ``B`` environments: ``obs [B, ...]``, ``previous_reward [B]`` (0 at an episode's
        start). Returns Q ``[B, A]`` and the LSTM state after it (``previous_action`` is the caller's to set)."""
        q, (h, c) = self.unroll(obs.unsqueeze(0), state.previous_action.unsqueeze(0), previous_reward.unsqueeze(0),
                                (state.hidden, state.cell))
        return q.squeeze(0), RecurrentState(h, c, state.previous_action)

    def act(self, obs: torch.Tensor, state: RecurrentState, episode_start: torch.Tensor, previous_reward: torch.Tensor
            ) -> tuple[torch.Tensor, RecurrentState]:
        """Greedy actions ``[B]`` and the next state (a Q-network's evaluation policy is greedy)."""
        q, state = self.step(obs, self.reset_where(state, episode_start), previous_reward)
        action = q.argmax(dim=-1)
        return action, state._replace(previous_action=action)
