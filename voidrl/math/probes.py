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
    residual = test_targets.double() - design(test_inputs) @ weights
    total = test_targets.double() - test_targets.double().mean(0)
    return 1.0 - residual.pow(2).sum(0) / total.pow(2).sum(0).clamp_min(1e-12)


def masked_mean_squared_error(frames: torch.Tensor, reconstructions: torch.Tensor, mask: torch.Tensor) -> float:
    """Mean squared error per channel value, intensities in [0, 1], over the pixels where ``mask [B, S, S]``:
    ``frames`` uint8 ``[B, 3, S, S]``, ``reconstructions`` in [0, 1] of the same shape."""
    squared = (frames.float() / 255.0 - reconstructions).pow(2).mean(dim=1)
    return squared[mask].mean().item()
