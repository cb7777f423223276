"""Environments: one factory, per-suite backends, torch-side wrappers (imported on first use: ``voidrl.envs.variants``
needs no torch)."""

from voidrl.registry import lazy_attributes

EXPORTS = {"EnvConfig": "voidrl.configs.env:EnvConfig", "Step": "voidrl.envs.base:Step", "VecEnv": "voidrl.envs.base:VecEnv",
           "make_env": "voidrl.envs.factory:make_env", "UnknownEnvironment": "voidrl.envs.suites:UnknownEnvironment",
           "list_env_ids": "voidrl.envs.suites:list_env_ids", "suite_of": "voidrl.envs.suites:suite_of",
           "observation_normalizer": "voidrl.envs.wrappers:observation_normalizer", "set_training": "voidrl.envs.wrappers:set_training"}
"""The names this package exports, imported on first use."""
__getattr__ = lazy_attributes(__name__, EXPORTS)

__all__ = [*EXPORTS]
