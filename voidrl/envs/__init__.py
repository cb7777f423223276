"""Environments: one factory, per-suite backends, torch-side wrappers."""

from voidrl.envs.base import Step, VecEnv
from voidrl.envs.factory import EnvConfig, make_env
from voidrl.envs.suites import UnknownEnvironment, list_env_ids, suite_of
from voidrl.envs.wrappers import observation_normalizer, set_training

__all__ = ["EnvConfig", "Step", "UnknownEnvironment", "VecEnv", "list_env_ids", "make_env", "observation_normalizer", "set_training", "suite_of"]
