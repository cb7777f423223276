"""Shuffled minibatches over flattened rollout fields, or over whole sequences of them (recurrent policies)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

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


STATE_FIELDS = ("lstm_hidden", "lstm_cell")
"""The fields of a rollout that hold the policy's state before each step: a minibatch keeps them for each sample's
first step only, the state its unroll starts from."""


def shuffled_sequence_minibatches(fields: dict[str, torch.Tensor], sequence_length: int, minibatch_size: int,
                                  before_each: Callable[[], None] | None = None) -> Iterator[dict[str, torch.Tensor]]:
    """One epoch over rollout ``fields`` (each ``[T, N, ...]``, T a multiple of ``L = sequence_length``) in
    minibatches of whole sequences (``sequence_steps``) in random order, time-major ``[L, B, ...]`` with
    ``B = minibatch_size / L`` sequences (the last minibatch may hold fewer); each minibatch is gathered on its
    own, so an epoch never copies the whole rollout. The state fields (``STATE_FIELDS``) are each sequence's state
    before its first step, ``[B, ...]``.

    A recurrent policy unrolls each sequence from that stored starting state, resetting it where
    ``episode_starts`` is set, so the states inside a sequence are recomputed by the current parameters every
    epoch. The starting states themselves were computed by the parameters that collected the rollout: from the
    first gradient step on they are stale, as in recurrent PPO elsewhere (e.g. CleanRL's ppo_atari_lstm, Pleines
    et al. 2022), and are not recomputed; shorter sequences keep the staleness short.

    Sequences of one step (a feed-forward policy's samples) are ``shuffled_minibatches`` of the flattened fields,
    one step of B environments each (``[B, ...]``, the form a policy's one-step call takes), the same minibatches for
    the same random order. ``before_each`` (sequences only) runs before each minibatch is gathered, after the
    consumer's work on the one before (``OnPolicyAlgorithm``'s state refresh).
    """
    if sequence_length == 1:
        yield from shuffled_minibatches({name: tensor.flatten(0, 1) for name, tensor in fields.items()}, minibatch_size)
        return
    first = next(iter(fields.values()))
    steps, num_envs = first.shape[:2]
    if steps % sequence_length:
        raise ValueError(f"a rollout of {steps} steps does not cut into sequences of {sequence_length}")
    order = torch.randperm(steps // sequence_length * num_envs, device=first.device)
    per_minibatch = max(1, minibatch_size // sequence_length)
    for start in range(0, order.numel(), per_minibatch):
        if before_each is not None:
            before_each()
        step_index, env_index = sequence_steps(order[start : start + per_minibatch], sequence_length, num_envs)
        yield {name: tensor[step_index[0], env_index[0]] if name in STATE_FIELDS else tensor[step_index, env_index]
               for name, tensor in fields.items()}


def accumulation_chunks(batch: dict[str, torch.Tensor], chunk_size: int | None
                        ) -> Iterator[tuple[float, dict[str, torch.Tensor]]]:
    """A minibatch of ``shuffled_sequence_minibatches`` cut into chunks of at most ``chunk_size`` samples (steps, or
    whole sequences; None: one chunk), each with its share of the minibatch: a mean loss over the minibatch is the
    share-weighted sum of the chunks' mean losses, so back-propagating ``share * chunk loss`` chunk by chunk
    accumulates the minibatch's gradient."""
    size = batch["episode_starts"].shape[-1]
    step = chunk_size or size
    for start in range(0, size, step):
        length = min(step, size - start)
        chunk = {name: tensor.narrow(sample_dim(batch, name), start, length) for name, tensor in batch.items()}
        yield length / size, chunk


def sample_dim(batch: dict[str, torch.Tensor], name: str) -> int:
    """The dim of ``batch[name]`` that runs over the minibatch's samples: 1 for the steps of sequences ``[L, B, ...]``,
    0 for one-step samples ``[B, ...]`` and for the state fields."""
    return 0 if name in STATE_FIELDS else batch["episode_starts"].dim() - 1
