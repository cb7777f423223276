"""Intrinsic-reward plug-ins, registered by name for the training loop, config and CLI."""

from voidrl.intrinsic.apt import APTConfig, APTReward
from voidrl.intrinsic.base import RewardSource
from voidrl.intrinsic.rnd import RNDConfig, RNDReward

REWARD_SOURCES: dict[str, type[RewardSource]] = {"apt": APTReward, "rnd": RNDReward}
"""``--intrinsic NAME`` -> plug-in class; each has a ``config_class`` whose fields are its options."""

__all__ = ["REWARD_SOURCES", "APTConfig", "APTReward", "RNDConfig", "RNDReward", "RewardSource"]
