"""Agent57 (Badia et al., 2020b): NGU with separate extrinsic and intrinsic values and a bandit over the family.

Two recurrent Q-networks, q_e on the task's reward and q_i on NGU's intrinsic reward, each learnt by
transformed Retrace with policy j's discount gamma_j; policy j acts on h(h^-1(q_e) + beta_j h^-1(q_i)).
Each actor's sliding-window UCB bandit picks j at every episode start from the extrinsic returns the
family's members brought it lately, so the agent drifts to the exploitative members once the task pays.
Everything else is NGU's (``voidrl.algos.ngu``).
"""

from __future__ import annotations

from voidrl.algos.ngu import NGU
from voidrl.configs.agent57 import Agent57Config


class Agent57(NGU):
    config_class = Agent57Config
