"""Shuffled minibatches over flattened rollout fields, or over whole sequences of them (recurrent policies)."""

from __future__ import annotations

from collections.abc import Iterator

import torch

PERMUTE_WHOLE_BYTES = 16 << 20
"""Fields up to this size are permuted once per epoch; larger ones are gathered per minibatch."""


def shuffled_minibatches(fields: dict[str, torch.Tensor], minibatch_size: int) -> Iterator[dict[str, torch.Tensor]]:
    """One epoch over ``fields`` (each ``[B, ...]``, same B) in random order.

    Small fields are permuted once (one gather per field and epoch) and then cut into
    contiguous slices of ``minibatch_size`` (views; the last may be shorter): many tiny
    gathers cost more than one. A large field (a rollout of Atari frames, 231 MB for
    16 x 512 stacks) is gathered minibatch by minibatch instead, so an epoch never makes
    a second full copy of it. Both give the same minibatches for the same random order.
    """
    size = next(iter(fields.values())).shape[0]
    order = torch.randperm(size, device=next(iter(fields.values())).device)
    shuffled = {name: tensor[order] for name, tensor in fields.items() if tensor.nbytes <= PERMUTE_WHOLE_BYTES}
    for start in range(0, size, minibatch_size):
        index = order[start : start + minibatch_size]
        yield {name: shuffled[name][start : start + minibatch_size] if name in shuffled else tensor[index]
               for name, tensor in fields.items()}


def sequence_steps(sequence_ids: torch.Tensor, sequence_length: int, num_envs: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Where ``B`` sequences lie in a rollout ``[T, N, ...]`` cut per environment into sequences of ``L =
    sequence_length`` consecutive steps, sequence ``i * N + n`` holding steps ``i L .. (i + 1) L - 1`` of
    environment n: ``sequence_ids [B]`` -> (steps ``[L, B]``, environments ``[L, B]``), so that
    ``field[steps, envs]`` is the sequences' ``[L, B, ...]``."""
    first_steps = torch.div(sequence_ids, num_envs, rounding_mode="floor") * sequence_length
    steps = first_steps + torch.arange(sequence_length, device=sequence_ids.device).unsqueeze(1)
    return steps, (sequence_ids % num_envs).expand(sequence_length, -1)


def shuffled_sequence_minibatches(fields: dict[str, torch.Tensor], sequence_length: int, minibatch_size: int
                                  ) -> Iterator[dict[str, torch.Tensor]]:
    """One epoch over rollout ``fields`` (each ``[T, N, ...]``, T a multiple of ``L = sequence_length``) in
    minibatches of whole sequences (``sequence_steps``) in random order, time-major ``[L, B, ...]`` with
    ``B = minibatch_size / L`` sequences (the last minibatch may hold fewer); each minibatch is gathered on its
    own, so an epoch never copies the whole rollout.

    A recurrent policy unrolls each sequence from its stored starting state (``lstm_hidden[0]``,
    ``lstm_cell[0]`` of the minibatch), resetting it where ``episode_starts`` is set, so the states inside
    a sequence are recomputed by the current parameters every epoch. The starting states themselves were
    computed by the parameters that collected the rollout: from the first gradient step on they are stale,
    as in recurrent PPO elsewhere (e.g. CleanRL's ppo_atari_lstm, Pleines et al. 2022), and are not
    recomputed; shorter sequences keep the staleness short.
    """
    first = next(iter(fields.values()))
    steps, num_envs = first.shape[:2]
    if steps % sequence_length:
        raise ValueError(f"a rollout of {steps} steps does not cut into sequences of {sequence_length}")
    order = torch.randperm(steps // sequence_length * num_envs, device=first.device)
    per_minibatch = max(1, minibatch_size // sequence_length)
    for start in range(0, order.numel(), per_minibatch):
        step_index, env_index = sequence_steps(order[start : start + per_minibatch], sequence_length, num_envs)
        yield {name: tensor[step_index, env_index] for name, tensor in fields.items()}


def accumulation_chunks(batch: dict[str, torch.Tensor], chunk_size: int | None, dim: int = 0
                        ) -> Iterator[tuple[float, dict[str, torch.Tensor]]]:
    """A minibatch cut along ``dim`` (its samples, or the sequences of ``[L, B, ...]`` fields: dim 1) into chunks
    of at most ``chunk_size`` (None: one chunk), each with its share of the minibatch: a mean loss over the
    minibatch is the share-weighted sum of the chunks' mean losses, so back-propagating ``share * chunk loss``
    chunk by chunk accumulates the minibatch's gradient."""
    size = next(iter(batch.values())).shape[dim]
    step = chunk_size or size
    for start in range(0, size, step):
        chunk = {name: tensor.narrow(dim, start, min(step, size - start)) for name, tensor in batch.items()}
        yield next(iter(chunk.values())).shape[dim] / size, chunk
