"""A vision module between rendered frames and the agent: ``--vision vae:PATH``."""

from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import numpy as np
import torch

from voidrl.envs.base import Step, VecEnv
from voidrl.envs.snapshot import NotSaveable
from voidrl.envs.wrappers import VecEnvWrapper
from voidrl.math.elbo import reparameterize
from voidrl.nets.vae import VAE, VisionFileError

FINETUNE_BATCH = 64
FINETUNE_MEMORY = 2048
FINETUNE_LEARNING_RATE = 1e-4


class VAEVision(VecEnvWrapper):
    """Frames ``[N, 3, S, S]`` uint8 -> the VAE's latent ``[N, Z]`` float32: its mean, or a sample of q(z|x).
    ``vae`` was loaded from ``path``, whose content hash is ``sha256``.

    Frozen by default: latents are computed without gradient, so nothing the agent learns reaches the VAE.
    With ``finetune_every`` the VAE keeps learning its own ELBO, one Adam step on a batch of the last frames
    seen every ``finetune_every`` vector steps (while ``training``); its weights then live in the
    checkpoint. Either way the checkpoint records the file's sha256, and loading a run whose file has
    changed is refused.

    The VAE runs on ``device`` (the run's: a GPU encodes far faster than the CPU that also steps and renders
    the environments); frames, latents and the random streams stay on the CPU.
    """

    def __init__(self, env: VecEnv, vae: VAE, sha256: str, path: str, latent: str = "mean",
                 finetune_every: int | None = None, seed: int = 0, device: torch.device | str = "cpu"):
        super().__init__(env)
        self.device = torch.device(device)
        self.vae, self.sha256, self.path = vae.to(self.device), sha256, path
        size = self.vae.shape.image_size
        if env.single_observation_space.shape != (3, size, size):
            raise VisionFileError(f"vision file {path!r} encodes {size}x{size} RGB frames [3, {size}, {size}]; this "
                                  f"environment gives {tuple(env.single_observation_space.shape)}")
        self.latent = latent
        self.finetune_every = finetune_every
        self.vae.requires_grad_(finetune_every is not None)
        self.generator = torch.Generator().manual_seed(seed)
        self.training = True
        self.vector_steps = 0
        if finetune_every is not None:
            self.optimizer = torch.optim.Adam(self.vae.parameters(), lr=FINETUNE_LEARNING_RATE)
            self.memory = torch.zeros(FINETUNE_MEMORY, 3, size, size, dtype=torch.uint8)
            self.memory_size = 0
            self.last_loss = float("nan")
        self.single_observation_space = gym.spaces.Box(-np.inf, np.inf, (self.vae.shape.latent_size,), np.float32)

    @torch.no_grad()
    def encode(self, frames: torch.Tensor) -> torch.Tensor:
        mean, log_var = (x.cpu() for x in self.vae.encode(frames.to(self.device)))
        return mean if self.latent == "mean" else reparameterize(mean, log_var, self.generator)

    def reset(self, seed: int) -> torch.Tensor:
        return self.encode(self.env.reset(seed))

    def step(self, actions: torch.Tensor) -> Step:
        step = self.env.step(actions)
        if self.finetune_every is not None and self.training:
            self.finetune(step.obs)
        obs = self.encode(step.obs)
        final_obs = obs if step.final_obs is step.obs else self.encode(step.final_obs)
        return replace(step, obs=obs, final_obs=final_obs)

    def finetune(self, frames: torch.Tensor) -> None:
        """Remember ``frames`` (a ring of the last FINETUNE_MEMORY), and every ``finetune_every`` vector steps
        take one ELBO step on FINETUNE_BATCH of the remembered frames."""
        slots = (self.vector_steps * frames.shape[0] + torch.arange(frames.shape[0])) % FINETUNE_MEMORY
        self.memory[slots] = frames
        self.memory_size = min(self.memory_size + frames.shape[0], FINETUNE_MEMORY)
        self.vector_steps += 1
        if self.vector_steps % self.finetune_every:
            return
        batch = self.memory[torch.randint(self.memory_size, (FINETUNE_BATCH,), generator=self.generator)].to(self.device)
        with torch.enable_grad():
            loss, _ = self.vae.loss(batch, self.generator)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
        self.optimizer.step()
        self.last_loss = loss.item()

    def own_state_dict(self) -> dict:
        state = {"sha256": self.sha256, "generator": self.generator.get_state(), "vector_steps": self.vector_steps}
        if self.finetune_every is not None:
            state.update(model=self.vae.state_dict(), optimizer=self.optimizer.state_dict())
        return state

    def own_episodes_state(self) -> dict:
        if self.finetune_every is not None:
            raise NotSaveable("the vision module's fine-tuning memory of frames")
        return {}

    def load_own_state_dict(self, state: dict) -> None:
        if state["sha256"] != self.sha256:
            raise VisionFileError(f"vision file {self.path!r} has changed since the run was saved: its sha256 is "
                                  f"{self.sha256[:16]}..., the run used {state['sha256'][:16]}... (restore that file)")
        self.generator.set_state(state["generator"])
        self.vector_steps = state["vector_steps"]
        if self.finetune_every is not None:
            self.vae.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
