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
        z1: ``[N, D]`` projections of the first view.
        z2: ``[N, D]`` projections of the second view; row n of each comes from the same sample.
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


def bilinear_info_nce_loss(anchors: torch.Tensor, positives: torch.Tensor, weight: torch.Tensor,
                           first_label: int = 0) -> tuple[torch.Tensor, Metrics]:
    """CURL's contrastive loss (Laskin et al. 2020): InfoNCE with a learned bilinear similarity.

    Anchor n's logits are ``anchors[n] W positives[m]^T`` for every m; its positive is m = n + first_label
    and the other samples' positives are its negatives:

        l(n) = -log( exp(q_n W k_{n + first_label}) / sum_m exp(q_n W k_m) ),

    averaged over the N anchors. Only anchors -> positives is scored (the loss is asymmetric); the
    positives usually come from a momentum target encoder without gradient.

    Args:
        anchors: ``[N, D]``; positives ``[M, D]``, M >= N + first_label: row n of the anchors and row
            n + first_label of the positives come from the same sample (a data-parallel rank's anchors
            against every rank's positives).
        weight: ``[D, D]`` bilinear W.
    Returns:
        ``(loss, metrics)``; ``apt/contrastive_accuracy`` is the share of anchors whose highest logit is
        their positive.
    """
    logits = anchors @ weight @ positives.T
    logits = logits - logits.detach().amax(1, keepdim=True)  # CURL's shift; the softmax is unchanged
    labels = torch.arange(first_label, first_label + anchors.shape[0], device=anchors.device)
    loss = F.cross_entropy(logits, labels)
    with torch.no_grad():
        accuracy = (logits.argmax(1) == labels).float().mean()
    return loss, {"apt/contrastive_loss": loss.detach(), "apt/contrastive_accuracy": accuracy}


@torch.no_grad()
def ema_update(target: list[torch.Tensor], online: list[torch.Tensor], tau: float) -> None:
    """Polyak average in place: ``target <- (1 - tau) * target + tau * online``, tensor by tensor."""
    if not 0.0 < tau <= 1.0:
        raise ValueError(f"ema_update: tau must be in (0, 1], got {tau}")
    torch._foreach_lerp_(target, online, tau)


@torch.no_grad()
def effective_rank(z: torch.Tensor) -> torch.Tensor:
    """Roy & Vetterli's effective rank of a batch ``[B, D]``: exp of the entropy of its singular values
    normalised to sum 1. Between 1 (every row on one line) and min(B, D) (all directions equally used).

    The batch is not centred (as in RankMe, Garrido et al. 2023): a representation that maps every
    input to one constant vector has rank 1."""
    singular = torch.linalg.svdvals(z.double())
    p = singular / singular.sum().clamp_min(1e-12)
    entropy = -(p * p.clamp_min(1e-30).log()).sum()
    return entropy.exp().to(z.dtype)


@torch.no_grad()
def representation_metrics(latents: torch.Tensor, projections: torch.Tensor, dead_std: float = 0.01) -> Metrics:
    """Collapse diagnostics of a batch's latents ``[B, D]`` and projections ``[B, P]`` (before normalisation):
    mean norm of the projections, mean per-dimension std of the latents, their effective rank and the
    share of latent dimensions whose std over the batch is below ``dead_std`` (dead units)."""
    std = latents.std(0)
    return {
        "apt/projection_norm": projections.norm(dim=1).mean(),
        "apt/latent_std": std.mean(),
        "apt/latent_effective_rank": effective_rank(latents),
        "apt/dead_units": (std < dead_std).float().mean(),
    }
