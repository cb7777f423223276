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


def sequences(tensor: torch.Tensor, sequence_length: int) -> torch.Tensor:
    """A rollout field ``[T, N, ...]`` cut per environment into ``T / L`` sequences of ``L = sequence_length``
    consecutive steps: ``[T / L * N, L, ...]``, sequence ``i * N + n`` holding steps ``i L .. (i + 1) L - 1`` of
    environment n. T must be a multiple of L."""
    steps, envs = tensor.shape[:2]
    if steps % sequence_length:
        raise ValueError(f"a rollout of {steps} steps does not cut into sequences of {sequence_length}")
    chunked = tensor.reshape(steps // sequence_length, sequence_length, envs, *tensor.shape[2:])
    return chunked.transpose(1, 2).reshape(-1, sequence_length, *tensor.shape[2:])


def shuffled_sequence_minibatches(fields: dict[str, torch.Tensor], sequence_length: int, minibatch_size: int
                                  ) -> Iterator[dict[str, torch.Tensor]]:
    """One epoch over rollout ``fields`` (each ``[T, N, ...]``) in minibatches of whole sequences, time-major
    ``[L, B, ...]`` with ``B = minibatch_size / L`` sequences (the last minibatch may hold fewer).

    A recurrent policy unrolls each sequence from its stored starting state (``lstm_hidden[0]``,
    ``lstm_cell[0]`` of the minibatch), resetting it where ``episode_starts`` is set. Those states were
    computed by the parameters that collected the rollout: from the first gradient step on they are stale,
    as in recurrent PPO elsewhere (e.g. Huang et al. 2022's ppo_atari_lstm, Pleines et al. 2022), and are
    not recomputed; shorter sequences keep the staleness short.
    """
    chunked = {name: sequences(tensor, sequence_length) for name, tensor in fields.items()}
    for batch in shuffled_minibatches(chunked, max(1, minibatch_size // sequence_length)):
        yield {name: tensor.transpose(0, 1) for name, tensor in batch.items()}


def accumulation_chunks(batch: dict[str, torch.Tensor], chunk_size: int | None) -> Iterator[tuple[float, dict[str, torch.Tensor]]]:
    """A minibatch cut into chunks of at most ``chunk_size`` samples (None: one chunk), each with its share
    of the minibatch: a mean loss over the minibatch is the share-weighted sum of the chunks' mean losses,
    so back-propagating ``share * chunk loss`` chunk by chunk accumulates the minibatch's gradient."""
    size = next(iter(batch.values())).shape[0]
    step = chunk_size or size
    for start in range(0, size, step):
        chunk = {name: tensor[start : start + step] for name, tensor in batch.items()}
        yield next(iter(chunk.values())).shape[0] / size, chunk
