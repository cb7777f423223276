"""Actor-critic assembly: a policy head and a value head on shared or separate bodies."""

from __future__ import annotations

import gymnasium as gym
import torch
from torch import nn

from voidrl.nets.bodies import make_body, orthogonal_init
from voidrl.nets.distributions import Categorical, DiagonalGaussian

POLICY_HEAD_GAIN = 0.01
"""The last policy layer starts 100x smaller than the body's (Andrychowicz et al. 2021)."""


class ActorCritic(nn.Module):
    """pi(a|s) and V(s) for one observation and action space.

    Discrete actions get a categorical head; Box actions a diagonal Gaussian with a
    state-independent log-std parameter. With ``shared=False`` the critic has its own
    body, so the value loss never reaches the policy's parameters.
    """

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        action_space: gym.Space,
        network: str = "auto",
        hidden_sizes: tuple[int, ...] = (64, 64),
        shared: bool = False,
        init_log_std: float = 0.0,
        critic_network: str | None = None,
        aux_value: bool = False,
    ):
        """``critic_network`` gives the separate critic another body (default: ``network``);
        ``aux_value`` adds PPG's auxiliary value head on the policy's features."""
        super().__init__()
        if shared and critic_network is not None:
            raise ValueError("critic_network needs separate actor and critic (shared=False)")
        self.shared = shared
        self.actor_body = make_body(network, obs_shape, hidden_sizes)
        self.critic_body = None if shared else make_body(critic_network or network, obs_shape, hidden_sizes)
        features = self.actor_body.out_features
        if isinstance(action_space, gym.spaces.Discrete):
            self.policy_head = orthogonal_init(nn.Linear(features, int(action_space.n)), POLICY_HEAD_GAIN)
            self.log_std = None
        elif isinstance(action_space, gym.spaces.Box) and len(action_space.shape) == 1:
            self.policy_head = orthogonal_init(nn.Linear(features, action_space.shape[0]), POLICY_HEAD_GAIN)
            self.log_std = nn.Parameter(torch.full((action_space.shape[0],), float(init_log_std)))
        else:
            raise ValueError(f"unsupported action space {action_space}")
        critic_features = features if self.critic_body is None else self.critic_body.out_features
        self.value_head = orthogonal_init(nn.Linear(critic_features, 1), 1.0)
        self.aux_value_head = orthogonal_init(nn.Linear(features, 1), POLICY_HEAD_GAIN) if aux_value else None

    def _distribution(self, features: torch.Tensor) -> Categorical | DiagonalGaussian:
        out = self.policy_head(features)
        return Categorical(out) if self.log_std is None else DiagonalGaussian(out, self.log_std)

    def forward(self, obs: torch.Tensor) -> tuple[Categorical | DiagonalGaussian, torch.Tensor]:
        """``obs [B, *obs_shape]`` -> (action distribution over B, values ``[B]``)."""
        actor_features = self.actor_body(obs)
        critic_features = actor_features if self.critic_body is None else self.critic_body(obs)
        return self._distribution(actor_features), self.value_head(critic_features).squeeze(-1)

    def distribution(self, obs: torch.Tensor) -> Categorical | DiagonalGaussian:
        return self._distribution(self.actor_body(obs))

    def policy_and_aux_value(self, obs: torch.Tensor) -> tuple[Categorical | DiagonalGaussian, torch.Tensor]:
        """PPG: the action distribution and the auxiliary value ``[B]`` from the policy's own features."""
        if self.aux_value_head is None:
            raise RuntimeError("this network has no auxiliary value head (aux_value=False)")
        features = self.actor_body(obs)
        return self._distribution(features), self.aux_value_head(features).squeeze(-1)

    def actor_parameters(self) -> list[nn.Parameter]:
        """Parameters of the policy network (body, heads, log-std); disjoint from ``critic_parameters`` when separate."""
        critic = {id(p) for p in self.critic_parameters()}
        return [p for p in self.parameters() if id(p) not in critic]

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        body = self.actor_body if self.critic_body is None else self.critic_body
        return self.value_head(body(obs)).squeeze(-1)

    def critic_parameters(self) -> list[nn.Parameter]:
        """Parameters only the critic uses (empty body part when shared)."""
        params = list(self.value_head.parameters())
        if self.critic_body is not None:
            params += list(self.critic_body.parameters())
        return params

    @torch.no_grad()
    def act(self, obs: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
        """Actions ``[B]`` or ``[B, A]`` for a batch of observations."""
        dist = self.distribution(obs)
        return dist.mode() if deterministic else dist.sample()
