"""Cheap health signals of a rollout."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def identical_action_fraction(actions: torch.Tensor) -> float:
    """Mean over steps of the share of environments taking that step's most common action.

    ``actions [T, N]`` discrete. 1/N-ish for a diverse policy, 1.0 when every environment acts
    alike: Müller's (2022) collapsed policy.
    """
    counts = F.one_hot(actions.long(), int(actions.max()) + 1).sum(1)
    return (counts.max(-1).values.float() / actions.shape[1]).mean().item()
