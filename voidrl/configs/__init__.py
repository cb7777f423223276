"""The options of every algorithm and reward plug-in, of the environments and of ``voidrl vae train``, one dataclass
each, documented field by field, with each algorithm's presets; and the registry of their names (the run's own
options and ``TrainConfig``, which gathers them all, are ``voidrl.config``'s). Nothing here imports torch or
gymnasium, so the command line lists and documents every option without them (``voidrl train r2d2 --help``).

An algorithm's config class also says what the command line and ``TrainConfig`` must know of its algorithm
(``base.AlgorithmConfig``: presets, Ray actors, its own novelty reward); the algorithm is imported from
``ALGORITHM_CLASSES`` only when a run needs it (``voidrl.algos.ALGORITHMS``), as a plug-in is from
``REWARD_SOURCE_CLASSES`` (``voidrl.intrinsic.REWARD_SOURCES``).
"""

from voidrl.configs.a2c import A2CConfig
from voidrl.configs.a3c import A3CConfig
from voidrl.configs.agent57 import Agent57Config
from voidrl.configs.apt import APTConfig
from voidrl.configs.base import AlgorithmConfig
from voidrl.configs.ngu import NGUConfig
from voidrl.configs.npg import NPGConfig
from voidrl.configs.ppg import PPGConfig
from voidrl.configs.ppo import PPOConfig
from voidrl.configs.r2d2 import R2D2Config
from voidrl.configs.reinforce import REINFORCEConfig
from voidrl.configs.rnd import RNDConfig
from voidrl.configs.trpo import TRPOConfig

CONFIGS: dict[str, type[AlgorithmConfig]] = {
    "ppo": PPOConfig, "ppg": PPGConfig, "reinforce": REINFORCEConfig, "a2c": A2CConfig, "a3c": A3CConfig, "npg": NPGConfig,
    "trpo": TRPOConfig, "r2d2": R2D2Config, "ngu": NGUConfig, "agent57": Agent57Config,
}
"""Algorithm name -> its config class."""
ALGORITHM_CLASSES: dict[str, str] = {
    "ppo": "voidrl.algos.ppo:PPO", "ppg": "voidrl.algos.ppg:PPG", "reinforce": "voidrl.algos.reinforce:REINFORCE",
    "a2c": "voidrl.algos.a2c:A2C", "a3c": "voidrl.algos.a3c:A3C", "npg": "voidrl.algos.npg:NPG", "trpo": "voidrl.algos.trpo:TRPO",
    "r2d2": "voidrl.algos.r2d2:R2D2", "ngu": "voidrl.algos.ngu:NGU", "agent57": "voidrl.algos.agent57:Agent57",
}
"""Algorithm name -> where its class is (``module:Class``), for ``voidrl.algos.ALGORITHMS``."""

REWARD_CONFIGS: dict[str, type] = {"apt": APTConfig, "rnd": RNDConfig}
"""``--intrinsic NAME`` -> the reward plug-in's config class."""
REWARD_SOURCE_CLASSES: dict[str, str] = {"apt": "voidrl.intrinsic.apt:APTReward", "rnd": "voidrl.intrinsic.rnd:RNDReward"}
"""``--intrinsic NAME`` -> where the plug-in's class is, for ``voidrl.intrinsic.REWARD_SOURCES``."""

__all__ = ["ALGORITHM_CLASSES", "CONFIGS", "REWARD_CONFIGS", "REWARD_SOURCE_CLASSES"]
