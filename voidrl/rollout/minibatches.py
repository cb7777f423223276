"""Shuffled minibatches over flattened rollout fields."""

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


def accumulation_chunks(batch: dict[str, torch.Tensor], chunk_size: int | None) -> Iterator[tuple[float, dict[str, torch.Tensor]]]:
    """A minibatch cut into chunks of at most ``chunk_size`` samples (None: one chunk), each with its share
    of the minibatch: a mean loss over the minibatch is the share-weighted sum of the chunks' mean losses,
    so back-propagating ``share * chunk loss`` chunk by chunk accumulates the minibatch's gradient."""
    size = next(iter(batch.values())).shape[0]
    step = chunk_size or size
    for start in range(0, size, step):
        chunk = {name: tensor[start : start + step] for name, tensor in batch.items()}
        yield next(iter(chunk.values())).shape[0] / size, chunk
