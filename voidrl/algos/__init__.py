"""Algorithms, one short file each, registered by name for the training loop and CLI: on-policy
(``OnPolicyAlgorithm``) and, beside them, learners that keep their own data (``ReplayLearner``)."""

from voidrl.algos.a2c import A2C, A2CConfig
from voidrl.algos.a3c import A3C, A3CConfig
from voidrl.algos.agent57 import Agent57, Agent57Config
from voidrl.algos.algorithm import Algorithm, AlgorithmConfig
from voidrl.algos.base import OnPolicyAlgorithm
from voidrl.algos.learner import ReplayLearner
from voidrl.algos.ngu import NGU, NGUConfig
from voidrl.algos.npg import NPG, NPGConfig
from voidrl.algos.ppg import PPG, PPGConfig
from voidrl.algos.ppo import PPO, PPOConfig
from voidrl.algos.r2d2 import R2D2, R2D2Config
from voidrl.algos.reinforce import REINFORCE, REINFORCEConfig
from voidrl.algos.trpo import TRPO, TRPOConfig

ALGORITHMS: dict[str, type[Algorithm]] = {"ppo": PPO, "ppg": PPG, "reinforce": REINFORCE, "a2c": A2C, "a3c": A3C, "npg": NPG, "trpo": TRPO, "r2d2": R2D2,
                                                                              "ngu": NGU, "agent57": Agent57}

__all__ = [
    "A2C", "A3C", "Algorithm", "AlgorithmConfig", "A3CConfig", "ALGORITHMS", "Agent57", "Agent57Config", "NGU", "NGUConfig", "PPG", "PPO", "REINFORCE", "A2CConfig", "OnPolicyAlgorithm", "ReplayLearner", "PPGConfig", "PPOConfig", "REINFORCEConfig",
    "NPG", "NPGConfig", "R2D2", "R2D2Config", "TRPO", "TRPOConfig",
]
