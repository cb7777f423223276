"""How the training environments are built: the options of ``voidrl.envs.factory.make_env``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from voidrl.configs.choices import SUITES
from voidrl.configs.conditions import Condition, IsSet, Suites, VectorObservations
from voidrl.validation import require_choice, require_each, require_positive, require_positive_integers

LATENTS = ("mean", "sample")
VISION_KINDS = ("vae",)
VECTOR_MODES = ("sync", "async")


@dataclass
class EnvConfig:
    """How the training environments are built (see ``make_env``)."""

    num_envs: int = 8
    """Number of parallel environments stepped together."""
    vector: str = "sync"
    """How gymnasium steps them: sync (one after another in this process) or async (each in a subprocess of its own:
    for slow Python environments); the same seeds give the same run either way. Atari's emulators always run in ALE's
    own threads."""
    normalize_observation: bool = False
    """Standardise observations with running statistics (saved in checkpoints)."""
    normalize_reward: bool = False
    """Divide rewards by the running std of the discounted return (saved in checkpoints)."""
    reward_clip: float | None = None
    """Clamp training rewards to [-c, c] before scaling (1 on Atari = sign clipping); None disables."""
    reward_scale: float = 1.0
    """Multiply training rewards by this (Müller (2022) uses 0.1 on Ms. Pac-Man)."""
    episodic_life: bool = True
    """Atari only: a lost life ends the training episode (reported returns still run to game over)."""
    max_episode_steps: int | None = None
    """Override the id's time limit, in environment steps (with --action-repeat, each step inside a repeat; Atari:
    agent steps, default 27,000 = 108,000 frames)."""
    action_repeat: int = 1
    """Apply each action for this many environment steps, their rewards summed (only the last is rendered); an
    episode that ends inside the repeat (terminated or truncated, kept apart) stops it. --steps and the step
    columns count environment steps, N per agent decision (also the last of an episode that ended early), as the
    pixel-control literature reports them (PlaNet, DrQ: cheetah-run with 4); episode lengths stay in decisions.
    Not on Atari, which already repeats each action for 4 frames."""
    pixels: int | None = None
    """MuJoCo only: observe S x S RGB frames rendered headless by gymnasium (uint8 [3, S, S], e.g. 96) instead
    of the joint state; None keeps the state (with --vision: the VAE's frame size)."""
    frame_stack: int = 1
    """Observations the agent sees at once, concatenated along their first axis (frames: channels, VAE
    latents: features), so that velocities can be read from them."""
    previous_action_reward: bool = False
    """Vector observations only: append the previous action (one-hot for discrete actions) and the previous reward
    (the environment's own, before any scaling or normalisation) to each observation, zeros where an episode
    begins, as R2D2 feeds its LSTM; for recurrent PPO, PPG, A2C and A3C (--memory lstm), or any policy. Not with
    reward-free pre-training (it would show the task reward)."""
    vision: str | None = None
    """vae:PATH: the agent sees the latent of the VAE in PATH (written by voidrl vae train) instead of the
    frames it renders; the checkpoint keeps the file's sha256 and refuses a changed file."""
    vision_latent: str = "mean"
    """With --vision: the latent mean, or a sample of the VAE's posterior (fresh noise every step)."""
    vision_finetune_every: int | None = None
    """With --vision: keep training the VAE on the frames seen, one ELBO step on 64 of the last 2,048 frames
    every this many vector steps (its weights go in the checkpoint); None keeps it frozen."""

    acts_only: ClassVar[dict[str, Condition]] = {
        "episodic_life": Suites("on Atari games", "atari"),
        "action_repeat": Suites("outside Atari", *(suite for suite in SUITES if suite != "atari")),
        "vector": Suites("outside Atari", *(suite for suite in SUITES if suite != "atari")),  # ALE steps its games in threads of its own
        "pixels": Suites("on MuJoCo tasks", "mujoco"),
        "vision": Suites("on MuJoCo tasks", "mujoco"),
        "vision_latent": IsSet("vision"),
        "vision_finetune_every": IsSet("vision"),
        "previous_action_reward": VectorObservations(),
    }

    def validate(self) -> None:
        """The environment options' ranges and combinations; a ValueError naming the field. Their fit to the task
        (its suite, its variant) ``voidrl.training.preflight`` checks."""
        require_positive_integers(self, ("num_envs", "max_episode_steps", "action_repeat", "frame_stack", "vision_finetune_every"))
        require_positive(self, ("reward_scale", "reward_clip"))
        require_each(self, ("pixels",), lambda size: size >= 16, "be at least 16 (pixels a side)")
        require_choice(self, "vision_latent", LATENTS)
        require_choice(self, "vector", VECTOR_MODES)
        if self.vision is not None:
            parse_vision(self.vision)
        elif self.vision_finetune_every is not None or self.vision_latent != "mean":
            raise ValueError("vision_latent and vision_finetune_every need --vision vae:PATH")
        if self.pixels is not None and self.vision is None and self.normalize_observation:
            raise ValueError("normalize_observation standardises state vectors, not frames: pass --no-normalize-observation "
                             "with --pixels (pixel networks scale frames to [0, 1]), or use ppo's --preset mujoco-pixels")


def parse_vision(spec: str) -> tuple[str, str]:
    """``"vae:PATH"`` -> ``("vae", PATH)``; a ValueError naming the accepted form otherwise."""
    kind, colon, path = spec.partition(":")
    if kind not in VISION_KINDS or not colon or not path:
        raise ValueError(f"vision must look like {' or '.join(k + ':PATH' for k in VISION_KINDS)} (a file written by "
                         f"`voidrl vae train`), got {spec!r}")
    return kind, path
