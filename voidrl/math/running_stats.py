"""Running mean and variance merged batch by batch (Chan et al.'s parallel update)."""

from __future__ import annotations

import torch

from voidrl.collective import combine_moments


def standardize(x: torch.Tensor, mean: torch.Tensor, var: torch.Tensor, clip: float, epsilon: float) -> torch.Tensor:
    """``(x - mean) / sqrt(var + epsilon)`` clipped to [-clip, clip]: ``x [B, *shape]``, ``mean`` and ``var`` ``[*shape]``
    float64; computed in float64, returned as float32."""
    return ((x.to(torch.float64) - mean) / (var + epsilon).sqrt()).clamp(-clip, clip).to(torch.float32)


class RunningMeanStd:
    """Mean and variance of everything seen so far, per feature of ``shape``.

    Uses float64 so that long runs do not drift. ``update(x)`` takes ``[B, *shape]``. In a
    data-parallel run every process calls ``update`` at the same points and each batch is the union of
    all processes' batches, so the statistics stay equal on every rank.
    """

    def __init__(self, shape: tuple[int, ...] = ()):
        self.mean = torch.zeros(shape, dtype=torch.float64)
        self.var = torch.ones(shape, dtype=torch.float64)
        self.count = torch.zeros((), dtype=torch.float64)

    def update(self, x: torch.Tensor) -> None:
        x = x.detach().to(torch.float64).reshape(-1, *self.mean.shape).cpu()
        batch_count, batch_mean, batch_var = combine_moments(
            x.shape[0], x.mean(0) if x.shape[0] else torch.zeros(self.mean.shape, dtype=torch.float64),
            x.var(0, unbiased=False) if x.shape[0] else torch.zeros(self.mean.shape, dtype=torch.float64))
        if batch_count == 0:
            return
        total = self.count + batch_count
        delta = batch_mean - self.mean
        if self.count == 0:
            self.mean, self.var = batch_mean, batch_var
        else:
            m2 = self.var * self.count + batch_var * batch_count + delta.pow(2) * self.count * batch_count / total
            self.mean = self.mean + delta * batch_count / total
            self.var = m2 / total
        self.count = total

    @property
    def std(self) -> torch.Tensor:
        return self.var.sqrt()

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"mean": self.mean.clone(), "var": self.var.clone(), "count": self.count.clone()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.mean, self.var, self.count = (state[k].to(torch.float64).clone() for k in ("mean", "var", "count"))
