"""Active Pre-Training (Liu & Abbeel 2021) as a reward plug-in.

Every vector step the true next observations enter a uint8 representation buffer
and, once ``contrastive_start`` environment steps have been seen, the encoder takes
``contrastive_updates_per_step`` contrastive steps on two augmented views of a batch
drawn from the filled slots: SimCLR's NT-Xent through one encoder (Müller 2022) or CURL's
bilinear InfoNCE against a momentum target encoder. After each rollout the particle reward of every next
state is computed with the current encoder: its mean distance to its k nearest
*other* particles of the rollout, divided by a running mean of those distances,
r = log(c + that). The algorithm learns from ``extrinsic_coef * task + intrinsic_coef * particle``
(``RolloutStorage.training_rewards``) and is otherwise unchanged.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import gymnasium as gym
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrize

from voidrl.configs.apt import APTConfig
from voidrl import collective
from voidrl.intrinsic.augment import View, augment, draw_view
from voidrl.intrinsic.buffer import RepresentationBuffer
from voidrl.math.contrastive import Metrics, bilinear_info_nce_loss, ema_update, nt_xent_loss, representation_metrics
from voidrl.math.knn import knn_distances, particle_reward
from voidrl.math.returns import episode_sums
from voidrl.math.running_stats import RunningMeanStd
from voidrl.nets.encoders import APTEncoder, ProjectionHead
from voidrl.nets.flat import TrainedParameters
from voidrl.nets.inverse_dynamics import InverseDynamicsHead
from voidrl.rollout.collector import Transition
from voidrl.rollout.storage import RolloutStorage


NO_GRAD_CHUNK = 64
"""States per encoder pass where no graph is kept (the target encoder's view, the particle reward) on CPU. No state's
output depends on the others' (bit-identical to one pass over the batch with oneDNN here), and every activation
stays under glibc's 4 MiB mmap threshold, so it is reused from the heap rather than page-faulted afresh: measured
35% faster for 512 Atari stacks on one thread. On an accelerator the whole batch goes at once."""


def chunk_views(view: View, chunk_size: int) -> list[View]:
    """A view's parameters cut into the chunks of its batch."""
    return list(zip(*(part.split(chunk_size) for part in view)))


class APTReward:
    """The plug-in (``RewardSource``): ``on_step`` after every vector step, ``intrinsic_rewards`` after
    every rollout."""

    config_class = APTConfig

    def __init__(self, config: APTConfig, obs_shape: tuple[int, ...], device: torch.device | str = "cpu",
                 action_space: gym.Space | None = None):
        config.validate()
        if len(obs_shape) != 3:
            raise ValueError(f"apt needs pixel observations [C, H, W], got shape {tuple(obs_shape)}")
        if config.inverse_dynamics_coef > 0 and not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(f"inverse_dynamics_coef needs a Discrete action space (the action is classified), "
                             f"got {action_space}")
        self.config = config
        self.device = torch.device(device)
        self.encoder = APTEncoder(obs_shape, spectral=config.spectral_norm).to(self.device)
        self.head = ProjectionHead(self.encoder.out_features, config.head_norm).to(self.device)
        self.inverse_head: InverseDynamicsHead | None = None
        """Classifies a_t from the latents of s_t and s_t+1 (``inverse_dynamics_coef`` > 0)."""
        if config.inverse_dynamics_coef > 0:
            self.inverse_head = InverseDynamicsHead(self.encoder.out_features, int(action_space.n)).to(self.device)
        online = [*self.encoder.parameters(), *self.head.parameters(),
                  *([] if self.inverse_head is None else self.inverse_head.parameters())]
        self.bilinear: nn.Parameter | None = None
        """curl's W ``[64, 64]``, starting at the identity (the dot product of the projections)."""
        self.target_encoder: APTEncoder | None = None
        self.target_head: ProjectionHead | None = None
        if config.contrastive_loss == "curl":
            self.target_encoder, self.target_head = copy.deepcopy(self.encoder), copy.deepcopy(self.head)
            for param in (*self.target_encoder.parameters(), *self.target_head.parameters()):
                param.requires_grad_(False)
            self.bilinear = nn.Parameter(torch.eye(self.head[-1].out_features, device=self.device))
        self.parameters = TrainedParameters([*online, *([self.bilinear] if self.bilinear is not None else [])],
                                            lambda flat: torch.optim.Adam([flat], lr=config.encoder_learning_rate))
        self.buffer = RepresentationBuffer(config.representation_buffer, obs_shape)
        self.distance_stats = RunningMeanStd(())
        # DrQ's 4-pixel shift is for 84x84 frames; small frames (MinAtar 10x10) get a 1-pixel one.
        self.shift_pad = max(1, round(4 * min(obs_shape[1:]) / 84))
        self.env_steps = 0
        self.vector_steps = 0
        self.updates = 0
        """Contrastive updates taken (drives the learning-rate warm-up)."""
        self.update_credit = 0.0
        """Contrastive updates owed: grows by contrastive_updates_per_step per vector step."""
        self.episode_returns: torch.Tensor | None = None
        """``[N]`` each environment's particle return so far in its current training episode (allocated by the first rollout)."""
        self._metrics: list[Metrics] = []
        self._seconds = 0.0
        self._frame_buffers: dict[int, torch.Tensor] = {}
        """Reused float32 channels-last buffers for frames on their way into the encoder (``frame_buffer``)."""

    @property
    def reward_coefs(self) -> tuple[float, float]:
        return self.config.extrinsic_coef, self.config.intrinsic_coef

    def on_step(self, transition: Transition) -> None:
        self.observe(transition.next_obs, self.arrivals(transition) if self.inverse_head is not None else None)

    def arrivals(self, transition: Transition) -> torch.Tensor:
        """``[N]``: the action by which each environment reached its next observation from the one stored a step
        before, -1 where it acted on another (a new episode began, or the run resumed into new ones)."""
        previous = self.buffer.latest()
        actions = transition.actions.cpu().long()
        if previous is None or previous.shape[0] != actions.shape[0]:
            return torch.full_like(actions, -1)
        continued = (transition.obs.cpu() == previous).flatten(1).all(1)
        return actions.where(continued, -1)

    def observe(self, next_obs: torch.Tensor, arrivals: torch.Tensor | None = None) -> None:
        """Store the true next observations ``[N, ...]`` (uint8) with their ``arrivals`` (``RepresentationBuffer.add``)
        and train the encoder."""
        started = time.perf_counter()
        if self.vector_steps % self.config.representation_stride == 0:
            self.buffer.add(next_obs.cpu(), arrivals)
        self.vector_steps += 1
        self.env_steps += next_obs.shape[0] * collective.world_size()
        if self.env_steps >= self.config.contrastive_start:
            self.update_credit += self.config.contrastive_updates_per_step
            while self.update_credit >= 1.0:
                self._metrics.append(self.contrastive_update())
                self.update_credit -= 1.0
        self._seconds += time.perf_counter() - started

    def draw_views(self, batch: int) -> list[View]:
        cfg = self.config
        return [draw_view(batch, self.shift_pad, cfg.brightness, device=self.device, shift_probability=cfg.shift_probability)
                for _ in range(2)]

    def frame_buffer(self, slot: int, frames: torch.Tensor) -> torch.Tensor:
        """A float32 channels-last tensor shaped like ``frames [B, C, H, W]``: the first B samples of this plug-in's
        buffer ``slot``, allocated once (grown if B is larger) and overwritten by every use.

        Glibc maps every tensor from 4 MiB afresh, and a fresh view of 512 Atari stacks (58 MB) costs ~20 ms of
        page faults, more than writing it: measured, reused buffers cut the augmentations ~4x. A buffer must not
        be written again while a graph that saved it awaits its backward pass: the two views of nt-xent take
        slots 0 and 1; curl's target view (no graph) and its online view take slot 0 in turn."""
        buffer = self._frame_buffers.get(slot)
        if buffer is None or buffer.shape[0] < frames.shape[0] or buffer.shape[1:] != frames.shape[1:] or buffer.device != frames.device:
            buffer = torch.empty(frames.shape, dtype=torch.float32, device=frames.device, memory_format=torch.channels_last)
            self._frame_buffers[slot] = buffer
        return buffer[: frames.shape[0]]

    def embed(self, frames: torch.Tensor, view: View, target: bool = False, slot: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Latents f(x) ``[B, 15]`` and projections g(f(x)) ``[B, 64]`` of one augmented view of uint8 frames
        ``[B, C, H, W]``, by the online networks or (``target``) the momentum target ones; with ``slot`` the view is
        written into that ``frame_buffer`` (the same values) instead of a new tensor."""
        encoder, head = (self.target_encoder, self.target_head) if target else (self.encoder, self.head)
        out = None if slot is None else self.frame_buffer(slot, frames)
        latents = encoder(augment(frames, self.shift_pad, view=view, out=out))
        return latents, head(latents)

    def contrastive_loss(self, projections: list[torch.Tensor], positives: torch.Tensor | None) -> tuple[torch.Tensor, Metrics]:
        """curl: this process's anchors against every process's positives (in a data-parallel run the other
        ranks' samples are negatives too, as in one process with the whole batch); nt-xent: this process's
        batch alone."""
        if self.bilinear is not None:
            first_label = collective.rank() * positives.shape[0]
            return bilinear_info_nce_loss(projections[0], collective.all_gather_rows(positives), self.bilinear, first_label)
        return nt_xent_loss(projections[0], projections[1], self.config.temperature)

    def contrastive_update(self) -> Metrics:
        """One step on a batch from the representation buffer (``contrastive_step``) and, with inverse dynamics, on a
        batch of its transitions (none before the buffer holds one)."""
        frames = self.buffer.sample(self.config.contrastive_batch_size).to(self.device)
        views = self.draw_views(frames.shape[0])
        transitions = None if self.inverse_head is None else self.buffer.sample_transitions(self.config.contrastive_batch_size)
        return self.contrastive_step(frames, views, transitions)

    @torch.enable_grad()  # on_step runs inside the collector's no-grad rollout
    def contrastive_step(self, frames: torch.Tensor, views: list[View],
                         transitions: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None) -> Metrics:
        """One step on uint8 ``frames [B, C, H, W]`` seen through the two ``views`` and, with ``transitions`` (uint8
        ``before``, ``actions``, ``after``: ``RepresentationBuffer.sample_transitions``), on ``inverse_dynamics_coef``
        times their inverse-dynamics loss; returns the losses, their accuracies and ``representation_metrics`` of the
        first view."""
        cfg = self.config
        # nt-xent back-propagates through both views; curl through the anchors only
        online_views = views if self.bilinear is None else views[:1]
        positives = None
        if self.bilinear is not None:
            with torch.no_grad():
                self.target_encoder.train(), self.target_head.train()
                step = NO_GRAD_CHUNK if frames.device.type == "cpu" else frames.shape[0]
                # done with slot 0 before the online view takes it
                positives = torch.cat([self.embed(chunk, chunk_view, target=True, slot=0)[1]
                                       for chunk, chunk_view in zip(frames.split(step), chunk_views(views[1], step))])
        chunk_size = cfg.contrastive_chunk_size or frames.shape[0]
        chunks = frames.split(chunk_size)
        self.encoder.train(), self.head.train()
        self.parameters.zero_grad()
        # one spectral-norm power iteration per update; every forward below shares its weights
        with parametrize.cached():
            for module in self.encoder.modules():
                if parametrize.is_parametrized(module, "weight"):
                    module.weight  # computed (and cached) with grad enabled, before any no-grad pass
            if cfg.contrastive_chunk_size is None:
                latents, projections = zip(*(self.embed(frames, view, slot=slot) for slot, view in enumerate(online_views)))
                loss, metrics = self.contrastive_loss(projections, positives)
                # the inverse-dynamics pass below goes back through spectral norm's cached weights too
                loss.backward(retain_graph=transitions is not None and cfg.spectral_norm)
            else:
                with torch.no_grad():
                    embedded = [[self.embed(c, v, slot=0) for c, v in zip(chunks, chunk_views(view, chunk_size))] for view in online_views]
                latents = [torch.cat([latent for latent, _ in parts]) for parts in embedded]
                projections = [torch.cat([projection for _, projection in parts]).requires_grad_() for parts in embedded]
                loss, metrics = self.contrastive_loss(projections, positives)
                loss.backward()
                for z, view in zip(projections, online_views):
                    for chunk, chunk_view, grad in zip(chunks, chunk_views(view, chunk_size), z.grad.split(chunk_size)):
                        # slot 0 again: each chunk's graph is done with it once its backward has run
                        self.embed(chunk, chunk_view, slot=0)[1].backward(grad, retain_graph=True)  # keeps the cached weights' graph
            if transitions is not None:
                metrics = {**metrics, **self.inverse_dynamics_backward(*transitions)}
        self.updates += 1
        warmup = min(1.0, self.updates / cfg.warmup_updates) if cfg.warmup_updates else 1.0
        self.parameters.set_learning_rate(cfg.encoder_learning_rate * warmup)
        self.parameters.step(cfg.encoder_max_grad_norm)
        if self.bilinear is not None:
            self.update_target()
        return {**metrics, **representation_metrics(latents[0].detach(), projections[0].detach())}

    def inverse_dynamics_backward(self, before: torch.Tensor, actions: torch.Tensor, after: torch.Tensor) -> Metrics:
        """Back-propagate ``inverse_dynamics_coef`` times the cross-entropy of the actions ``[B]`` classified from the
        latents of the unaugmented uint8 frames ``before`` and ``after`` ``[B, C, H, W]`` (the latents the particle
        reward measures); returns that loss and its accuracy."""
        pairs = torch.cat([before, after]).to(self.device)
        # frame_buffer slot 2: the contrastive views' slots may still be saved by their graphs
        latents = self.encoder(self.frame_buffer(2, pairs).copy_(pairs).div_(255.0))
        logits = self.inverse_head(*latents.chunk(2))
        actions = actions.to(self.device)
        loss = F.cross_entropy(logits, actions)
        (self.config.inverse_dynamics_coef * loss).backward(retain_graph=True)  # keeps the cached weights' graph
        with torch.no_grad():
            accuracy = (logits.argmax(1) == actions).float().mean()
        return {"apt/inverse_dynamics_loss": loss.detach(), "apt/inverse_dynamics_accuracy": accuracy}

    def update_target(self) -> None:
        """Move the target networks' parameters a ``target_tau`` step towards the online ones; copy their
        buffers (spectral norm's power-iteration vectors, BatchNorm's running statistics)."""
        online = (self.encoder, self.head)
        target = (self.target_encoder, self.target_head)
        ema_update([p for net in target for p in net.parameters()], [p.detach() for net in online for p in net.parameters()],
                   self.config.target_tau)
        with torch.no_grad():
            for target_buffer, online_buffer in zip((b for net in target for b in net.buffers()),
                                                    (b for net in online for b in net.buffers())):
                target_buffer.copy_(online_buffer)

    def scaled(self, frames: torch.Tensor) -> torch.Tensor:
        """uint8 frames ``[B, C, H, W]`` / 255 in ``frame_buffer`` 0, channels-last for the encoder (the values of
        ``frames.float() / 255``; no fresh float copy, and none in the encoder's layout change)."""
        return self.frame_buffer(0, frames).copy_(frames).div_(255.0)

    @torch.no_grad()
    def intrinsic_rewards(self, rollout: RolloutStorage, chunk_steps: int | None = None) -> tuple[torch.Tensor, dict[str, float]]:
        """The particle rewards ``[T, N]`` of the rollout's observations, and metrics; the encoder takes ``chunk_steps``
        steps at a time (default: ``NO_GRAD_CHUNK`` states' worth on CPU, 8 steps elsewhere)."""
        started = time.perf_counter()
        cfg = self.config
        if chunk_steps is None:
            chunk_steps = max(1, NO_GRAD_CHUNK // rollout.num_envs) if self.device.type == "cpu" else 8
        self.encoder.eval()  # also freezes spectral norm's power iteration
        observations = rollout.next_obs if cfg.reward_observation == "next" else lambda start, stop: rollout.obs[start:stop]
        latents = torch.cat([self.encoder(self.scaled(observations(t, min(t + chunk_steps, rollout.num_steps)).flatten(0, 1)))
                             for t in range(0, rollout.num_steps, chunk_steps)])
        if cfg.knn_scope == "environment":  # latents are time-major [T * N, D]: each environment's column alone
            columns = latents.view(rollout.num_steps, rollout.num_envs, -1).transpose(0, 1)
            neighbour_distances = torch.stack([knn_distances(column, cfg.knn_k) for column in columns], 1).flatten(0, 1)
        else:
            neighbour_distances = knn_distances(latents, cfg.knn_k)
        distances = neighbour_distances.mean(1)
        self.distance_stats.update(distances)
        running_mean = self.distance_stats.mean.to(distances.dtype).clamp_min(1e-8)
        intrinsic = particle_reward(neighbour_distances, running_mean, cfg.reward_offset, cfg.knn_clip).view_as(rollout.rewards)
        if self.episode_returns is None:
            self.episode_returns = torch.zeros(rollout.num_envs)
        finished, self.episode_returns = episode_sums(intrinsic.cpu(), (rollout.terminated | rollout.truncated).cpu(), self.episode_returns)
        metrics = {
            "apt/particle_reward": intrinsic.mean().item(),
            "apt/knn_distance_raw": distances.mean().item(),
            "apt/knn_distance_running_mean": running_mean.item(),
            "apt/task_reward": rollout.rewards.mean().item(),
            "apt/buffer_size": float(len(self.buffer)),
            "time/intrinsic_seconds": self._seconds + time.perf_counter() - started,
        }
        if finished.numel():  # the particle return of the training episodes (Atari: lives) that ended in the rollout
            metrics["apt/episode_particle_return"] = finished.mean().item()
        if self._metrics:
            metrics.update({name: torch.stack([m[name] for m in self._metrics]).mean().item() for name in self._metrics[0]})
            metrics["apt/contrastive_updates"] = float(len(self._metrics))
        self._metrics, self._seconds = [], 0.0
        return intrinsic, metrics

    def state_dict(self) -> dict[str, Any]:
        target = {} if self.bilinear is None else {
            "target_encoder": self.target_encoder.state_dict(), "target_head": self.target_head.state_dict(),
            "bilinear": self.bilinear.detach()}
        return {
            **target,
            "encoder": self.encoder.state_dict(),
            "head": self.head.state_dict(),
            **({} if self.inverse_head is None else {"inverse_head": self.inverse_head.state_dict()}),
            "optimizer": self.parameters.state_dict(),
            "buffer": self.buffer.state_dict(),
            "distance_stats": self.distance_stats.state_dict(),
            "env_steps": self.env_steps,
            "vector_steps": self.vector_steps,
            "updates": self.updates,
            "update_credit": self.update_credit,
            **({} if self.episode_returns is None else {"episode_returns": self.episode_returns.clone()}),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.encoder.load_state_dict(state["encoder"])
        self.head.load_state_dict(state["head"])
        if self.inverse_head is not None:
            if "inverse_head" not in state:
                raise ValueError("this APT state has no inverse-dynamics head (it was written with inverse_dynamics_coef 0)")
            self.inverse_head.load_state_dict(state["inverse_head"])
        if self.bilinear is not None:
            self.target_encoder.load_state_dict(state["target_encoder"])
            self.target_head.load_state_dict(state["target_head"])
            with torch.no_grad():
                self.bilinear.copy_(state["bilinear"])
        self.parameters.load_state_dict(state["optimizer"])
        self.buffer.load_state_dict(state["buffer"])
        self.distance_stats.load_state_dict(state["distance_stats"])
        self.env_steps = int(state["env_steps"])
        self.vector_steps = int(state.get("vector_steps", 0))
        self.updates = int(state.get("updates", 0))
        self.update_credit = float(state.get("update_credit", 0.0))
        self.episode_returns = state.get("episode_returns")
