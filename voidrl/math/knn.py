"""Particle-based entropy reward of APT (Liu & Abbeel 2021): k-NN distances in a latent space."""

from __future__ import annotations

import torch


@torch.no_grad()
def knn_mean_distance(z: torch.Tensor, k: int, chunk_size: int = 1024) -> torch.Tensor:
    """Mean Euclidean distance from each particle to its k nearest *other* particles.

    Only the particle itself is excluded (by index): an exact duplicate of z_i is a
    neighbour at distance 0. ``k`` is capped at ``B - 1``; a single particle gets 0.
    Neighbours are chosen from squared distances by the norm expansion, ``chunk_size``
    rows at a time (memory ``chunk_size x B``); the returned distances are then
    recomputed as ||z_i - z_j|| so that near-duplicates lose no precision.

    Args:
        z: ``[B, D]`` particles.
    Returns:
        ``[B]`` mean distance to the k nearest neighbours.
    """
    if k < 1:
        raise ValueError(f"knn_mean_distance: k must be at least 1, got {k}")
    batch = z.shape[0]
    k = min(k, batch - 1)
    if k == 0:
        return z.new_zeros(batch)
    squared_norms = z.pow(2).sum(1)
    means = []
    for start in range(0, batch, chunk_size):
        rows = z[start : start + chunk_size]
        squared = squared_norms[start : start + chunk_size, None] + squared_norms[None] - 2.0 * rows @ z.T
        own = torch.arange(start, start + rows.shape[0], device=z.device)
        squared[own - start, own] = float("inf")
        neighbours = squared.topk(k, dim=1, largest=False).indices
        means.append((rows[:, None] - z[neighbours]).norm(dim=2).mean(1))
    return torch.cat(means)


def particle_reward(
    mean_distance: torch.Tensor, running_mean: torch.Tensor | float, c: float = 1.0
) -> torch.Tensor:
    """APT's reward r_i = log(c + d_i / d_mean) for mean k-NN distances ``[B]``.

    ``running_mean`` is a running mean of the k-NN distances (e.g. ``RunningMeanStd.mean``),
    which makes the reward's scale independent of how spread out the latent space is.
    """
    return torch.log(c + mean_distance / running_mean)
