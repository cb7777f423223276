"""Agent57's options (the algorithm: ``voidrl.algos.agent57``); its presets are NGU's."""

from __future__ import annotations

from dataclasses import dataclass

from voidrl.configs.ngu import NGUConfig


@dataclass
class Agent57Config(NGUConfig):
    """NGU's settings with Agent57's two value networks and its meta-controller."""

    split_values: bool = True
    """Separate extrinsic and intrinsic Q networks, combined as q_e + beta_j q_i in raw value space."""
    meta_controller: str = "bandit"
    """bandit (a sliding-window UCB per environment picks j at each episode start) or fixed (NGU's)."""
