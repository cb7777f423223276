"""The one entry point that turns an environment id into a ``VecEnv``."""

from __future__ import annotations

import warnings
from dataclasses import replace

import torch

from voidrl.configs.env import EnvConfig, parse_vision
from voidrl.envs.atari import AtariVecEnv
from voidrl.envs.roms import rom_name
from voidrl.envs.base import VecEnv
from voidrl.envs.gym_backend import make_gym_vec_env
from voidrl.envs.suites import VARIANTS, Variant, suite_of
from voidrl.envs.vision import VAEVision
from voidrl.nets.vae import load_vae
from voidrl.envs.wrappers import (FallPenalty, FrameStack, KeepObservationEntries, NormalizeObservation, NormalizeReward, PreviousActionReward,
                                  TransformReward)
from voidrl.extras import require


def route_mujoco_warnings(env_id: str) -> None:
    """MuJoCo prints each model-compiler warning on stderr once per environment built; the one seen with
    gymnasium 1.4's models is a deprecated XML attribute, which the user cannot act on. As a Python
    DeprecationWarning it is hidden by default and shown once with ``python -W default``. A MuJoCo that cannot
    start (a MUJOCO_GL it does not know) is a one-line ValueError; without MuJoCo, a ``MissingExtra`` naming
    ``env_id`` and the extra."""
    try:
        mujoco = require("mujoco", "mujoco", env_id)
    except RuntimeError as error:
        raise ValueError(f"MuJoCo cannot start: {error} (egl, osmesa or glfw, or leave MUJOCO_GL unset)") from None

    mujoco.set_mju_user_warning(lambda message: warnings.warn(f"mujoco: {message}", DeprecationWarning, stacklevel=1))


def make_env(env_id: str, config: EnvConfig | None = None, gamma: float = 0.99, seed: int = 0,
             device: torch.device | str = "cpu", screens: bool = False, ram: bool = False) -> VecEnv:
    """Build ``config.num_envs`` copies of ``env_id`` as one torch ``VecEnv``.

    ``gamma`` is the discount used by reward normalisation; ``seed`` seeds the vision module's own noise;
    ``device`` is where the vision module's VAE runs (observations stay on the CPU); with ``screens`` each
    step also returns what every environment's own renderer shows (``Step.screens``); with ``ram`` (Atari only)
    each game's RAM (``Step.ram``).
    """
    config = config or EnvConfig()
    variant = VARIANTS.get(env_id, Variant(env_id))
    env_id = variant.base
    if variant.max_episode_steps is not None and config.max_episode_steps is None:
        config = replace(config, max_episode_steps=variant.max_episode_steps)
    suite = suite_of(env_id)
    if ram and suite != "atari":
        raise ValueError(f"{env_id}: only Atari games show their RAM; this is a {suite} environment")
    vision = None
    if config.vision is not None:  # (vae, sha256, path), read once: a missing or foreign file fails here
        path = parse_vision(config.vision)[1]
        vae, _, sha256 = load_vae(path)
        vision = (vae, sha256, path)
    if suite == "atari":
        env: VecEnv = AtariVecEnv(
            rom_name(env_id),
            config.num_envs,
            episodic_life=config.episodic_life,
            max_episode_steps=config.max_episode_steps or 27_000,
            screens=screens,
            ram=ram,
        )
    else:
        max_steps = config.max_episode_steps
        if suite == "minatar" and max_steps is None:
            max_steps = 27_000
        if suite == "mujoco":
            route_mujoco_warnings(env_id)
        pixels = config.pixels
        if vision is not None and pixels is None:
            pixels = vision[0].shape.image_size
        env = make_gym_vec_env(env_id, config.num_envs, suite, max_steps, pixels, screens, config.action_repeat, config.vector)
    if vision is not None:
        env = VAEVision(env, *vision, config.vision_latent, config.vision_finetune_every, seed, device)
    if config.frame_stack > 1:
        env = FrameStack(env, config.frame_stack)
    if variant.fall_penalty:
        env = FallPenalty(env)
    if variant.observed is not None:
        env = KeepObservationEntries(env, variant.observed)
    if config.previous_action_reward:
        env = PreviousActionReward(env)
    if config.normalize_observation:
        env = NormalizeObservation(env)
    if config.reward_clip is not None or config.reward_scale != 1.0:
        env = TransformReward(env, config.reward_clip, config.reward_scale)
    if config.normalize_reward:
        env = NormalizeReward(env, gamma)
    return env
