"""Natural-gradient and trust-region steps on flat parameter vectors.

Natural Policy Gradient (Kakade 2001) and TRPO (Schulman et al. 2015) share the
Fisher information matrix F, the Hessian of the mean KL(pi_old || pi_theta) at
theta_old, used only through products F v (double backprop), and the natural
direction d ~= F^-1 g from conjugate gradient. They differ in how a step along d
is taken: NPG scales it to a fixed length in the Fisher metric, TRPO to the KL
limit of the quadratic model, then backtracks until the true KL and the
surrogate are acceptable.

Every vector is a flat ``[P]`` tensor over all the policy's parameters, in the
order of the ``parameters`` sequence, each parameter flattened row-major.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch


def conjugate_gradient(
    matrix_vector_product: Callable[[torch.Tensor], torch.Tensor],
    b: torch.Tensor,
    iterations: int = 10,
    residual_tolerance: float = 1e-10,
) -> torch.Tensor:
    """Approximate solution ``[P]`` of A x = b for symmetric positive-definite A, starting at x = 0.

    Only products A v (``[P] -> [P]``) are needed. Runs at most ``iterations`` steps,
    stopping once |b - A x|^2 < ``residual_tolerance``; in exact arithmetic P steps suffice.
    """
    solution = torch.zeros_like(b)
    residual = b.clone()
    direction = b.clone()
    residual_norm_sq = residual @ residual
    for _ in range(iterations):
        if residual_norm_sq < residual_tolerance:
            break
        product = matrix_vector_product(direction)
        step_length = residual_norm_sq / (direction @ product)
        solution = solution + step_length * direction
        residual = residual - step_length * product
        new_residual_norm_sq = residual @ residual
        direction = residual + (new_residual_norm_sq / residual_norm_sq) * direction
        residual_norm_sq = new_residual_norm_sq
    return solution


def flat_gradient(
    output: torch.Tensor,
    parameters: Sequence[torch.Tensor],
    create_graph: bool = False,
    retain_graph: bool | None = None,
) -> torch.Tensor:
    """Gradient ``[P]`` of the scalar ``output`` w.r.t. ``parameters``, concatenated flat.

    Parameters that ``output`` does not depend on contribute zeros.
    """
    gradients = torch.autograd.grad(
        output, parameters, create_graph=create_graph, retain_graph=retain_graph, allow_unused=True
    )
    return torch.cat([
        (torch.zeros_like(parameter) if gradient is None else gradient).reshape(-1)
        for gradient, parameter in zip(gradients, parameters)
    ])


def fisher_vector_product(
    mean_kl: torch.Tensor, parameters: Sequence[torch.Tensor], damping: float
) -> Callable[[torch.Tensor], torch.Tensor]:
    """Return v ``[P]`` -> (F + damping I) v ``[P]``, with F the Hessian of ``mean_kl``.

    ``mean_kl`` is the scalar mean KL(pi_old || pi_theta), pi_old detached, still on
    the graph and evaluated at theta = theta_old, where its Hessian is the Fisher
    matrix. Its gradient is built once with ``create_graph=True``; each call
    differentiates (gradient . v) keeping the graph, so it may be called many times.
    """
    kl_gradient = flat_gradient(mean_kl, parameters, create_graph=True)

    def product(vector: torch.Tensor) -> torch.Tensor:
        curvature = flat_gradient(kl_gradient @ vector, parameters, retain_graph=True)
        return curvature + damping * vector

    return product


def natural_gradient_step(gradient: torch.Tensor, direction: torch.Tensor, step_size: float) -> torch.Tensor:
    """Truncated NPG step ``[P]``: (step_size / sqrt(g . d)) d for g ``[P]`` and d ~= F^-1 g ``[P]``.

    With d = F^-1 g exactly, the quadratic KL model 0.5 s^T F s of the step is step_size^2 / 2.
    """
    gradient_dot_direction = gradient @ direction
    if gradient_dot_direction <= 0:
        raise ValueError(
            f"natural_gradient_step: g . d = {gradient_dot_direction.item():.3g} must be positive; "
            "d is not F^-1 g for a positive-definite F (raise the damping or the CG iterations)"
        )
    return (step_size / gradient_dot_direction.sqrt()) * direction


def max_kl_step(direction: torch.Tensor, fisher_direction: torch.Tensor, max_kl: float) -> torch.Tensor:
    """TRPO's full step ``[P]``: sqrt(2 max_kl / (d^T F d)) d, for d ``[P]`` and F d ``[P]``.

    It is the longest step along d whose quadratic KL model 0.5 s^T F s equals ``max_kl``.
    """
    curvature = direction @ fisher_direction
    if curvature <= 0:
        raise ValueError(f"max_kl_step: d^T F d = {curvature.item():.3g} must be positive")
    return (2.0 * max_kl / curvature).sqrt() * direction


def backtracking_line_search(
    evaluate: Callable[[torch.Tensor], tuple[float, float]],
    full_step: torch.Tensor,
    max_kl: float,
    backtrack_ratio: float = 0.5,
    max_backtracks: int = 10,
) -> tuple[torch.Tensor | None, int]:
    """TRPO's line search along ``full_step`` ``[P]``.

    ``evaluate(step)`` must set the parameters to theta_old + step and return
    ``(surrogate improvement over theta_old, mean KL(pi_old || pi_new))``. The
    candidates full_step * backtrack_ratio**i are evaluated for i = 0, 1, ...,
    max_backtracks - 1 in turn; the first with KL <= max_kl and improvement > 0
    is returned with its i, the number of backtracks (a NaN KL or improvement is
    rejected); the parameters are then already at theta_old + step. If none is
    accepted the result is ``(None, max_backtracks)`` and the parameters are left
    at the last candidate: the caller must restore theta_old.
    """
    for backtracks in range(max_backtracks):
        step = full_step * backtrack_ratio**backtracks
        improvement, kl = evaluate(step)
        if kl <= max_kl and improvement > 0:
            return step, backtracks
    return None, max_backtracks
