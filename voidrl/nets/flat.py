"""One contiguous buffer behind many parameters, so optimiser steps are one kernel.

Small networks spend most of a gradient step in per-tensor overhead: an Adam step
and a gradient-norm clip touch every parameter tensor separately. Here each
parameter's data and gradient become views into two flat buffers; the optimiser
sees a single tensor, and clipping is one norm and one scale.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn


class FlatParameters:
    """Re-homes ``parameters`` (already on their final device) into one flat buffer.

    Backward accumulates into the views, so ``zero_grad`` must go through this
    object (an optimiser's ``zero_grad(set_to_none=True)`` would detach the views).
    Strides are kept, so channels-last convolution weights stay channels-last.
    """

    def __init__(self, parameters: Iterable[nn.Parameter]):
        params = list(parameters)
        if not params:
            raise ValueError("FlatParameters needs at least one parameter")
        total = sum(p.numel() for p in params)
        self.flat = nn.Parameter(torch.empty(total, dtype=params[0].dtype, device=params[0].device))
        self.flat.grad = torch.zeros_like(self.flat)
        offset = 0
        for param in params:
            data_view = self.flat.data.as_strided(param.shape, param.stride(), offset)
            data_view.copy_(param.data)
            param.data = data_view
            param.grad = self.flat.grad.as_strided(param.shape, param.stride(), offset)
            offset += param.numel()

    def zero_grad(self) -> None:
        self.flat.grad.zero_()

    def clip_grad_norm_(self, max_norm: float) -> torch.Tensor:
        """Scale all gradients so their global L2 norm is at most ``max_norm``; returns the norm before."""
        norm = self.flat.grad.norm()
        self.flat.grad.mul_(torch.clamp(max_norm / (norm + 1e-6), max=1.0))
        return norm
