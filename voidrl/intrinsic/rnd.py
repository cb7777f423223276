"""Random Network Distillation (Burda et al. 2019) as a reward plug-in.

A fixed, randomly initialised target network f embeds each normalised observation; a predictor f^
learns to match it. States seen often are predicted well, new ones badly, so the prediction error
||f^(s') - f(s')||^2 of each transition's true next observation is the intrinsic reward. Observations
are normalised by running per-element statistics (warmed up by random steps before the run, clipped to
[-5, 5]); rewards are divided by the running standard deviation of their discounted sums, which run on
across episode ends. The predictor trains on a random share of each rollout's transitions after its
rewards are computed. With PPO's ``intrinsic_gamma`` these rewards get their own value head and discount.
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch
from torch import nn

from voidrl.configs.rnd import RNDConfig
from voidrl.envs.base import VecEnv
from voidrl.math.returns import discounted_running_sums
from voidrl.math.running_stats import RunningMeanStd
from voidrl.nets.bodies import orthogonal_init
from voidrl.nets.flat import TrainedParameters, adam
from voidrl.rollout.collector import Transition
from voidrl.rollout.minibatches import shuffled_minibatches
from voidrl.rollout.storage import RolloutStorage


def rnd_network(obs_shape: tuple[int, ...], feature_dim: int, hidden_size: int, predictor: bool) -> nn.Sequential:
    """The target (``predictor`` False) or the predictor: the paper's convolutions (LeakyReLU) on frames
    ``[C, H, W]`` (3x3 ones on frames smaller than 36 pixels), two hidden layers on vectors; the predictor
    has two more fully connected layers. Input: normalised float observations ``[B, *obs_shape]``."""
    if len(obs_shape) == 3:
        big = min(obs_shape[1:]) >= 36
        shapes = [(32, 8, 4), (64, 4, 2), (64, 3, 1)] if big else [(32, 3, 1), (64, 3, 1)]
        layers: list[nn.Module] = []
        channels = obs_shape[0]
        for out, kernel, stride in shapes:
            layers += [orthogonal_init(nn.Conv2d(channels, out, kernel, stride)), nn.LeakyReLU()]
            channels = out
        layers.append(nn.Flatten())
        with torch.no_grad():
            flat = nn.Sequential(*layers)(torch.zeros(1, *obs_shape)).shape[1]
        hidden = 512
    elif len(obs_shape) == 1:
        flat, hidden = obs_shape[0], hidden_size
        layers = [orthogonal_init(nn.Linear(flat, hidden)), nn.ReLU()]
        flat = hidden
    else:
        raise ValueError(f"rnd needs vector or [C, H, W] observations, got shape {obs_shape}")
    if predictor:
        layers += [orthogonal_init(nn.Linear(flat, hidden)), nn.ReLU(), orthogonal_init(nn.Linear(hidden, hidden)), nn.ReLU()]
        flat = hidden
    layers.append(orthogonal_init(nn.Linear(flat, feature_dim), 1.0))
    return nn.Sequential(*layers)


class Distillation(nn.Module):
    """RND's two networks, the fixed random ``target`` and the trained ``predictor``, on observations standardised
    by running per-element statistics and clipped to +-``observation_clip`` (the paper's input). Shared by the RND
    plug-in and NGU's life-long novelty; the statistics travel in ``state_dict`` (``get_extra_state``)."""

    def __init__(self, obs_shape: tuple[int, ...], embedding_size: int, hidden_size: int, observation_clip: float):
        super().__init__()
        self.target = rnd_network(obs_shape, embedding_size, hidden_size, predictor=False).requires_grad_(False)
        self.predictor = rnd_network(obs_shape, embedding_size, hidden_size, predictor=True)
        self.observation_clip = observation_clip
        self.observation_stats = RunningMeanStd(tuple(obs_shape))

    def standardize(self, obs: torch.Tensor) -> torch.Tensor:
        """Observations ``[B, ...]`` (any dtype, any device) -> float32 ``(obs - mean) / std``, clipped, on the networks' device."""
        device = self.target[0].weight.device
        mean = self.observation_stats.mean.to(device, torch.float32)
        std = self.observation_stats.var.to(device, torch.float32).sqrt().clamp_min(1e-4)
        return ((obs.to(device).float() - mean) / std).clamp(-self.observation_clip, self.observation_clip)

    def errors(self, obs: torch.Tensor) -> torch.Tensor:
        """The predictor's squared error ``[B]`` (mean over the embedding) on raw observations ``[B, ...]``."""
        standardized = self.standardize(obs)
        return (self.predictor(standardized) - self.target(standardized)).pow(2).mean(-1)

    def get_extra_state(self) -> dict[str, Any]:
        return {"observation_stats": self.observation_stats.state_dict()}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        self.observation_stats.load_state_dict(state["observation_stats"])


class RNDReward:
    """RND's intrinsic reward, its normalisers and its predictor's training."""

    config_class = RNDConfig

    def __init__(self, config: RNDConfig, obs_shape: tuple[int, ...], device: torch.device | str = "cpu"):
        config.validate()
        self.config, self.device = config, torch.device(device)
        self.distillation = Distillation(obs_shape, config.embedding_size, config.vector_hidden_size, config.observation_clip).to(self.device)
        self.parameters = TrainedParameters(self.distillation.predictor.parameters(), adam(config.predictor_learning_rate, 1e-8))
        self.observation_stats = self.distillation.observation_stats
        self.return_stats = RunningMeanStd(())
        self.running_sums: torch.Tensor | None = None
        """``[N]`` each environment's discounted sum of intrinsic rewards so far (across episodes)."""

    @property
    def reward_coefs(self) -> tuple[float, float]:
        return self.config.extrinsic_coef, self.config.intrinsic_coef

    def on_step(self, transition: Transition) -> None:
        """Nothing per step: rewards and training come after each rollout."""

    def warm_up(self, env: VecEnv, seed: int) -> None:
        """Fit the observation statistics to ``warmup_steps`` random-action steps of ``env`` (a fresh run,
        before its first reset for training)."""
        if self.observation_stats.count > 0 or not self.config.observation_warmup_steps:
            return
        space = env.single_action_space
        space.seed(seed)
        self.observation_stats.update(env.reset(seed))
        for _ in range(math.ceil(self.config.observation_warmup_steps / env.num_envs)):
            actions = torch.as_tensor([space.sample() for _ in range(env.num_envs)])
            self.observation_stats.update(env.step(actions).obs)

    def intrinsic_rewards(self, rollout: RolloutStorage) -> tuple[torch.Tensor, dict[str, float]]:
        """Normalised prediction errors ``[T, N]`` of the rollout's true next observations; then the predictor
        trains on them and the statistics take them in. Observations stay in their dtype (uint8 frames) and
        are normalised one minibatch at a time, so the rollout never gets a float copy."""
        started = time.perf_counter()
        T, N = rollout.rewards.shape
        next_obs = rollout.next_obs(0, T).flatten(0, 1)
        chunks = next_obs.split(self.config.predictor_minibatch_size)
        with torch.no_grad():
            errors = torch.cat([self.distillation.errors(chunk) for chunk in chunks]).view(T, N)
        if self.running_sums is None:
            self.running_sums = torch.zeros(N, device=errors.device)
        sums = discounted_running_sums(errors, self.running_sums, self.config.return_gamma)
        self.running_sums = sums[-1]
        self.return_stats.update(sums)
        return_std = math.sqrt(float(self.return_stats.var)) + 1e-8
        rewards = errors / return_std
        predictor_loss = self.train_predictor(next_obs)
        for chunk in chunks:
            self.observation_stats.update(chunk)
        return rewards, {
            "rnd/intrinsic_reward": rewards.mean().item(),
            "rnd/prediction_error": errors.mean().item(),
            "rnd/return_std": return_std,
            "rnd/predictor_loss": predictor_loss,
            "time/intrinsic_seconds": time.perf_counter() - started,
        }

    def train_predictor(self, observations: torch.Tensor) -> float:
        """``predictor_epochs`` passes of minibatch steps over ``observations [B, ...]`` (not yet normalised),
        each on a random ``predictor_update_proportion`` of its minibatch; the mean loss."""
        cfg, losses = self.config, []
        for _ in range(cfg.predictor_epochs):
            for batch in shuffled_minibatches({"obs": observations}, cfg.predictor_minibatch_size):
                kept = torch.rand(batch["obs"].shape[0], device=observations.device) < cfg.predictor_update_proportion
                if not kept.any():
                    continue
                loss = self.distillation.errors(batch["obs"][kept]).mean()
                self.parameters.minimize(loss)
                losses.append(loss.item())
        return sum(losses) / len(losses) if losses else float("nan")

    def state_dict(self) -> dict[str, Any]:
        return {
            "target": self.distillation.target.state_dict(),
            "predictor": self.distillation.predictor.state_dict(),
            "optimizer": self.parameters.state_dict(),
            "observation_stats": self.observation_stats.state_dict(),
            "return_stats": self.return_stats.state_dict(),
            "running_sums": self.running_sums,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.distillation.target.load_state_dict(state["target"])
        self.distillation.predictor.load_state_dict(state["predictor"])
        self.parameters.load_state_dict(state["optimizer"])
        self.observation_stats.load_state_dict(state["observation_stats"])
        self.return_stats.load_state_dict(state["return_stats"])
        self.running_sums = state["running_sums"]
