"""Contrastive representation loss: SimCLR's NT-Xent (Chen et al. 2020)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

Metrics = dict[str, torch.Tensor]


def nt_xent_loss(z1: torch.Tensor, z2: torch.Tensor, temperature: float = 0.1) -> tuple[torch.Tensor, Metrics]:
    """Normalised temperature-scaled cross-entropy over two views of N samples.

    With the 2N views z = [z1; z2] and sim the cosine similarity, view i's positive
    is the other view of the same sample, p(i) = i + N mod 2N, and

        l(i) = -log( exp(sim(z_i, z_p(i)) / tau) / sum_{k != i} exp(sim(z_i, z_k) / tau) ),

    averaged over all 2N views (both directions of every positive pair).

    Args:
        z1, z2: ``[N, D]`` projections; row n of each comes from the same sample.
    Returns:
        ``(loss, metrics)``; ``apt/contrastive_accuracy`` is the share of views whose
        most similar other view is their positive.
    """
    n = z1.shape[0]
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    logits = z @ z.T / temperature
    self_pair = torch.eye(2 * n, dtype=torch.bool, device=z.device)
    logits = logits.masked_fill(self_pair, float("-inf"))
    positive = torch.arange(2 * n, device=z.device).roll(n)
    loss = F.cross_entropy(logits, positive)
    with torch.no_grad():
        accuracy = (logits.argmax(1) == positive).float().mean()
    return loss, {"apt/contrastive_loss": loss.detach(), "apt/contrastive_accuracy": accuracy}
