"""One contiguous buffer behind many parameters, so optimiser steps are one kernel.

Small networks spend most of a gradient step in per-tensor overhead: an Adam step
and a gradient-norm clip touch every parameter tensor separately. Here each
parameter's data and gradient become views into two flat buffers; the optimiser
sees a single tensor, and clipping is one norm and one scale.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn

from voidrl.collective import all_reduce_mean_


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


class TrainedParameters(FlatParameters):
    """Flat parameters with their optimiser: the one gradient step every learner takes.

    ``make_optimizer`` builds the optimiser over the single flat parameter. ``step`` is where a
    data-parallel run (``torchrun``) averages the gradient across processes: one all-reduce of
    the flat buffer, before clipping, so every process takes the same step.
    """

    def __init__(self, parameters: Iterable[nn.Parameter], make_optimizer: Callable[[nn.Parameter], torch.optim.Optimizer]):
        super().__init__(parameters)
        self.optimizer = make_optimizer(self.flat)

    def step(self, max_grad_norm: float | None = None) -> torch.Tensor:
        """Apply the accumulated gradient: average it across processes, clip it to ``max_grad_norm``
        (None: no clipping), take the optimiser step. Returns the global gradient norm before clipping."""
        all_reduce_mean_(self.flat.grad)
        norm = self.flat.grad.norm() if max_grad_norm is None else self.clip_grad_norm_(max_grad_norm)
        self.optimizer.step()
        return norm

    def gradient_of(self, loss: torch.Tensor) -> torch.Tensor:
        """``loss``'s gradient ``[P]`` with respect to ``flat`` by autograd: zero, backward; ``flat.grad`` itself."""
        self.zero_grad()
        loss.backward()
        return self.flat.grad

    def minimize(self, loss: torch.Tensor, max_grad_norm: float | None = None) -> torch.Tensor:
        """One gradient step on ``loss``: ``gradient_of``, ``step``. Returns the norm before clipping."""
        return self.descend(self.gradient_of(loss), max_grad_norm)

    def descend(self, gradient: torch.Tensor, max_grad_norm: float | None = None) -> torch.Tensor:
        """``step`` along ``gradient [P]``, the loss's gradient with respect to ``flat`` (``flat.grad`` itself, or one
        computed apart from autograd: ``compiled_gradient``). Returns the norm before clipping."""
        if gradient is not self.flat.grad:
            self.flat.grad.copy_(gradient)
        return self.step(max_grad_norm)

    def set_learning_rate(self, learning_rate: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate

    def state_dict(self) -> dict[str, Any]:
        """The optimiser's state (the parameters themselves are saved with their modules)."""
        return self.optimizer.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state)


class _Loss(nn.Module):
    """``loss`` as the forward of a module holding ``network``, so ``torch.func.functional_call`` can swap the
    network's parameters for views of another tensor while ``loss`` runs."""

    def __init__(self, network: nn.Module, loss: Callable[..., Any]):
        super().__init__()
        self.network = network
        self.loss = loss

    def forward(self, *args: Any) -> Any:
        return self.loss(*args)


def compiled_gradient(network: nn.Module, parameters: FlatParameters,
                      loss: Callable[..., tuple[torch.Tensor, dict[str, torch.Tensor]]]) -> Callable[..., tuple[torch.Tensor, dict[str, torch.Tensor]]]:
    """``loss(*args) -> (scalar, metrics)``, a function that runs ``network``, as ``gradient(*args) -> (dloss/dflat [P],
    metrics)``: the forward pass, the loss and its gradient with respect to ``parameters.flat`` traced by ``torch.func.grad``
    and compiled by ``torch.compile`` into one graph. Autograd's engine and the per-operator dispatch of a small
    network's step are gone; what is left is the kernels. Every parameter of ``network`` must live in ``parameters``
    (``FlatParameters``' views); ``parameters`` is not changed (``TrainedParameters.descend`` takes the step)."""
    flat = parameters.flat.data
    wrapped = _Loss(network, loss)
    layout = []
    for name, param in wrapped.named_parameters():
        offset = (param.data_ptr() - flat.data_ptr()) // flat.element_size()
        if param.untyped_storage().data_ptr() != flat.untyped_storage().data_ptr() or not 0 <= offset < flat.numel():
            raise ValueError(f"compiled_gradient: parameter {name} is not a view of the flat parameters")
        layout.append((name, param.shape, param.stride(), offset))

    def loss_of(weights: torch.Tensor, *args: Any) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        views = {name: weights.as_strided(shape, stride, offset) for name, shape, stride, offset in layout}
        return torch.func.functional_call(wrapped, views, args)

    gradient = torch.compile(torch.func.grad(loss_of, has_aux=True), dynamic=False, fullgraph=True,
                             options={"cpp_wrapper": flat.device.type == "cpu"})
    return lambda *args: gradient(flat, *args)


def adam(learning_rate: float, eps: float) -> Callable[[nn.Parameter], torch.optim.Adam]:
    """``make_optimizer`` for ``TrainedParameters``: Adam over the flat parameter, fused into one kernel
    where torch can."""
    return lambda flat: torch.optim.Adam([flat], lr=learning_rate, eps=eps, fused=flat.device.type in ("cpu", "cuda"))
