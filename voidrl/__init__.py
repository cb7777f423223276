"""voidrl: policy-optimisation reinforcement learning with reward-free pre-training.

Two lines to train::

    import voidrl
    agent = voidrl.train("ppo", env="CartPole-v1", steps=100_000)

``import voidrl`` imports no torch: the names below are imported on first use. It registers voidrl's task variants with
gymnasium (``gym.make("voidrl/CartPoleNoVelocity-v1")``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from voidrl.envs.variants import register_variants
from voidrl.process import configure_process
from voidrl.registry import lazy_attributes
from voidrl.renamed import keep_old_import_paths

if TYPE_CHECKING:
    from collections.abc import Sequence

    from voidrl.callbacks import Callback
    from voidrl.training.agent import Agent

__version__ = "0.1.0"

EXPORTS = {"Agent": "voidrl.training.agent:Agent", "TrainConfig": "voidrl.config:TrainConfig", "make_config": "voidrl.training.presets:make_config",
           "train_from_config": "voidrl.training.runs:train_from_config", "evaluate_policy": "voidrl.training.agent:evaluate_policy"}
"""The names this package exports beside ``train`` and ``load``, imported on first use."""
__getattr__ = lazy_attributes(__name__, EXPORTS)

configure_process()  # before anything imports torch
register_variants()
keep_old_import_paths()
importlib.import_module("voidrl.callbacks")  # voidrl.callbacks.StopOnReturn and the others after `import voidrl`


def train(algo: str, env: Any = None, steps: int | None = None, preset: str | None = None, resume: bool = False,
          callbacks: Sequence[Callback] = (), **options: Any) -> Agent:
    """Train ``algo`` on ``env`` (default CartPole-v1) for ``steps`` environment steps (default 100,000); ``options``
    name any config field (``seed=1``, ``learning_rate=1e-3``, ``run_dir="runs/x"``...).

    ``env``: a Gymnasium id (``"CartPole-v1"``, ``"mypkg.envs:Corridor-v0"``), a ``gymnasium.Env`` class or a function
    returning one (one instance per parallel environment, each seeded by voidrl), an instance made by ``gymnasium.make``
    from a registered id with its own arguments (copied by that id), or a ready vector env made by
    ``gymnasium.make_vec`` (its id and size are used: ``voidrl.envs.suites.env_id_of``).

    ``resume=True`` continues the run in ``run_dir`` from its checkpoint with the settings stored there (a directory
    without a run starts it): options given again must equal them, and only ``steps`` and how the run is executed
    (``voidrl.config.RESUME_CHANGEABLE``: ``device``, ``progress``...) may change. ``callbacks``: ``voidrl.callbacks``
    objects, called after each update and evaluation with the step and the metrics; one can stop the run (with a
    checkpoint). They are not saved with the run.

    Returns an ``Agent`` that can ``predict`` (raw observations, one or a batch), ``act``, ``evaluate`` and ``save``.
    """
    from voidrl.envs.suites import env_id_of
    from voidrl.training.presets import make_config
    from voidrl.training.runs import resume_config, train_from_config

    if isinstance(env, gym.vector.VectorEnv):
        options.setdefault("num_envs", env.num_envs)
        if isinstance(env, gym.vector.AsyncVectorEnv):  # sync is the default, which an Atari run must keep
            options.setdefault("vector", "async")
    given = ({} if env is None else {"env": env_id_of(env)}) | ({} if steps is None else {"steps": steps}) | options
    config = resume_config(algo, {"preset": preset, **given}) if resume else None
    if config is None:
        config = make_config(algo, preset, **given)
    return train_from_config(config, resume, callbacks)


def _options_text() -> str:
    """The options ``train`` takes, by section, for its docstring (``help(voidrl.train)``)."""
    import dataclasses
    import textwrap

    from voidrl.configs.env import EnvConfig
    from voidrl.configs.run import RunConfig
    from voidrl.registry import ALGORITHMS

    def names(cls: type) -> str:
        return ", ".join(field.name for field in dataclasses.fields(cls))

    text = (f"Options, by name. The run's: {names(RunConfig)}. The environment's: {names(EnvConfig)}. The algorithm's: "
            f"the fields of its config (``voidrl.make_config(ALGO).algo_config``; ``voidrl train ALGO --help`` explains each), "
            f"for {', '.join(ALGORITHMS)}. A reward plug-in's (with ``intrinsic``): its config's fields.")
    return textwrap.fill(text.strip(), 116, initial_indent="    ", subsequent_indent="    ")


train.__doc__ = (train.__doc__ or "").rstrip() + "\n\n" + _options_text() + "\n"


def load(path: str, device: str = "cpu", env: Any = None) -> Agent:
    """An ``Agent`` from a checkpoint file; ``env``: the class or function of a run trained on one given from Python
    that this process cannot import by its name (a lambda, a class defined inside a function)."""
    from voidrl.training.agent import Agent

    return Agent.load(path, device, env)


__all__ = ["load", "train", *EXPORTS]
