"""Agent57 (Badia et al., 2020b): NGU with separate extrinsic and intrinsic values and a bandit over the family.

Two recurrent Q-networks, q_e on the task's reward and q_i on NGU's intrinsic reward, each learnt by
transformed Retrace with policy j's discount gamma_j; policy j acts on h(h^-1(q_e) + beta_j h^-1(q_i)).
Each actor's sliding-window UCB bandit picks j at every episode start from the extrinsic returns the
family's members brought it lately, so the agent drifts to the exploitative members once the task pays.
Everything else is NGU's (``voidrl.algos.ngu``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voidrl.algos.ngu import NGU, NGUConfig
from voidrl.algos.ngu import PRESETS as NGU_PRESETS


@dataclass
class Agent57Config(NGUConfig):
    """NGU's settings with Agent57's two value networks and its meta-controller."""

    split_values: bool = True
    """Separate extrinsic and intrinsic Q networks, combined as q_e + beta_j q_i in raw value space."""
    meta_controller: str = "bandit"
    """bandit (a sliding-window UCB per environment picks j at each episode start) or fixed (NGU's)."""


PRESETS: dict[str, dict[str, dict[str, Any]]] = NGU_PRESETS


class Agent57(NGU):
    config_class = Agent57Config
    presets = PRESETS
