"""Active Pre-Training (Liu & Abbeel 2021) as a reward plug-in.

Every vector step the true next observations enter a uint8 representation buffer
and, once ``contrastive_start`` environment steps have been seen, the encoder takes
``contrastive_updates_per_step`` NT-Xent steps on two augmented views of a batch
drawn from the filled slots. After each rollout the particle reward of every next
state is computed with the current encoder: its mean distance to its k nearest
*other* particles of the rollout, divided by a running mean of those distances,
r = log(c + that). The rollout's rewards become
``extrinsic_coef * task + intrinsic_coef * particle``; the algorithm is unchanged.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch
from torch.nn.utils import parametrize

from voidrl.algos.base import require_non_negative, require_positive, require_positive_integers
from voidrl.intrinsic.augment import View, augment, draw_view
from voidrl.intrinsic.buffer import RepresentationBuffer
from voidrl.math.contrastive import nt_xent_loss
from voidrl.math.knn import knn_distances, particle_reward
from voidrl.math.running_stats import RunningMeanStd
from voidrl.nets.encoders import APTEncoder, ProjectionHead
from voidrl.nets.flat import FlatParameters
from voidrl.rollout.storage import RolloutStorage


REWARD_OBSERVATIONS = ("next", "current")


@dataclass
class APTConfig:
    """APT plug-in settings (used with ``--intrinsic apt``). Defaults are the thesis's."""

    extrinsic_coef: float = 0.0
    """Weight of the task reward in the training reward (0 = reward-free pre-training; the task
    score is still logged)."""
    intrinsic_coef: float = 1.0
    """Weight of the particle reward."""
    knn_k: int = 5
    """Neighbours per particle (self excluded)."""
    reward_offset: float = 1.0
    """c in r = log(c + mean k-NN distance / running mean)."""
    knn_clip: float = 0.0
    """Floor on each normalised k-NN distance: r = log(c + mean_j max(d_j / running mean - clip, 0)). 0 is
    the thesis's reward; the reference APT code on DeepMind Control offers a positive clip."""
    reward_observation: str = "next"
    """Particles of the reward: next (the thesis: s' of every transition, the true final observation at
    episode ends) or current (the reference DeepMind Control code: s)."""
    representation_buffer: int = 10_000
    """Observations kept (uint8) for contrastive training."""
    contrastive_start: int = 1_600
    """Environment steps before the first contrastive update."""
    contrastive_updates_per_step: float = 1.0
    """Contrastive updates per vector step once started; a fraction spaces them out (0.25 = one
    update every 4 vector steps), 0 turns contrastive training off."""
    contrastive_batch_size: int = 512
    """Observations per contrastive update (two views each)."""
    contrastive_chunk_size: int | None = None
    """Back-propagate the contrastive loss one chunk of this many observations (of one view) at a time
    (gradient caching, Gao et al. 2021): the loss's gradient w.r.t. the projections comes first, then
    each chunk is re-encoded and back-propagated alone. Same gradient, a fraction of the activation
    memory, one more forward pass; the batch size keeps one view at a time; None back-propagates
    both views at once."""
    temperature: float = 0.1
    """NT-Xent temperature."""
    encoder_learning_rate: float = 1e-3
    """Adam learning rate of the encoder and projection head."""
    encoder_max_grad_norm: float = 10.0
    """Clip the encoder's gradient norm to this."""

    def validate(self) -> None:
        require_positive_integers(self, ("knn_k", "representation_buffer", "contrastive_batch_size"))
        if self.contrastive_chunk_size is not None:
            require_positive_integers(self, ("contrastive_chunk_size",))
        require_non_negative(self, ("contrastive_start", "contrastive_updates_per_step", "knn_clip", "extrinsic_coef", "intrinsic_coef"))
        require_positive(self, ("temperature", "encoder_learning_rate", "encoder_max_grad_norm", "reward_offset"))
        if self.reward_observation not in REWARD_OBSERVATIONS:
            raise ValueError(f"reward_observation must be one of {', '.join(REWARD_OBSERVATIONS)}, got {self.reward_observation!r}")


def chunk_views(view: View, chunk_size: int) -> list[View]:
    """A view's parameters cut into the chunks of its batch."""
    return list(zip(*(part.split(chunk_size) for part in view)))


class APTReward:
    """The plug-in: ``on_step`` after every vector step, ``rewrite_rewards`` after every rollout."""

    def __init__(self, config: APTConfig, obs_shape: tuple[int, ...], device: torch.device | str = "cpu"):
        config.validate()
        if len(obs_shape) != 3:
            raise ValueError(f"apt needs pixel observations [C, H, W], got shape {tuple(obs_shape)}")
        self.config = config
        self.device = torch.device(device)
        self.encoder = APTEncoder(obs_shape).to(self.device)
        self.head = ProjectionHead(self.encoder.out_features).to(self.device)
        self.parameters = FlatParameters([*self.encoder.parameters(), *self.head.parameters()])
        self.optimizer = torch.optim.Adam([self.parameters.flat], lr=config.encoder_learning_rate)
        self.buffer = RepresentationBuffer(config.representation_buffer, obs_shape)
        self.distance_stats = RunningMeanStd(())
        # DrQ's 4-pixel shift is for 84x84 frames; small frames (MinAtar 10x10) get a 1-pixel one.
        self.shift_pad = max(1, round(4 * min(obs_shape[1:]) / 84))
        self.env_steps = 0
        self.update_credit = 0.0
        """Contrastive updates owed: grows by contrastive_updates_per_step per vector step."""
        self._losses: list[torch.Tensor] = []
        self._accuracies: list[torch.Tensor] = []
        self._seconds = 0.0

    def on_step(self, next_obs: torch.Tensor) -> None:
        """Store the true next observations ``[N, ...]`` (uint8) and train the encoder."""
        started = time.perf_counter()
        self.buffer.add(next_obs.cpu())
        self.env_steps += next_obs.shape[0]
        if self.env_steps >= self.config.contrastive_start:
            self.update_credit += self.config.contrastive_updates_per_step
            while self.update_credit >= 1.0:
                self.contrastive_update()
                self.update_credit -= 1.0
        self._seconds += time.perf_counter() - started

    def project(self, frames: torch.Tensor, view: View) -> torch.Tensor:
        """g(f(one augmented view)) ``[B, 64]`` of uint8 frames ``[B, C, H, W]``."""
        return self.head(self.encoder(augment(frames, self.shift_pad, view=view)))

    @torch.enable_grad()  # on_step runs inside the collector's no-grad rollout
    def contrastive_update(self) -> None:
        frames = self.buffer.sample(self.config.contrastive_batch_size).to(self.device)
        chunk_size = self.config.contrastive_chunk_size or frames.shape[0]
        chunks = frames.split(chunk_size)
        views = [draw_view(frames.shape[0], self.shift_pad, device=frames.device) for _ in range(2)]
        self.encoder.train()
        self.parameters.zero_grad()
        # one spectral-norm power iteration per update; every forward below shares its weights
        with parametrize.cached():
            for module in self.encoder.modules():
                if parametrize.is_parametrized(module, "weight"):
                    module.weight  # computed (and cached) with grad enabled, before any no-grad pass
            if self.config.contrastive_chunk_size is None:
                z1, z2 = (self.project(frames, view) for view in views)
                loss, metrics = nt_xent_loss(z1, z2, self.config.temperature)
                loss.backward()
            else:
                with torch.no_grad():
                    projections = [torch.cat([self.project(c, v) for c, v in zip(chunks, chunk_views(view, chunk_size))])
                                   for view in views]
                z1, z2 = (z.requires_grad_() for z in projections)
                loss, metrics = nt_xent_loss(z1, z2, self.config.temperature)
                loss.backward()
                for z, view in zip((z1, z2), views):
                    for chunk, chunk_view, grad in zip(chunks, chunk_views(view, chunk_size), z.grad.split(chunk_size)):
                        self.project(chunk, chunk_view).backward(grad, retain_graph=True)  # keeps the cached weights' graph
        self.parameters.clip_grad_norm_(self.config.encoder_max_grad_norm)
        self.optimizer.step()
        self._losses.append(metrics["apt/contrastive_loss"])
        self._accuracies.append(metrics["apt/contrastive_accuracy"])

    @torch.no_grad()
    def rewrite_rewards(self, rollout: RolloutStorage, chunk_steps: int = 8) -> dict[str, float]:
        """Replace ``rollout.rewards`` ``[T, N]`` by the weighted task and particle rewards."""
        started = time.perf_counter()
        cfg = self.config
        self.encoder.eval()  # also freezes spectral norm's power iteration
        observations = rollout.next_obs if cfg.reward_observation == "next" else lambda start, stop: rollout.obs[start:stop]
        latents = torch.cat([
            self.encoder(observations(t, min(t + chunk_steps, rollout.num_steps)).flatten(0, 1).float() / 255.0)
            for t in range(0, rollout.num_steps, chunk_steps)
        ])
        neighbour_distances = knn_distances(latents, cfg.knn_k)
        distances = neighbour_distances.mean(1)
        self.distance_stats.update(distances)
        running_mean = self.distance_stats.mean.to(distances.dtype).clamp_min(1e-8)
        intrinsic = particle_reward(neighbour_distances, running_mean, cfg.reward_offset, cfg.knn_clip).view_as(rollout.rewards)
        task = rollout.rewards.clone()
        rollout.rewards.mul_(cfg.extrinsic_coef).add_(cfg.intrinsic_coef * intrinsic)
        metrics = {
            "apt/particle_reward": intrinsic.mean().item(),
            "apt/knn_distance_raw": distances.mean().item(),
            "apt/knn_distance_running_mean": running_mean.item(),
            "apt/task_reward": task.mean().item(),
            "apt/buffer_size": float(len(self.buffer)),
            "time/intrinsic_seconds": self._seconds + time.perf_counter() - started,
        }
        if self._losses:
            metrics["apt/contrastive_loss"] = torch.stack(self._losses).mean().item()
            metrics["apt/contrastive_accuracy"] = torch.stack(self._accuracies).mean().item()
            metrics["apt/contrastive_updates"] = float(len(self._losses))
        self._losses, self._accuracies, self._seconds = [], [], 0.0
        return metrics

    def state_dict(self) -> dict[str, Any]:
        return {
            "encoder": self.encoder.state_dict(),
            "head": self.head.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "buffer": self.buffer.state_dict(),
            "distance_stats": self.distance_stats.state_dict(),
            "env_steps": self.env_steps,
            "update_credit": self.update_credit,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.encoder.load_state_dict(state["encoder"])
        self.head.load_state_dict(state["head"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.buffer.load_state_dict(state["buffer"])
        self.distance_stats.load_state_dict(state["distance_stats"])
        self.env_steps = int(state["env_steps"])
        self.update_credit = float(state.get("update_credit", 0.0))
