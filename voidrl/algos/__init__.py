"""Algorithms, one short file each, registered by name for the training loop and CLI: on-policy
(``OnPolicyAlgorithm``) and, beside them, learners that keep their own data (``ReplayLearner``).

Their configs and presets live in ``voidrl.configs``, which imports no torch; their registry ``ALGORITHMS`` lives in
``voidrl.registry``, beneath the configuration, and imports an algorithm's module on its first ``ALGORITHMS[name]``
(as ``from voidrl.algos import PPO`` does).
"""

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
from voidrl.registry import ALGORITHM_CLASSES, ALGORITHMS, lazy_attributes

CLASSES = {path.rpartition(":")[2]: path for path in (*ALGORITHM_CLASSES.values(), "voidrl.algos.algorithm:Algorithm",
                                                      "voidrl.algos.base:OnPolicyAlgorithm", "voidrl.algos.learner:ReplayLearner")}
"""The classes this package exports by name, imported on first use."""
__getattr__ = lazy_attributes(__name__, CLASSES)

__all__ = [
    "ALGORITHMS", "AlgorithmConfig", "A2CConfig", "A3CConfig", "Agent57Config", "NGUConfig", "NPGConfig", "PPGConfig", "PPOConfig",
    "R2D2Config", "REINFORCEConfig", "TRPOConfig", *CLASSES,
]
