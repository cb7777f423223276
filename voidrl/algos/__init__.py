"""Algorithms, one short file each, registered by name for the training loop and CLI: on-policy
(``OnPolicyAlgorithm``) and, beside them, learners that keep their own data (``ReplayLearner``).

Their configs and presets live in ``voidrl.configs``, which imports no torch; an algorithm's module is imported
on its first ``ALGORITHMS[name]`` (or ``from voidrl.algos import PPO``).
"""

from voidrl.configs import ALGORITHM_CLASSES, CONFIGS
from voidrl.configs.a2c import A2CConfig
from voidrl.configs.a3c import A3CConfig
from voidrl.configs.agent57 import Agent57Config
from voidrl.configs.base import AlgorithmConfig
from voidrl.configs.ngu import NGUConfig
from voidrl.configs.npg import NPGConfig
from voidrl.configs.ppg import PPGConfig
from voidrl.configs.ppo import PPOConfig
from voidrl.configs.r2d2 import R2D2Config
from voidrl.configs.reinforce import REINFORCEConfig
from voidrl.configs.trpo import TRPOConfig
from voidrl.registry import Registry, lazy_attributes

ALGORITHMS = Registry(ALGORITHM_CLASSES, CONFIGS)
"""Algorithm name -> class (an ``Algorithm``); ``ALGORITHMS.config_class(name)`` without importing it."""

CLASSES = {path.rpartition(":")[2]: path for path in (*ALGORITHM_CLASSES.values(), "voidrl.algos.algorithm:Algorithm",
                                                      "voidrl.algos.base:OnPolicyAlgorithm", "voidrl.algos.learner:ReplayLearner")}
"""The classes this package exports by name, imported on first use."""
__getattr__ = lazy_attributes(__name__, CLASSES)

__all__ = [
    "ALGORITHMS", "AlgorithmConfig", "A2CConfig", "A3CConfig", "Agent57Config", "NGUConfig", "NPGConfig", "PPGConfig", "PPOConfig",
    "R2D2Config", "REINFORCEConfig", "TRPOConfig", *CLASSES,
]
