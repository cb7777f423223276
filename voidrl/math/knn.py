"""Particle-based entropy reward of APT (Liu & Abbeel 2021): k-NN distances in a latent space."""

from __future__ import annotations

import torch


@torch.no_grad()
def knn_distances(z: torch.Tensor, k: int, chunk_size: int = 1024) -> torch.Tensor:
    """Euclidean distances from each particle to its k nearest *other* particles, nearest first.

    Only the particle itself is excluded (by index): an exact duplicate of z_i is a
    neighbour at distance 0. ``k`` is capped at ``B - 1``. Neighbours are chosen from
    squared distances by the norm expansion, ``chunk_size`` rows at a time (memory
    ``chunk_size x B``); the returned distances are then recomputed as ||z_i - z_j|| so
    that near-duplicates lose no precision.

    Args:
        z: ``[B, D]`` particles.
    Returns:
        ``[B, max(1, min(k, B - 1))]`` distances.
    """
    if k < 1:
        raise ValueError(f"knn_distances: k must be at least 1, got {k}")
    batch = z.shape[0]
    k = min(k, batch - 1)
    if k == 0:
        return z.new_zeros(batch, 1)
    squared_norms = z.pow(2).sum(1)
    distances = []
    for start in range(0, batch, chunk_size):
        rows = z[start : start + chunk_size]
        squared = squared_norms[start : start + chunk_size, None] + squared_norms[None] - 2.0 * rows @ z.T
        own = torch.arange(start, start + rows.shape[0], device=z.device)
        squared[own - start, own] = float("inf")
        neighbours = squared.topk(k, dim=1, largest=False).indices
        distances.append((rows[:, None] - z[neighbours]).norm(dim=2))
    return torch.cat(distances)


def knn_mean_distance(z: torch.Tensor, k: int, chunk_size: int = 1024) -> torch.Tensor:
    """``[B]`` mean of ``knn_distances``; a single particle gets 0."""
    return knn_distances(z, k, chunk_size).mean(1)


def particle_reward(
    distances: torch.Tensor, running_mean: torch.Tensor | float, c: float = 1.0, clip: float = 0.0
) -> torch.Tensor:
    """APT's reward r_i = log(c + mean_j max(d_ij / d_mean - clip, 0)).

    ``distances`` are each particle's k-NN distances ``[B, k]``, or their means ``[B]``
    (then ``clip`` applies to the mean). ``running_mean`` is a running mean of the k-NN
    distances (e.g. ``RunningMeanStd.mean``), which makes the reward's scale independent
    of how spread out the latent space is. ``clip`` > 0 is the reference DeepMind Control
    code's floor: distances within ``clip`` running means count as zero.
    """
    normalised = (distances / running_mean - clip).clamp_min(0.0)
    return torch.log(c + (normalised.mean(-1) if normalised.dim() == 2 else normalised))


def episodic_novelty(
    squared_distances: torch.Tensor,
    mean_squared_distance: torch.Tensor | float,
    kernel_eps: float = 1e-3,
    pseudo_count: float = 1e-3,
    cluster_distance: float = 8e-3,
    max_similarity: float = 8.0,
) -> torch.Tensor:
    """NGU's episodic reward (Badia et al. 2020, Algorithm 1) from each state's k-NN in its episode's memory.

    d_n = max(d^2 / d_m^2 - cluster_distance, 0), K = kernel_eps / (d_n + kernel_eps),
    s = sqrt(sum_k K) + pseudo_count, r = 1 / s, or 0 where s > max_similarity.

    Args:
        squared_distances: ``[B, k]`` squared distances to the k nearest memories; ``inf`` marks a
            missing neighbour (a memory with fewer than k entries: it adds no similarity).
        mean_squared_distance: d_m^2, a running mean of the k-NN squared distances.
    Returns:
        ``[B]``; a state with no neighbour at all gets 1 / pseudo_count.
    """
    normalised = (squared_distances / mean_squared_distance - cluster_distance).clamp_min(0.0)
    similarity = (kernel_eps / (normalised + kernel_eps)).sum(-1).sqrt() + pseudo_count
    return torch.where(similarity > max_similarity, torch.zeros_like(similarity), 1.0 / similarity)


def lifelong_modulator(errors: torch.Tensor, mean: torch.Tensor | float, std: torch.Tensor | float,
                       max_modulation: float = 5.0) -> torch.Tensor:
    """NGU's life-long novelty alpha = clip(1 + (err - mean) / std, 1, L) from RND prediction errors ``[B]``."""
    return (1.0 + (errors - mean) / std).clamp(1.0, max_modulation)
