"""Agents built without training, for tests of how they act."""

import dataclasses

import numpy as np
import torch

from voidrl.envs import make_env
from voidrl.training.agent import Agent, build_policy_for
from voidrl.training.presets import make_config


def untrained_agent(algo: str, env: str, **options) -> Agent:
    """``algo``'s freshly initialised policy on ``env``; where the config normalises observations, the normaliser's
    statistics are those of 20 random steps of 2 environments."""
    config = make_config(algo, env=env, **options)
    vec_env = make_env(config.run.env, dataclasses.replace(config.env, num_envs=2))
    try:
        vec_env.reset(0)
        space = vec_env.single_action_space
        space.seed(0)
        for _ in range(20):
            vec_env.step(torch.as_tensor(np.stack([space.sample() for _ in range(2)])))
        env_state = vec_env.state_dict()
    finally:
        vec_env.close()
    torch.manual_seed(0)  # the same weights whichever tests ran before in this process
    return Agent(config, build_policy_for(config, torch.device("cpu")), env_state)
