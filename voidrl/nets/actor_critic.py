"""Actor-critic assembly: a policy head and a value head on shared or separate bodies."""

from __future__ import annotations

import math
from typing import NamedTuple

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from voidrl.configs.choices import CONTINUOUS_POLICIES, STD_PARAMETERIZATIONS
from voidrl.nets.bodies import make_body, orthogonal_init
from voidrl.nets.distributions import (
    Categorical,
    DiagonalGaussian,
    MixtureOfGaussians,
    MultiCategorical,
    TanhGaussian,
    softplus_log_std,
    softplus_std_offset,
)
from voidrl.nets.recurrent import lstm_over_episodes, lstm_step, reset_schedule

POLICY_HEAD_GAIN = 0.01
"""The last policy layer starts 100x smaller than the body's (Andrychowicz et al. 2021)."""
MASKED_LOGIT = -1e9
"""The logit of a choice a ``MultiDiscrete`` dimension does not have: probability exactly 0 in float32, and, unlike
-inf, 0 x logit = 0 in entropies and KL divergences."""

Distribution = Categorical | MultiCategorical | DiagonalGaussian | TanhGaussian | MixtureOfGaussians


def _check_choice(argument: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{argument} must be one of {', '.join(allowed)}; got {value!r}")


class ActorCritic(nn.Module):
    """pi(a|s) and V(s) for one observation and action space.

    Discrete actions get a categorical head. Box actions ``[A]`` get, by ``continuous_policy``:

    - ``"gaussian"``: a diagonal Gaussian on the mean from the head (actions unbounded;
      the environment clips them to the box);
    - ``"tanh_gaussian"``: a Gaussian squashed into the Box's (finite) bounds;
    - ``"mixture"``: Leite's (2022) per-coordinate mixture of ``mixture_modes`` Gaussians.
      It works in normalised units: means are clamped to [-1, 1] whatever the Box's
      bounds, as in Leite (2022).

    The Gaussian policies' std follows ``std_parameterization``: ``"log_std"`` is a
    state-independent parameter starting at ``init_log_std``; ``"softplus"`` is
    state-dependent, softplus(head output + offset) + min std, with the offset chosen so
    the std starts at exp(``init_log_std``) (Andrychowicz et al. 2021). The mixture
    computes its own std and takes neither. With ``shared=False`` the critic has its own
    body, so the value loss never reaches the policy's parameters.
    """

    state_shape: tuple[int, int] = (0, 0)
    """Per environment, the shape ``(K, lstm_size)`` of each of the two tensors of its ``LSTMState`` (K LSTMs);
    ``(0, 0)`` for this feed-forward network, whose state is empty."""

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        action_space: gym.Space,
        network: str = "auto",
        hidden_sizes: tuple[int, ...] = (64, 64),
        shared: bool = False,
        init_log_std: float = 0.0,
        critic_network: str | None = None,
        aux_value: bool = False,
        continuous_policy: str = "gaussian",
        std_parameterization: str = "log_std",
        mixture_modes: int = 3,
        intrinsic_value: bool = False,
        head_inputs: int | None = None,
        bfloat16_bodies: bool = False,
    ):
        """``critic_network`` gives the separate critic another body (default: ``network``);
        ``aux_value`` adds PPG's auxiliary value head on the policy's features; ``intrinsic_value`` a
        second value head beside the critic's, for a reward plug-in's rewards with their own discount;
        ``head_inputs`` the width the heads take where something sits between body and heads (default:
        the body's features); ``bfloat16_bodies`` runs the bodies under bfloat16 autocast (``encode``)."""
        super().__init__()
        self.bfloat16_bodies = bfloat16_bodies
        """``encode`` runs the bodies under torch's bfloat16 autocast and hands the heads float32 features."""
        _check_choice("continuous_policy", continuous_policy, CONTINUOUS_POLICIES)
        _check_choice("std_parameterization", std_parameterization, STD_PARAMETERIZATIONS)
        if shared and critic_network is not None:
            raise ValueError("critic_network needs separate actor and critic (shared=False)")
        self.shared = shared
        self.actor_body = make_body(network, obs_shape, hidden_sizes)
        self.critic_body = None if shared else make_body(critic_network or network, obs_shape, hidden_sizes)
        features = head_inputs or self.actor_body.out_features
        self._add_policy_head(action_space, features, continuous_policy, std_parameterization, init_log_std, mixture_modes)
        critic_features = features if self.critic_body is None or head_inputs else self.critic_body.out_features
        self.value_head = orthogonal_init(nn.Linear(critic_features, 1), 1.0)
        self.intrinsic_value_head = orthogonal_init(nn.Linear(critic_features, 1), 1.0) if intrinsic_value else None
        self.value_heads = 2 if intrinsic_value else 1
        """H, the value heads: the task's, and with ``intrinsic_value`` a reward plug-in's beside it."""
        self.aux_value_head = orthogonal_init(nn.Linear(features, 1), POLICY_HEAD_GAIN) if aux_value else None

    def _add_policy_head(self, action_space: gym.Space, features: int, continuous_policy: str, std_parameterization: str,
                         init_log_std: float, mixture_modes: int) -> None:
        """The policy head on ``features`` inputs for ``action_space`` (``policy_kind``: which distribution its output
        parameterises), with the state-independent ``log_std`` (None where there is none) and the buffers its
        distribution reads."""
        self.log_std = None
        discrete = isinstance(action_space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete))
        if discrete and (continuous_policy != "gaussian" or std_parameterization != "log_std"):
            raise ValueError(
                f"continuous_policy={continuous_policy!r} and std_parameterization={std_parameterization!r} "
                f"need a Box action space; discrete actions take the defaults ('gaussian', 'log_std')"
            )
        if isinstance(action_space, gym.spaces.Discrete):
            self.policy_kind = "categorical"
            self.policy_head = orthogonal_init(nn.Linear(features, int(action_space.n)), POLICY_HEAD_GAIN)
        elif isinstance(action_space, gym.spaces.MultiDiscrete) and len(action_space.shape) == 1:
            self.policy_kind = "multi_categorical"
            choices = torch.as_tensor(action_space.nvec, dtype=torch.long)
            self.choices_shape = (len(choices), int(choices.max()))
            # [D, K]: True where dimension d has fewer than K choices
            self.register_buffer("missing_choices", torch.arange(self.choices_shape[1]) >= choices.unsqueeze(1), persistent=False)
            self.policy_head = orthogonal_init(nn.Linear(features, math.prod(self.choices_shape)), POLICY_HEAD_GAIN)
        elif isinstance(action_space, gym.spaces.Box) and len(action_space.shape) == 1:
            self.policy_kind = continuous_policy
            action_dim = action_space.shape[0]
            if continuous_policy == "mixture":
                if std_parameterization != "log_std":
                    raise ValueError("std_parameterization applies to the Gaussian policies; the mixture computes its own std")
                if mixture_modes < 1:
                    raise ValueError(f"mixture_modes must be at least 1, got {mixture_modes}")
                self.mixture_shape = (action_dim, mixture_modes, 3)
                head_outputs = action_dim * mixture_modes * 3
            elif std_parameterization == "softplus":
                self.std_offset = softplus_std_offset(math.exp(init_log_std))
                head_outputs = 2 * action_dim
            else:
                head_outputs = action_dim
            self.policy_head = orthogonal_init(nn.Linear(features, head_outputs), POLICY_HEAD_GAIN)
            if continuous_policy != "mixture" and std_parameterization == "log_std":
                self.log_std = nn.Parameter(torch.full((action_dim,), float(init_log_std)))
            if continuous_policy == "tanh_gaussian":
                if not (np.isfinite(action_space.low).all() and np.isfinite(action_space.high).all()):
                    raise ValueError(f"tanh_gaussian needs finite action bounds, got {action_space}")
                self.register_buffer("action_low", torch.as_tensor(action_space.low, dtype=torch.float32), persistent=False)
                self.register_buffer("action_high", torch.as_tensor(action_space.high, dtype=torch.float32), persistent=False)
        else:
            raise ValueError(f"unsupported action space {action_space}")

    def _distribution(self, features: torch.Tensor) -> Distribution:
        return self._distribution_of(self.policy_head(features))

    def _distribution_of(self, out: torch.Tensor) -> Distribution:
        """The action distribution the policy head's output ``out [..., head outputs]`` parameterises."""
        if self.policy_kind == "categorical":
            return Categorical(out)
        if self.policy_kind == "multi_categorical":
            return MultiCategorical(out.unflatten(-1, self.choices_shape).masked_fill(self.missing_choices, MASKED_LOGIT))
        if self.policy_kind == "mixture":
            return MixtureOfGaussians.from_head(out.unflatten(-1, self.mixture_shape))
        if self.log_std is None:
            mean, std_pre_activation = out.chunk(2, dim=-1)
            log_std = softplus_log_std(std_pre_activation, self.std_offset)
        else:
            mean, log_std = out, self.log_std
        if self.policy_kind == "tanh_gaussian":
            return TanhGaussian(mean, log_std, self.action_low, self.action_high)
        return DiagonalGaussian(mean, log_std)

    def initial_state(self, batch: int) -> LSTMState:
        """The state before any step of ``batch`` environments: zeros ``[batch, *state_shape]`` (empty here)."""
        zeros = torch.zeros(batch, *self.state_shape, device=self.value_head.weight.device)
        return LSTMState(zeros, zeros.clone())

    def encode(self, obs: torch.Tensor, state: LSTMState, episode_starts: torch.Tensor, actor: bool = True,
               critic: bool = True, final_state: bool = True) -> tuple[torch.Tensor | None, torch.Tensor | None, LSTMState | None]:
        """What the heads read: sequences ``obs [T, B, ...]`` from ``state`` with ``episode_starts [T, B]``, or one step
        ``obs [B, ...]`` with ``episode_starts [B]`` -> (the actor's features ``[T, B, F]`` or ``[B, F]``, the
        critic's, the state after the last step); ``actor`` and ``critic`` choose which are computed (None for the
        other, unless one body serves both); without ``final_state`` a recurrent network does not compute the state
        after a sequence (an update's unroll needs only the features). Feed-forward: the bodies over all
        observations at once, the state passed on untouched."""
        sequences = episode_starts.dim() == 2
        observations = obs.flatten(0, 1) if sequences else obs
        if self.bfloat16_bodies:
            with torch.autocast(observations.device.type, dtype=torch.bfloat16):
                actor_features, critic_features = self._body_features(observations, actor, critic)
            actor_features, critic_features = (None if features is None else features.float()
                                               for features in (actor_features, critic_features))
        else:
            actor_features, critic_features = self._body_features(observations, actor, critic)
        if sequences:
            steps_and_batch = tuple(obs.shape[:2])
            actor_features = None if actor_features is None else actor_features.unflatten(0, steps_and_batch)
            critic_features = None if critic_features is None else critic_features.unflatten(0, steps_and_batch)
        return actor_features, critic_features, state

    def _body_features(self, observations: torch.Tensor, actor: bool, critic: bool) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """The bodies' features ``[B, F]`` of ``observations [B, ...]``, those ``encode`` chooses."""
        actor_features = self.actor_body(observations) if actor or self.critic_body is None else None
        if self.critic_body is None:
            return actor_features, actor_features
        return actor_features, self.critic_body(observations) if critic else None

    def forward(self, obs: torch.Tensor, state: LSTMState, episode_starts: torch.Tensor, final_state: bool = True
                ) -> tuple[Distribution, torch.Tensor, LSTMState | None]:
        """The one call of every actor-critic, for acting and for updates: sequences ``obs [T, B, ...]`` from
        ``state`` (each environment's, before step 0) with ``episode_starts [T, B]`` bool, or one step ``obs [B,
        ...]`` with ``episode_starts [B]`` -> (action distribution over ``[T, B]`` or ``[B]``, values of the same
        shape, the state after the last step: see ``encode`` for ``final_state``)."""
        actor_features, critic_features, state = self.encode(obs, state, episode_starts, final_state=final_state)
        return self._distribution(actor_features), self.value_head(critic_features).squeeze(-1), state

    def forward_heads(self, obs: torch.Tensor, state: LSTMState, episode_starts: torch.Tensor, final_state: bool = True
                      ) -> tuple[Distribution, torch.Tensor, LSTMState | None]:
        """``forward`` with every value head's values: (distribution, values ``[T, B, H]`` or ``[B, H]``, state), H =
        ``value_heads`` (index 0 the task's head, the values ``forward`` gives)."""
        actor_features, critic_features, state = self.encode(obs, state, episode_starts, final_state=final_state)
        return self._distribution(actor_features), self._head_values(critic_features), state

    def _value_head_layers(self) -> tuple[nn.Linear, ...]:
        """The ``value_heads`` layers, the task's first."""
        return (self.value_head, self.intrinsic_value_head)[: self.value_heads]

    def _head_values(self, critic_features: torch.Tensor) -> torch.Tensor:
        """The value heads' outputs ``[..., H]`` on ``critic_features [..., F]``."""
        return torch.cat([head(critic_features) for head in self._value_head_layers()], dim=-1)

    def distribution(self, obs: torch.Tensor, state: LSTMState, episode_starts: torch.Tensor) -> Distribution:
        """The action distribution (``forward``'s shapes); only the actor's part runs."""
        return self._distribution(self.encode(obs, state, episode_starts, critic=False, final_state=False)[0])

    def policy_and_aux_value(self, obs: torch.Tensor, state: LSTMState, episode_starts: torch.Tensor
                             ) -> tuple[Distribution, torch.Tensor]:
        """PPG: the action distribution and the auxiliary value (``forward``'s shapes), both from the policy's own
        features."""
        if self.aux_value_head is None:
            raise RuntimeError("this network has no auxiliary value head (aux_value=False)")
        features = self.encode(obs, state, episode_starts, critic=False, final_state=False)[0]
        return self._distribution(features), self.aux_value_head(features).squeeze(-1)

    def critic_values(self, obs: torch.Tensor, state: LSTMState, episode_starts: torch.Tensor) -> torch.Tensor:
        """Every value head's values ``[..., H]`` (``...`` as ``forward``'s values; index 0 the task's head), from one
        pass of the critic's part only."""
        return self._head_values(self.encode(obs, state, episode_starts, actor=False, final_state=False)[1])

    def bootstrap_values(self, obs: torch.Tensor, state: LSTMState) -> torch.Tensor:
        """Every value head's V ``[B, H]`` of ``obs [B, ...]`` one step on from ``state``, not reset (a truncated
        episode's final observation continues it)."""
        return self.critic_values(obs, state, self._no_starts(obs))

    @staticmethod
    def _no_starts(obs: torch.Tensor) -> torch.Tensor:
        return torch.zeros(obs.shape[0], dtype=torch.bool, device=obs.device)

    def actor_parameters(self) -> list[nn.Parameter]:
        """Parameters of the policy network (body, heads, log-std); disjoint from ``critic_parameters`` when separate."""
        critic = {id(p) for p in self.critic_parameters()}
        return [p for p in self.parameters() if id(p) not in critic]

    def critic_parameters(self) -> list[nn.Parameter]:
        """Parameters only the critic uses (its value heads; empty body part when shared)."""
        params = [p for head in self._value_head_layers() for p in head.parameters()]
        if self.critic_body is not None:
            params += list(self.critic_body.parameters())
        return params

    @torch.no_grad()
    def act(self, obs: torch.Tensor, state: LSTMState, episode_starts: torch.Tensor, previous_reward: torch.Tensor | None = None,
            deterministic: bool = False, generator: torch.Generator | None = None) -> tuple[torch.Tensor, LSTMState]:
        """``voidrl.rollout.memory.Memory``'s act: actions ``[B]`` or ``[B, A]`` for one step ``obs [B, ...]`` and the
        next state (``previous_reward`` is not an input of an actor-critic): the distribution's mode with
        ``deterministic``, else a sample drawn from ``generator`` (torch's global generator where None)."""
        dist, _, state = self(obs, state, episode_starts)
        return dist.mode() if deterministic else dist.sample(generator=generator), state


class LSTMState(NamedTuple):
    """The LSTM state of ``B`` environments: index k of dim 1 is the actor's LSTM (k = 0) or the critic's (k = 1,
    separate bodies only) in a ``RecurrentActorCritic``; empty (``[B, 0, 0]``) in a feed-forward network."""

    hidden: torch.Tensor
    """``[B, K, lstm_size]``."""
    cell: torch.Tensor
    """``[B, K, lstm_size]``."""


class RecurrentActorCritic(ActorCritic):
    """An ``ActorCritic`` with an LSTM between the body's features and the heads: pi(a|h_t), V(h_t), with h_t
    the LSTM's summary of the episode so far (recurrent PPO, e.g. Andrychowicz et al. 2021, Huang et al. 2022).

    With ``shared`` one LSTM serves both heads; otherwise the actor and the critic each have their own, so the
    value loss still never reaches the policy's parameters (PPG's auxiliary value head reads the actor's).
    Every pass takes ``episode_starts``: the state of an environment whose episode begins at a step is zeroed
    before that step, so no information (and no gradient) crosses an episode boundary. On sequences the body and
    the heads run over all ``T x B`` observations at once and the LSTM over all columns in one call, reset steps
    inserted at the episode starts (``lstm_over_episodes``); one step runs ``lstm_step``. A rollout unrolled in the
    update equals the collector's step-by-step acting to float rounding (about 1e-7), not bit for bit. Only
    ``encode`` differs from the feed-forward network's; the intrinsic value head does not apply.
    """

    def __init__(self, obs_shape: tuple[int, ...], action_space: gym.Space, lstm_size: int, network: str = "auto",
                 hidden_sizes: tuple[int, ...] = (64, 64), shared: bool = False, init_log_std: float = 0.0, **options):
        """``options``: ``ActorCritic``'s ``critic_network``, ``aux_value``, ``continuous_policy``,
        ``std_parameterization``, ``mixture_modes``."""
        if options.get("intrinsic_value"):
            raise ValueError("a recurrent actor-critic has no intrinsic value head")
        super().__init__(obs_shape, action_space, network, hidden_sizes, shared, init_log_std, head_inputs=lstm_size, **options)
        self.actor_lstm = nn.LSTM(self.actor_body.out_features, lstm_size)
        self.critic_lstm = None if shared else nn.LSTM(self.critic_body.out_features, lstm_size)
        self.state_shape = (1 if shared else 2, lstm_size)
        self._register_load_state_dict_pre_hook(_rename_lstm_cell_weights)

    def encode(self, obs: torch.Tensor, state: LSTMState, episode_starts: torch.Tensor, actor: bool = True,
               critic: bool = True, final_state: bool = True) -> tuple[torch.Tensor | None, torch.Tensor | None, LSTMState | None]:
        """``ActorCritic.encode`` through the LSTMs: the outputs ``[T, B, lstm_size]`` (or ``[B, lstm_size]``) of the
        chosen LSTMs (shared: the one LSTM either way) and the state after the last step, whose entries for an LSTM not
        run are ``state``'s (None on sequences without ``final_state``). One step runs ``lstm_step``, sequences
        ``lstm_over_episodes``."""
        runs = sorted({k for k, wanted in ((0, actor), (self.state_shape[0] - 1, critic)) if wanted})
        sequences = episode_starts.dim() == 2
        observations = obs.flatten(0, 1) if sequences else obs
        if not sequences and episode_starts.any():  # lstm_over_episodes zeroes a sequence's states itself
            keep = (~episode_starts).to(state.hidden.dtype).view(-1, 1, 1)
            state = LSTMState(state.hidden * keep, state.cell * keep)
        hidden, cell = list(state.hidden.unbind(1)), list(state.cell.unbind(1))
        schedule = reset_schedule(episode_starts) if sequences else None
        outputs = {}
        for k in runs:
            body, lstm = (self.actor_body, self.actor_lstm) if k == 0 else (self.critic_body, self.critic_lstm)
            features = body(observations)
            if sequences:
                outputs[k], ends = lstm_over_episodes(lstm, features.unflatten(0, tuple(episode_starts.shape)), (hidden[k], cell[k]),
                                                      episode_starts, final_state, schedule)
                hidden[k], cell[k] = ends if final_state else (hidden[k], cell[k])
            else:
                hidden[k], cell[k] = lstm_step(lstm, features, (hidden[k], cell[k]))
                outputs[k] = hidden[k]
        last = self.state_shape[0] - 1
        after = LSTMState(torch.stack(hidden, 1), torch.stack(cell, 1)) if final_state or not sequences else None
        return (outputs.get(0) if actor or last == 0 else None, outputs.get(last) if critic or last == 0 else None, after)

    def critic_parameters(self) -> list[nn.Parameter]:
        """The critic's own parameters: ``ActorCritic``'s and the critic's LSTM."""
        own = [] if self.critic_lstm is None else list(self.critic_lstm.parameters())
        return super().critic_parameters() + own


def first_step_inputs(policy: ActorCritic, obs: torch.Tensor) -> tuple[torch.Tensor, LSTMState, torch.Tensor]:
    """``policy``'s inputs for states ``obs [B, ...]`` taken each on its own, as the first step of an episode from the
    initial state: how the algorithms that refuse ``memory lstm`` (REINFORCE, NPG, TRPO) evaluate whole batches."""
    batch = obs.shape[0]
    return obs, policy.initial_state(batch), torch.ones(batch, dtype=torch.bool, device=obs.device)


def build_actor_critic(obs_shape: tuple[int, ...], action_space: gym.Space, memory: str = "none", lstm_size: int = 128,
                       network: str = "auto", hidden_sizes: tuple[int, ...] = (64, 64), shared: bool = False,
                       init_log_std: float = 0.0, **options) -> ActorCritic:
    """The one place a policy-gradient network is chosen: ``RecurrentActorCritic`` for ``memory`` lstm, else
    ``ActorCritic``; ``options`` as ``ActorCritic`` takes them."""
    if memory == "lstm":
        return RecurrentActorCritic(obs_shape, action_space, lstm_size, network, hidden_sizes, shared, init_log_std, **options)
    return ActorCritic(obs_shape, action_space, network, hidden_sizes, shared, init_log_std, **options)


def _rename_lstm_cell_weights(state_dict: dict, prefix: str, *_) -> None:
    """Checkpoints written while the LSTMs were ``nn.LSTMCell`` (before 2026-11-27) name their weights without
    ``nn.LSTM``'s layer suffix; the tensors are the same."""
    for lstm in ("actor_lstm.", "critic_lstm."):
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            if (old := f"{prefix}{lstm}{name}") in state_dict:
                state_dict[f"{old}_l0"] = state_dict.pop(old)
