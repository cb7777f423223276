"""The one check of a training run before anything is built: ``TrainConfig.validate`` (what the options alone
tell), then what needs the layers above the configuration (the environment's suite and variant, the network's parts,
the video packages, a Ray actor's imports). The fit to the environment's spaces, the options that cannot act on the
run and the ``vision`` VAE file are told once the environment is built (``voidrl.training.loop.make_parts``), still
before the run directory is touched."""

from __future__ import annotations

import os
import shutil

from voidrl.config import TrainConfig
from voidrl.configs.env import EnvConfig
from voidrl.envs.suites import VARIANTS, Variant, check_env_packages, found_by_other_processes, suite_of
from voidrl.io.video import check_video_packages
from voidrl.nets.parts import validate_parts


def preflight(config: TrainConfig) -> None:
    """Raise a one-line ``ValueError`` naming the first option that cannot work, before the run directory is touched
    (a missing extra before the rest: the options may be right once it is installed)."""
    check_env_packages(config.run.env)
    config.validate()
    suite = suite_of(config.run.env)
    check_task_fit(config.env, config.run.env, suite)
    if config.run.eval_video:
        check_video_packages("eval_video", mp4=False)
    if config.run.actors and not found_by_other_processes(config.run.env):
        raise ValueError(f"env {config.run.env!r} needs actors 0: Ray actors make their environments in processes of "
                         "their own, which find one by importing its module; define the class or function in a module "
                         "(not in the script being run, not a lambda, local class or functools.partial), or register an id")
    if config.run.init_parts is not None:
        validate_parts(config.run.init_parts)
    if config.algo_config.compiles():
        check_cpp_compiler()


def check_cpp_compiler() -> None:
    """``compile`` builds its CPU kernels with the C++ compiler torch's inductor calls (``CXX``, else g++, or cl on
    Windows): refuse the option where that is not on the PATH, instead of failing at the first update."""
    compiler = os.environ.get("CXX", "cl" if os.name == "nt" else "g++")
    if shutil.which(compiler) is None:
        raise ValueError(f"compile needs a C++ compiler for torch.compile's kernels and {compiler!r} is not on the PATH: "
                         "install one (or name it in CXX), or leave compile out")


def check_task_fit(env: EnvConfig, env_id: str, suite: str) -> None:
    """The environment options fit task ``env_id`` of ``suite``: no action repeat on Atari, which repeats each action
    itself, and frames (``pixels``, ``vision``) rendered of a MuJoCo task's own state only."""
    if env.action_repeat > 1 and suite == "atari":
        raise ValueError(f"action_repeat must be 1 on Atari, which already repeats each action for 4 frames, got {env.action_repeat}")
    visual = env.pixels is not None or env.vision is not None
    if visual and suite != "mujoco":
        raise ValueError(f"pixels and vision render MuJoCo tasks; {env_id} is a {suite} task")
    if visual and VARIANTS.get(env_id, Variant(env_id)).observed is not None:
        raise ValueError(f"pixels and vision replace the state that {env_id} hides entries of; use its base task")
