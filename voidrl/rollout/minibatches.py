"""Shuffled minibatches over flattened rollout fields."""

from __future__ import annotations

from collections.abc import Iterator

import torch


def shuffled_minibatches(fields: dict[str, torch.Tensor], minibatch_size: int) -> Iterator[dict[str, torch.Tensor]]:
    """One epoch over ``fields`` (each ``[B, ...]``, same B) in random order.

    Each field is permuted once (one gather per field and epoch) and then cut into
    contiguous slices of ``minibatch_size`` (views; the last may be shorter).
    """
    size = next(iter(fields.values())).shape[0]
    order = torch.randperm(size, device=next(iter(fields.values())).device)
    shuffled = {name: tensor[order] for name, tensor in fields.items()}
    for start in range(0, size, minibatch_size):
        yield {name: tensor[start : start + minibatch_size] for name, tensor in shuffled.items()}
