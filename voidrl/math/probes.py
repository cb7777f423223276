"""What a learned representation keeps: a linear probe's held-out R^2, and reconstruction error where the body is."""

from __future__ import annotations

import torch


def linear_probe_r2(train_inputs: torch.Tensor, train_targets: torch.Tensor, test_inputs: torch.Tensor,
                    test_targets: torch.Tensor, ridge: float = 1e-3) -> torch.Tensor:
    """Fit ``targets ~ inputs @ W + b`` by ridge regression on ``train_inputs [N, D]``, ``train_targets [N, K]``
    (inputs standardised with the training set's statistics; the bias is not penalised), and return each target's
    coefficient of determination on the held-out set, ``R^2 [K] = 1 - SSE / SST`` with SST about the held-out mean:
    1 is a perfect fit, 0 no better than that mean, negative worse."""
    mean, std = train_inputs.mean(0), train_inputs.std(0).clamp_min(1e-8)

    def design(inputs: torch.Tensor) -> torch.Tensor:
        scaled = (inputs.double() - mean.double()) / std.double()
        return torch.cat([scaled, torch.ones(len(inputs), 1, dtype=torch.float64)], 1)

    x, y = design(train_inputs), train_targets.double()
    penalty = ridge * len(x) * torch.eye(x.shape[1], dtype=torch.float64)
    penalty[-1, -1] = 0.0
    weights = torch.linalg.solve(x.T @ x + penalty, x.T @ y)
    return held_out_r2(design(test_inputs) @ weights, test_targets)


def knn_probe_r2(train_inputs: torch.Tensor, train_targets: torch.Tensor, test_inputs: torch.Tensor,
                 test_targets: torch.Tensor, k: int = 10) -> torch.Tensor:
    """The non-linear counterpart of ``linear_probe_r2``, with the same arguments and result ``R^2 [K]``: each held-out
    input's targets are predicted as the mean of those of its ``k`` nearest training inputs (Euclidean distance on
    inputs standardised with the training set's statistics). Far above the linear probe, it says the latent holds
    what the linear map cannot read out."""
    if not 1 <= k <= len(train_inputs):
        raise ValueError(f"k must lie in [1, {len(train_inputs)}] (the training inputs), got {k}")
    mean, std = train_inputs.mean(0), train_inputs.std(0).clamp_min(1e-8)
    train, test = ((inputs.double() - mean.double()) / std.double() for inputs in (train_inputs, test_inputs))
    neighbours = torch.cdist(test, train).topk(k, dim=1, largest=False).indices
    return held_out_r2(train_targets.double()[neighbours].mean(1), test_targets)


def held_out_r2(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Each target's coefficient of determination ``[K]`` of ``predictions`` for ``targets [N, K]``,
    ``1 - SSE / SST`` with SST about the targets' own mean."""
    residual = targets.double() - predictions.double()
    total = targets.double() - targets.double().mean(0)
    return 1.0 - residual.pow(2).sum(0) / total.pow(2).sum(0).clamp_min(1e-12)


def masked_mean_squared_error(frames: torch.Tensor, reconstructions: torch.Tensor, mask: torch.Tensor) -> float:
    """Mean squared error per channel value, intensities in [0, 1], over the pixels where ``mask [B, S, S]``:
    ``frames`` uint8 ``[B, 3, S, S]``, ``reconstructions`` in [0, 1] of the same shape."""
    squared = (frames.float() / 255.0 - reconstructions).pow(2).mean(dim=1)
    return squared[mask].mean().item()
