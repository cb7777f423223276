"""Networks: bodies, action distributions and the actor-critic assembly."""

from voidrl.configs.choices import NETWORKS
from voidrl.nets.actor_critic import ActorCritic
from voidrl.nets.bodies import make_body
from voidrl.nets.distributions import Categorical, DiagonalGaussian

__all__ = ["NETWORKS", "ActorCritic", "Categorical", "DiagonalGaussian", "make_body"]
