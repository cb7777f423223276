"""The inverse-dynamics head that NGU's embedding and APT's latent are trained by."""

from __future__ import annotations

import torch
from torch import nn

from voidrl.nets.bodies import orthogonal_init


class InverseDynamicsHead(nn.Sequential):
    """Classifies the action a_t from the embeddings ``[B, D]`` of s_t and s_t+1 (NGU's embedding network, ICM's
    inverse model): fc ``2 D`` -> 128, ReLU, fc 128 -> ``num_actions`` logits ``[B, A]``. Trained by cross-entropy
    through the embeddings, it makes them keep what the agent's actions change and drop what they do not."""

    def __init__(self, embedding_size: int, num_actions: int):
        super().__init__(orthogonal_init(nn.Linear(2 * embedding_size, 128)), nn.ReLU(),
                         orthogonal_init(nn.Linear(128, num_actions), 0.01))

    def forward(self, before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
        return super().forward(torch.cat([before, after], dim=-1))
