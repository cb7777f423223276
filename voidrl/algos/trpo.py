"""Trust Region Policy Optimization (Schulman et al. 2015).

NPG's update (``voidrl.algos.npg``) with another way to accept a step: the longest step along
d ~= F^-1 g whose quadratic KL model reaches ``max_kl``, shrunk geometrically until the true
mean KL(pi_old || pi) <= max_kl and the surrogate improves; if no candidate passes, no step.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from voidrl.algos.npg import NPG, Evaluate
from voidrl.configs.trpo import TRPOConfig
from voidrl.math import backtracking_line_search, max_kl_step


class TRPO(NPG):
    config_class = TRPOConfig

    def accept_step(
        self, gradient: torch.Tensor, direction: torch.Tensor, fisher_product: Callable[[torch.Tensor], torch.Tensor], evaluate: Evaluate
    ) -> tuple[torch.Tensor | None, dict[str, float]]:
        """Full step sqrt(2 delta / d^T F d) d ``[P]``, then the backtracking line search on the true KL and surrogate.

        ``train/backtracks`` counts the shrinkings before the accepted step (``max_backtracks`` when none was).
        """
        cfg = self.config
        full_step = max_kl_step(direction, fisher_product(direction), cfg.max_kl)
        step, backtracks = backtracking_line_search(evaluate, full_step, cfg.max_kl, cfg.backtrack_ratio, cfg.max_backtracks)
        return step, {"train/backtracks": float(backtracks)}
