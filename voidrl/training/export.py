"""A policy-gradient agent's acting policy alone, to run without voidrl: ``voidrl export`` writes it as TorchScript
(``torch.jit.load``) or ONNX (onnxruntime).

The exported policy takes a batch ``obs [B, *obs_shape]`` of the observations ``Agent.predict`` takes (float32
vectors, uint8 frames), the run's observation normalisation folded in, and gives the greedy action (``predict``'s with
``deterministic``, Box actions clipped to the action space) and the action distribution's parameters:

- categorical: ``action [B]`` int64, ``log_probs [B, n]`` (normalised logits);
- Gaussian: ``action [B, A]``, ``mean [B, A]``, ``std [B, A]``;
- tanh-Gaussian: ``action [B, A]``, and ``mean``, ``std [B, A]`` of the Gaussian u, action = low + (high - low)
  (tanh(u) + 1) / 2;
- mixture: ``action [B, A]``, ``log_weights``, ``means``, ``stds [B, A, M]`` (M Gaussians per coordinate).

A policy with memory (``--memory lstm``) also takes its LSTM state ``hidden``, ``cell [B, K, H]`` (zeros to begin;
k = 0 the actor's LSTM, k = 1 the critic's where the bodies are separate) and ``episode_start [B]`` (bool: the state
is reset there), and also gives ``next_hidden``, ``next_cell``, to pass with the next observations; a feed-forward
policy's state is empty, and its file takes ``obs`` alone.
"""

from __future__ import annotations

import copy
import importlib.util
import io
import os
import warnings
from typing import TYPE_CHECKING

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from voidrl.configs.choices import EXPORT_FORMATS
from voidrl.io.checkpoint import write_atomically
from voidrl.math.running_stats import standardize
from voidrl.nets.actor_critic import ActorCritic, Distribution, LSTMState
from voidrl.nets.distributions import Categorical, MixtureOfGaussians
from voidrl.registry import ALGORITHMS

if TYPE_CHECKING:
    from voidrl.training.agent import Agent, PolicyInterface


def distribution_parameters(distribution: Distribution) -> dict[str, torch.Tensor]:
    """An action distribution's parameters ``[B, ...]``, by the names the exported policy gives its outputs."""
    if isinstance(distribution, Categorical):
        return {"log_probs": distribution.log_probs}
    if isinstance(distribution, MixtureOfGaussians):
        return {"log_weights": distribution.log_weights, "means": distribution.means, "stds": distribution.stds}
    return {"mean": distribution.mean, "std": distribution.log_std.exp()}  # DiagonalGaussian, TanhGaussian


class ActingPolicy(nn.Module):
    """An actor-critic's acting step: ``obs [B, *obs_shape]`` raw (and, where the policy's state is not empty, its
    ``hidden``, ``cell`` and ``episode_start``) -> the greedy action, the action distribution's parameters (and the
    state after the step: ``next_hidden``, ``next_cell``)."""

    def __init__(self, policy: ActorCritic, interface: PolicyInterface):
        super().__init__()
        self.policy = policy
        self.takes_state = any(policy.state_shape)
        self.input_names = ("obs", "hidden", "cell", "episode_start") if self.takes_state else ("obs",)
        self.observation_space = interface.observation_space
        normalizer = interface.normalizer
        self.normalizes = normalizer is not None
        if self.normalizes:
            self.register_buffer("obs_mean", normalizer.stats.mean.clone())
            self.register_buffer("obs_var", normalizer.stats.var.clone())
            self.clip, self.epsilon = normalizer.clip, normalizer.epsilon
        self.clips_actions = isinstance(interface.action_space, gym.spaces.Box)
        if self.clips_actions:
            self.register_buffer("action_low", torch.as_tensor(interface.action_space.low, dtype=torch.float32))
            self.register_buffer("action_high", torch.as_tensor(interface.action_space.high, dtype=torch.float32))

    def normalized(self, obs: torch.Tensor) -> torch.Tensor:
        return standardize(obs, self.obs_mean, self.obs_var, self.clip, self.epsilon) if self.normalizes else obs

    def outputs(self, distribution: Distribution) -> dict[str, torch.Tensor]:
        """The greedy action and ``distribution``'s parameters, by output name."""
        action = distribution.mode()
        if self.clips_actions:
            action = torch.clamp(action, self.action_low, self.action_high)
        return {"action": action, **distribution_parameters(distribution)}

    def named_outputs(self, obs: torch.Tensor, hidden: torch.Tensor | None = None, cell: torch.Tensor | None = None,
                      episode_start: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        """The outputs by name; without a state, from the initial state at an episode's start."""
        if hidden is None:
            hidden, cell, episode_start = self.initial_inputs(obs.shape[0])
        distribution, _, state = self.policy(self.normalized(obs), LSTMState(hidden, cell), episode_start)
        outputs = self.outputs(distribution)
        return outputs | {"next_hidden": state.hidden, "next_cell": state.cell} if self.takes_state else outputs

    def forward(self, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``named_outputs``' values, in order (what the exported file gives)."""
        return tuple(self.named_outputs(*inputs).values())

    def initial_inputs(self, batch: int) -> tuple[torch.Tensor, ...]:
        """The state inputs of ``batch`` environments at their episodes' start: ``hidden``, ``cell``, ``episode_start``."""
        state = self.policy.initial_state(batch)
        return state.hidden, state.cell, torch.ones(batch, dtype=torch.bool, device=state.hidden.device)

    def example_inputs(self, batch: int) -> tuple[torch.Tensor, ...]:
        """Zero inputs for ``batch`` environments: observations float32, or uint8 where the environments give frames,
        and the initial state where the file takes one."""
        dtype = torch.uint8 if self.observation_space.dtype == np.uint8 else torch.float32
        obs = torch.zeros(batch, *self.observation_space.shape, dtype=dtype)
        return (obs, *self.initial_inputs(batch)) if self.takes_state else (obs,)


def acting_policy(agent: Agent) -> ActingPolicy:
    """``agent``'s acting policy as a module of its own (a copy of the policy on the CPU, its parameters frozen, so that its
    outputs need no ``torch.no_grad``); a ValueError for an agent that acts on Q-values."""
    if not isinstance(agent.policy, ActorCritic):
        exported = ", ".join(name for name in sorted(ALGORITHMS) if not ALGORITHMS.config_class(name).acts_greedily)
        raise ValueError(f"export writes the policies of {exported}; {agent.config.algo} acts greedily on a recurrent "
                         "Q-network that reads its previous action and reward (act with voidrl's Agent.predict)")
    return ActingPolicy(copy.deepcopy(agent.policy).cpu().requires_grad_(False), agent.interface).eval()


def export_policy(agent: Agent, path: str | os.PathLike, export_format: str) -> str:
    """Write ``agent``'s acting policy to ``path`` as ``export_format`` (one of ``EXPORT_FORMATS``); returns its signature,
    e.g. ``obs [B, 4] float32 -> action [B] int64, log_probs [B, 2] float32``."""
    if export_format not in EXPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(EXPORT_FORMATS)}; got {export_format!r}")
    if export_format == "onnx" and importlib.util.find_spec("onnx") is None:
        raise ValueError("format onnx needs the onnx package: install voidrl's export extra (pip install -e '.[export]')")
    module = acting_policy(agent)
    inputs = module.example_inputs(batch=2)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on the LSTM's one-step loop, the ONNX exporter's deprecation
        outputs = module.named_outputs(*inputs)
        if export_format == "torchscript":
            traced = torch.jit.trace(module, inputs)
            write_atomically(path, lambda handle: torch.jit.save(traced, handle))
        else:
            names = [*module.input_names, *outputs]
            onnx_file = io.BytesIO()
            torch.onnx.export(module, inputs, onnx_file, dynamo=False, input_names=list(module.input_names),
                              output_names=list(outputs), dynamic_axes={name: {0: "B"} for name in names})
            write_atomically(path, lambda handle: handle.write(onnx_file.getvalue()))
    return f"{describe(dict(zip(module.input_names, inputs)))} -> {describe(outputs)}"


def describe(tensors: dict[str, torch.Tensor]) -> str:
    """``name [B, ...] dtype`` of each of ``tensors`` (batch first), comma-separated."""
    return ", ".join(f"{name} [{', '.join(['B', *map(str, tensor.shape[1:])])}] {str(tensor.dtype).removeprefix('torch.')}"
                     for name, tensor in tensors.items())
