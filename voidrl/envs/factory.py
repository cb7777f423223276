"""The one entry point that turns an environment id into a ``VecEnv``."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import gymnasium as gym
import torch

from voidrl.envs.atari import AtariVecEnv, all_rom_names, rom_name
from voidrl.envs.base import VecEnv
from voidrl.envs.gym_backend import make_gym_vec_env
from voidrl.envs.vision import LATENTS, VAEVision, parse_vision
from voidrl.nets.vae import load_vae
from voidrl.envs.wrappers import FallPenalty, FrameStack, KeepObservationEntries, NormalizeObservation, NormalizeReward, TransformReward
from voidrl.validation import require_choice, require_each, require_positive, require_positive_integers

SUITES = ("classic", "mujoco", "minatar", "minigrid", "atari")
LIST_HINT = "run `voidrl envs` to list the valid ids"


class UnknownEnvironment(ValueError):
    pass


@dataclass(frozen=True)
class Variant:
    """A registered task variant: a base id with another time limit and/or training reward."""

    base: str
    max_episode_steps: int | None = None
    fall_penalty: bool = False
    """Train on -1 per fall, 0 otherwise (reported returns stay the base task's)."""
    observed: tuple[int, ...] | None = None
    """Observation entries the agent sees (None: all)."""


VARIANTS = {
    # The notebook's tasks.
    "voidrl/InvertedPendulumFall-v5": Variant("InvertedPendulum-v5", fall_penalty=True),
    "voidrl/HalfCheetah500-v5": Variant("HalfCheetah-v5", max_episode_steps=500),
    # Partially observable: cart position and pole angle only, so velocities must be inferred from history.
    "voidrl/CartPoleNoVelocity-v1": Variant("CartPole-v1", observed=(0, 2)),
}


@dataclass
class EnvConfig:
    """How the training environments are built (see ``make_env``)."""

    num_envs: int = 8
    """Number of parallel environments stepped together."""
    normalize_observation: bool = False
    """Standardise observations with running statistics (saved in checkpoints)."""
    normalize_reward: bool = False
    """Divide rewards by the running std of the discounted return (saved in checkpoints)."""
    reward_clip: float | None = None
    """Clamp training rewards to [-c, c] before scaling (1 on Atari = sign clipping); None disables."""
    reward_scale: float = 1.0
    """Multiply training rewards by this (the thesis uses 0.1 on Ms. Pac-Man)."""
    episodic_life: bool = True
    """Atari only: a lost life ends the training episode (reported returns still run to game over)."""
    max_episode_steps: int | None = None
    """Override the id's time limit in agent steps (Atari default 27,000 = 108,000 frames)."""
    pixels: int | None = None
    """MuJoCo only: observe S x S RGB frames rendered headless by gymnasium (uint8 [3, S, S], e.g. 96) instead
    of the joint state; None keeps the state (with --vision: the VAE's frame size)."""
    frame_stack: int = 1
    """Observations the agent sees at once, concatenated along their first axis (frames: channels, VAE
    latents: features), so that velocities can be read from them."""
    vision: str | None = None
    """vae:PATH: the agent sees the latent of the VAE in PATH (written by voidrl vae train) instead of the
    frames it renders; the checkpoint keeps the file's sha256 and refuses a changed file."""
    vision_latent: str = "mean"
    """With --vision: the latent mean, or a sample of the VAE's posterior (fresh noise every step)."""
    vision_finetune_every: int | None = None
    """With --vision: keep training the VAE on the frames seen, one ELBO step on 64 of the last 2,048 frames
    every this many vector steps (its weights go in the checkpoint); None keeps it frozen."""

    def validate(self, env_id: str) -> None:
        """The environment options' ranges and combinations, for ``env_id``; a ValueError naming the field."""
        require_positive_integers(self, ("num_envs", "max_episode_steps", "frame_stack", "vision_finetune_every"))
        require_positive(self, ("reward_scale", "reward_clip"))
        require_each(self, ("pixels",), lambda size: size >= 16, "be at least 16 (pixels a side)")
        require_choice(self, "vision_latent", LATENTS)
        if self.vision is not None:
            parse_vision(self.vision)
        elif self.vision_finetune_every is not None or self.vision_latent != "mean":
            raise ValueError("vision_latent and vision_finetune_every need --vision vae:PATH")
        visual = self.pixels is not None or self.vision is not None
        if visual and suite_of(env_id) != "mujoco":
            raise ValueError(f"pixels and vision render MuJoCo tasks; {env_id} is a {suite_of(env_id)} task")
        if visual and VARIANTS.get(env_id, Variant(env_id)).observed is not None:
            raise ValueError(f"pixels and vision replace the state that {env_id} hides entries of; use its base task")
        if self.pixels is not None and self.vision is None and self.normalize_observation:
            raise ValueError("normalize_observation standardises state vectors, not frames: pass --no-normalize-observation "
                             "with --pixels (pixel networks scale frames to [0, 1]), or use ppo's --preset mujoco-pixels")


def _register_optional_suites() -> None:
    import ale_py

    gym.register_envs(ale_py)
    try:
        import minigrid  # registers MiniGrid-* on import
    except ImportError:
        pass
    else:
        gym.register_envs(minigrid)
    try:
        from minatar.gym import register_envs
    except ImportError:
        return
    if "MinAtar/Breakout-v1" not in gym.registry:
        register_envs()


def suite_of(env_id: str) -> str:
    """The suite an id belongs to; raises ``UnknownEnvironment`` naming the id otherwise."""
    if env_id in VARIANTS:
        return suite_of(VARIANTS[env_id].base)
    if env_id.startswith(("MinAtar/", "MiniGrid-")):
        _register_optional_suites()
        if env_id in gym.registry:
            return "minatar" if env_id.startswith("MinAtar/") else "minigrid"
    elif env_id in gym.registry:
        entry = str(gym.registry[env_id].entry_point)
        if "classic_control" in entry:
            return "classic"
        if "mujoco" in entry:
            return "mujoco"
    if rom_name(env_id) is not None:
        return "atari"
    raise UnknownEnvironment(f"unknown environment id {env_id!r}; {LIST_HINT}")


def list_env_ids() -> dict[str, list[str]]:
    """Valid ids per suite (Atari games listed by their ALE/...-v5 id)."""
    _register_optional_suites()
    ids: dict[str, list[str]] = {suite: [] for suite in SUITES}
    for env_id, spec in gym.registry.items():
        entry = str(spec.entry_point)
        if "classic_control" in entry:
            ids["classic"].append(env_id)
        elif "mujoco" in entry and env_id.endswith("-v5"):
            ids["mujoco"].append(env_id)
        elif env_id.startswith("MinAtar/"):
            ids["minatar"].append(env_id)
        elif env_id.startswith("MiniGrid-"):
            ids["minigrid"].append(env_id)
        elif env_id.startswith("ALE/") and env_id.endswith("-v5"):
            ids["atari"].append(env_id)
    for env_id, variant in VARIANTS.items():
        ids[suite_of(variant.base)].append(env_id)
    if not ids["atari"]:
        ids["atari"] = all_rom_names()
    return {suite: sorted(names) for suite, names in ids.items()}


def route_mujoco_warnings() -> None:
    """MuJoCo prints each model-compiler warning on stderr once per environment built; the one seen with
    gymnasium 1.4's models is a deprecated XML attribute, which the user cannot act on. As a Python
    DeprecationWarning it is hidden by default and shown once with ``python -W default``."""
    import mujoco

    mujoco.set_mju_user_warning(lambda message: warnings.warn(f"mujoco: {message}", DeprecationWarning, stacklevel=1))


def make_env(env_id: str, config: EnvConfig | None = None, gamma: float = 0.99, seed: int = 0,
             device: torch.device | str = "cpu") -> VecEnv:
    """Build ``config.num_envs`` copies of ``env_id`` as one torch ``VecEnv``.

    ``gamma`` is the discount used by reward normalisation; ``seed`` seeds the vision module's own noise;
    ``device`` is where the vision module's VAE runs (observations stay on the CPU).
    """
    config = config or EnvConfig()
    variant = VARIANTS.get(env_id, Variant(env_id))
    env_id = variant.base
    if variant.max_episode_steps is not None and config.max_episode_steps is None:
        config = replace(config, max_episode_steps=variant.max_episode_steps)
    suite = suite_of(env_id)
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
        )
    else:
        max_steps = config.max_episode_steps
        if suite == "minatar" and max_steps is None:
            max_steps = 27_000
        if suite == "mujoco":
            route_mujoco_warnings()
        pixels = config.pixels
        if vision is not None and pixels is None:
            pixels = vision[0].shape.image_size
        env = make_gym_vec_env(env_id, config.num_envs, suite, max_steps, pixels)
    if vision is not None:
        env = VAEVision(env, *vision, config.vision_latent, config.vision_finetune_every, seed, device)
    if config.frame_stack > 1:
        env = FrameStack(env, config.frame_stack)
    if variant.fall_penalty:
        env = FallPenalty(env)
    if variant.observed is not None:
        env = KeepObservationEntries(env, variant.observed)
    if config.normalize_observation:
        env = NormalizeObservation(env)
    if config.reward_clip is not None or config.reward_scale != 1.0:
        env = TransformReward(env, config.reward_clip, config.reward_scale)
    if config.normalize_reward:
        env = NormalizeReward(env, gamma)
    return env
