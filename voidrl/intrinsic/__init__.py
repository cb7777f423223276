"""Intrinsic-reward plug-ins, registered by name for the training loop, config and CLI; their configs live in
``voidrl.configs`` (apt.py, rnd.py), and a plug-in's module is imported on its first ``REWARD_SOURCES[name]``."""

from voidrl.configs import REWARD_CONFIGS, REWARD_SOURCE_CLASSES
from voidrl.configs.apt import APTConfig
from voidrl.configs.rnd import RNDConfig
from voidrl.registry import Registry, lazy_attributes

REWARD_SOURCES = Registry(REWARD_SOURCE_CLASSES, REWARD_CONFIGS)
"""``--intrinsic NAME`` -> plug-in class; each has a ``config_class`` whose fields are its options
(``REWARD_SOURCES.config_class(name)`` without importing the plug-in)."""

CLASSES = {path.rpartition(":")[2]: path for path in (*REWARD_SOURCE_CLASSES.values(), "voidrl.intrinsic.base:RewardSource")}
"""The classes this package exports by name, imported on first use."""
__getattr__ = lazy_attributes(__name__, CLASSES)

__all__ = ["REWARD_SOURCES", "APTConfig", "RNDConfig", *CLASSES]
