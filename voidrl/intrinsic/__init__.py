"""Intrinsic-reward plug-ins, registered by name for the training loop, config and CLI; their configs live in
``voidrl.configs`` (apt.py, rnd.py), their registry ``REWARD_SOURCES`` in ``voidrl.registry``, which imports a
plug-in's module on its first ``REWARD_SOURCES[name]``."""

from voidrl.configs.apt import APTConfig
from voidrl.configs.rnd import RNDConfig
from voidrl.registry import REWARD_SOURCE_CLASSES, REWARD_SOURCES, lazy_attributes

CLASSES = {path.rpartition(":")[2]: path for path in (*REWARD_SOURCE_CLASSES.values(), "voidrl.intrinsic.base:RewardSource")}
"""The classes this package exports by name, imported on first use."""
__getattr__ = lazy_attributes(__name__, CLASSES)

__all__ = ["REWARD_SOURCES", "APTConfig", "RNDConfig", *CLASSES]
