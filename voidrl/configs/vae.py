"""What ``voidrl vae train`` collects and how it trains (the command: ``voidrl.training.vae``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from voidrl.configs.choices import LIKELIHOODS
from voidrl.validation import require_choice, require_non_negative, require_positive, require_positive_integers, validate_fraction

VAE_NAME = "vae.pt"


@dataclass
class VAETrainConfig:
    """What ``voidrl vae train`` collects and how it trains; written to RUN_DIR/config.json."""

    env: str = "HalfCheetah-v5"
    """MuJoCo task whose rendered frames the VAE learns."""
    run_dir: str = ""
    """Directory for vae.pt, losses.csv and the figures (must not hold a VAE yet)."""
    frames: int = 20_000
    """Frames to collect from random rollouts (Leite (2022) kept 1 step in 10 of 100 episodes)."""
    pixels: int = 96
    """Frame size S (S x S RGB); a multiple of 16, at least 32."""
    latent_size: int = 8
    """Dimensions of the latent."""
    likelihood: str = "bernoulli"
    """Pixel model: bernoulli (binary cross-entropy on intensities in [0, 1]) or gaussian (fixed std)."""
    gaussian_std: float = 0.1
    """With likelihood gaussian: each pixel's standard deviation."""
    encoder_kernel: int = 2
    """Kernel size of the encoder's stride-2 convolutions: 2 (Leite's (2022)) or 4 (overlapping, padding 1)."""
    body_weight: float = 1.0
    """Weight of the body's pixels in the reconstruction term, the others' being 1 (1: the ELBO itself). The body's
    pixels come from MuJoCo's segmentation while frames are collected; the agent later sees frames only."""
    epochs: int = 8
    """Passes over the frames."""
    batch_size: int = 256
    """Frames per Adam step."""
    learning_rate: float = 1e-3
    """Adam's step size."""
    keep_probability: float = 0.1
    """Chance that a step's frame is kept, so consecutive frames rarely both are (1 keeps every frame)."""
    action_persistence: float = 0.931
    """Random actions N(0, 1) clipped to the action bounds, each redrawn with probability 1 - p per step
    (Leite's (2022) cheetah: about 15 steps per action)."""
    policy: str | None = None
    """A checkpoint of an agent trained on the task's state (a run's checkpoint.pt) whose sampled actions play a share
    of the episodes: frames of a moving body, which random actions rarely show. None: random actions only."""
    policy_share: float = 0.5
    """With policy: the share of the frames from episodes the policy plays (each episode goes to the policy while its
    frames are at most this share of those kept, else to random actions)."""
    validation_fraction: float = 0.05
    """Share of the frames held out to measure the loss on frames not trained on."""
    seed: int = 0
    """Seeds the rollouts, the shuffle and the network."""
    device: str = "cpu"
    """Torch device the VAE trains on: cpu, cuda, cuda:N, or auto (cuda when available); frames are rendered
    on the CPU either way, and vae.pt is written with CPU tensors."""
    torch_threads: int = 0
    """Torch intra-op CPU threads; 0 keeps torch's default."""
    progress: bool | None = None
    """Show progress bars (True or False); None shows them when stderr is a terminal, and not when it goes to a file,
    a pipe or a Jupyter cell."""

    def validate(self) -> None:
        """A ValueError naming the first bad field, no I/O; what needs the environment, torch or the run directory
        (the VAE's shape, the device, the task's suite, the directory) ``voidrl.training.vae.check_vae_training``
        checks."""
        if not self.run_dir:
            raise ValueError("run_dir is required (--run-dir DIR)")
        require_positive_integers(self, ("frames", "epochs", "batch_size", "latent_size"))
        require_positive(self, ("learning_rate", "gaussian_std", "body_weight"))
        require_choice(self, "likelihood", LIKELIHOODS)
        validate_collection(self)
        validate_fraction("validation_fraction", self.validation_fraction, high=0.5)
        if self.torch_threads < 0:
            raise ValueError(f"torch_threads must be >= 0, got {self.torch_threads}")
        if self.frames - max(1, int(self.frames * self.validation_fraction)) < 1:
            raise ValueError(f"frames must leave at least one training frame beside the held-out "
                             f"{self.validation_fraction:g} of them, got {self.frames}")


@dataclass
class VAEProbeConfig:
    """What ``voidrl vae probe`` measures of a VAE on frames it was not trained on."""

    vision: str = ""
    """The VAE file (vae.pt of ``voidrl vae train``); its task and frame size are the probe's."""
    frames: int = 4000
    """Frames to render from random rollouts, collected as ``vae train`` collects them."""
    held_out_fraction: float = 0.25
    """Share of the frames the linear probe is scored on (fitted on the rest)."""
    ridge: float = 1e-3
    """The probe's ridge penalty, per frame, on standardised latents."""
    neighbours: int = 10
    """Neighbours whose joint positions the non-linear probe averages (the k of its k-nearest-neighbour regression)."""
    keep_probability: float = 0.1
    """Chance that a step's frame is kept (as in vae train)."""
    action_persistence: float = 0.931
    """Random actions each redrawn with probability 1 - p per step (as in vae train)."""
    policy: str | None = None
    """A trained agent's checkpoint playing a share of the episodes (as in vae train)."""
    policy_share: float = 0.5
    """With policy: the share of the frames from episodes it plays (as in vae train)."""
    seed: int = 1
    """Seeds the rollouts (vae train's default is 0, so the default frames are new to the VAE)."""
    out: str | None = None
    """Write the figures as JSON to this file too; None prints them only."""
    torch_threads: int = 0
    """Torch intra-op CPU threads; 0 keeps torch's default."""
    progress: bool | None = None
    """Show progress bars (True or False); None shows them when stderr is a terminal, and not when it goes to a file,
    a pipe or a Jupyter cell."""

    def validate(self) -> None:
        """A ValueError naming the first bad field; the VAE file is checked when it is loaded."""
        if not self.vision:
            raise ValueError("vision is required (--vision PATH of a vae.pt)")
        require_positive_integers(self, ("frames", "neighbours"))
        require_non_negative(self, ("ridge", "torch_threads"))
        validate_fraction("held_out_fraction", self.held_out_fraction, high=0.9)
        validate_collection(self)
        if self.frames * self.held_out_fraction < 10 or self.frames * (1 - self.held_out_fraction) < 10:
            raise ValueError(f"frames ({self.frames}) must leave at least 10 frames to fit and 10 to score the probe on")
        fitted = self.frames - int(self.frames * self.held_out_fraction)
        if self.neighbours > fitted:
            raise ValueError(f"neighbours ({self.neighbours}) must be at most the {fitted} frames the probe is fitted on")


def validate_collection(config: VAETrainConfig | VAEProbeConfig) -> None:
    """The rollouts' ``keep_probability`` in (0, 1], ``action_persistence`` in [0, 1), ``policy_share`` in [0, 1]
    and the ``policy`` file's presence (its contents are checked when it is loaded)."""
    if config.policy is not None and not Path(config.policy).is_file():
        raise ValueError(f"policy must be a checkpoint file of a trained agent, got {config.policy!r} (no such file)")
    if not 0.0 <= config.policy_share <= 1.0:
        raise ValueError(f"policy_share must lie in [0, 1], got {config.policy_share}")
    if not 0.0 < config.keep_probability <= 1.0:
        raise ValueError(f"keep_probability must lie in (0, 1], got {config.keep_probability}")
    if not 0.0 <= config.action_persistence < 1.0:
        raise ValueError(f"action_persistence must lie in [0, 1), got {config.action_persistence}")
