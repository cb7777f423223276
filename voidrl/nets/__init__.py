"""Networks: bodies, action distributions and the actor-critic assembly."""

from voidrl.nets.actor_critic import ActorCritic
from voidrl.nets.bodies import NETWORKS, make_body
from voidrl.nets.distributions import Categorical, DiagonalGaussian

__all__ = ["NETWORKS", "ActorCritic", "Categorical", "DiagonalGaussian", "make_body"]
