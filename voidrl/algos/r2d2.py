"""Recurrent Replay Distributed DQN (Kapturowski et al., 2019).

Epsilon-greedy actors with an LSTM Q-network store overlapping sequences, each with the recurrent
state it began from; the learner replays them by priority, burns the first steps in to refresh that
state, and regresses Q(s_t, a_t) on n-step double-Q targets through the value rescaling h.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import torch
from torch import nn
from torch.nn import functional as F

from voidrl.algos.base import validate_discounting
from voidrl.algos.learner import SequenceLearner
from voidrl.algos.roles import ActorCore, SequenceBuilder
from voidrl.math import double_q_bootstrap, n_step_targets, retrace_targets, retrace_traces, sequence_priorities
from voidrl.math.off_policy import R2D2_RESCALE_EPS
from voidrl.nets.bodies import NETWORKS
from voidrl.nets.flat import TrainedParameters, adam
from voidrl.nets.recurrent import RecurrentQNetwork, RecurrentState
from voidrl.replay import SequenceBatch, SequenceReplay
from voidrl.replay.adder import SequenceAdder, StepRecord
from voidrl.replay.rate_limiter import SamplesPerInsert
from voidrl.validation import require_choice, require_positive, require_positive_integers, validate_fraction, validate_hidden_sizes


@dataclass
class R2D2Config:
    """R2D2 hyperparameters. Defaults are the paper's (Atari), except the replay's size."""

    num_steps: int = 40
    """Vector steps collected between two training phases."""
    sequence_length: int = 80
    """Steps per replayed sequence."""
    burn_in: int = 40
    """First steps of a sequence unrolled only to refresh its stored recurrent state (no loss, no gradient);
    a sequence that starts an episode has an exact state and learns from every step."""
    sequence_period: int = 40
    """Steps between the starts of consecutive sequences of an episode (they overlap by length - period)."""
    n_step: int = 5
    """Steps of reward before bootstrapping."""
    gamma: float = 0.997
    """Discount factor."""
    td_target: str = "n-step"
    """The TD target (``--target`` before): n-step (double-Q n-step returns, R2D2) or retrace (Retrace(lambda)
    towards the greedy policy, with traces cut where the actor took another action: off-policy correct at any n)."""
    trace_lambda: float = 0.95
    """Retrace's lambda."""
    value_rescaling: bool = True
    """Targets through h(x) = sign(x)(sqrt(|x| + 1) - 1) + 1e-3 x and its inverse (no reward clipping)."""
    learning_rate: float = 1e-4
    """Adam learning rate."""
    adam_eps: float = 1e-3
    """Adam's epsilon."""
    max_grad_norm: float | None = 40.0
    """Clip the gradient norm to this; None disables."""
    batch_size: int = 64
    """Sequences per gradient step."""
    target_update_period: int = 2500
    """Gradient steps between copies of the online network into the target network."""
    replay_capacity: int = 4000
    """Sequences the replay keeps (the paper: 100,000, about 4M steps)."""
    min_replay: int = 256
    """Sequences stored before the first gradient step."""
    samples_per_insert: float = 4.0
    """Times each stored sequence is replayed on average: gradient steps = inserted x this / batch_size."""
    priority_exponent: float = 0.9
    """alpha: sequences are sampled with probability proportional to priority^alpha."""
    importance_exponent: float = 0.6
    """beta of the importance weights (size P(i))^-beta."""
    priority_eta: float = 0.9
    """A sequence's priority: eta max|delta| + (1 - eta) mean|delta| over its trained steps."""
    epsilon_base: float = 0.4
    """Environment i of N explores with epsilon_base^(1 + epsilon_alpha i / (N - 1))."""
    epsilon_alpha: float = 7.0
    """See epsilon_base."""
    network: str = "auto"
    """Torso: auto, mlp, nature, dqn2013, minatar, apt (as the policy-gradient algorithms)."""
    hidden_sizes: tuple[int, ...] = (64, 64)
    """Hidden layer sizes of the mlp torso."""
    lstm_size: int = 512
    """LSTM units."""
    head_size: int = 512
    """Hidden units of each duelling stream."""
    memory: str = "lstm"
    """lstm, or none: a feed-forward layer of the same width in the LSTM's place (the memoryless ablation)."""
    save_replay: bool = False
    """Keep the replay beside the checkpoint, in RUN_DIR/replay/ (exact resume; large on Atari: 84 x 84 x 85 bytes = 0.60 MB
    of frames a sequence), each checkpoint adding what arrived since the one before."""

    def validate(self) -> None:
        require_positive_integers(self, ("num_steps", "sequence_length", "sequence_period", "n_step", "batch_size",
                                         "target_update_period", "replay_capacity", "min_replay", "lstm_size", "head_size"))
        require_positive(self, ("learning_rate", "adam_eps", "max_grad_norm", "samples_per_insert", "epsilon_alpha"))
        require_choice(self, "network", NETWORKS)
        require_choice(self, "memory", ("lstm", "none"))
        require_choice(self, "td_target", ("n-step", "retrace"))
        validate_hidden_sizes(self.hidden_sizes)
        validate_discounting(self)
        for name in ("priority_eta", "epsilon_base"):
            validate_fraction(name, getattr(self, name), 0.0, 1.0 + 1e-9)
        for name in ("priority_exponent", "importance_exponent", "trace_lambda"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {getattr(self, name)}")
        if self.sequence_period > self.sequence_length:
            raise ValueError(f"sequence_period must be at most sequence_length ({self.sequence_length}), got {self.sequence_period}")
        if not 0 <= self.burn_in <= self.sequence_length - self.sequence_period:
            raise ValueError(f"burn_in must lie in [0, sequence_length - sequence_period = "
                             f"{self.sequence_length - self.sequence_period}] so every sequence has steps to learn from, got {self.burn_in}")
        if self.min_replay > self.replay_capacity:
            raise ValueError(f"min_replay must be at most replay_capacity ({self.replay_capacity}), got {self.min_replay}")


PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "cartpole": {
        # Small and fast for CartPole-v1 and its partially observable variant.
        "env": {"num_envs": 4},
        "algo_config": {"num_steps": 20, "sequence_length": 20, "burn_in": 10, "sequence_period": 10, "n_step": 3,
                        "gamma": 0.99, "learning_rate": 1e-3, "batch_size": 32, "target_update_period": 100,
                        "replay_capacity": 2000, "min_replay": 64, "samples_per_insert": 16.0, "lstm_size": 64, "head_size": 64},
    },
    "minatar": {
        # MinAtar's 10 x 10 frames: its small CNN, 128-unit LSTM and heads, 40-step sequences (20 burn-in);
        # 10,000 sequences (about 200k steps). Each is replayed 32 times: 32 trained transitions per environment
        # step, the ratio of DQN with the MinAtar paper's settings; a target copy every 250 updates (5,000 steps).
        # On Breakout (seed 0, 200k steps) the last 100 training episodes averaged 7.67 and the greedy policy 11.6,
        # where 4 replays and a copy every 1,000 updates (3 copies in 500k steps) averaged 2.64 at 200k
        # (benchmarks/RESULTS.md, "R2D2's minatar preset"). Adam's epsilon is 1e-6 as in the minigrid preset.
        "env": {"num_envs": 16},
        "algo_config": {"network": "minatar", "num_steps": 20, "sequence_length": 40, "burn_in": 20, "sequence_period": 20,
                        "gamma": 0.99, "learning_rate": 2.5e-4, "adam_eps": 1e-6, "batch_size": 32, "samples_per_insert": 32.0,
                        "target_update_period": 250, "replay_capacity": 10000, "min_replay": 500, "lstm_size": 128, "head_size": 128},
    },
    "minigrid": {
        # MiniGrid's 7 x 7 one-hot view: the MinAtar CNN, 128-unit LSTM and heads, 40-step sequences
        # (20 burn-in), 16 environments. Each sequence is replayed 8 times and the target copied every
        # 100 updates: about 5,800 updates and 58 copies in 500k steps (at 1,000 a 500k-step run copied
        # its target only 3 times). Adam's epsilon is 1e-6, not the paper's 1e-3: with one reward below 1
        # per solved episode the whole gradient's norm was 0.002-0.005, so an epsilon of 1e-3 dwarfs Adam's
        # second-moment term and shrinks every step. On MiniGrid-Empty-5x5 at 1e-3 R2D2 had not solved it by
        # 96k steps (seed 0); at 1e-6 it took the optimal 6-step path on seeds 0 and 1 (from 87k and 28k).
        "env": {"num_envs": 16},
        "algo_config": {"network": "minatar", "num_steps": 20, "sequence_length": 40, "burn_in": 20, "sequence_period": 20,
                        "learning_rate": 2.5e-4, "adam_eps": 1e-6, "batch_size": 32, "target_update_period": 100, "samples_per_insert": 8.0,
                        "replay_capacity": 10000, "min_replay": 500, "lstm_size": 128, "head_size": 128},
    },
}


def trained_steps(mask: torch.Tensor, starts_episode: torch.Tensor, burn_in: int) -> torch.Tensor:
    """``[L, B]`` bool: the valid steps (``mask [L, B]``) after the burn-in, or all valid steps of a sequence
    that starts an episode (``starts_episode [B]``)."""
    past_burn_in = torch.arange(mask.shape[0], device=mask.device).unsqueeze(1) >= burn_in
    return mask & (past_burn_in | starts_episode.unsqueeze(0))


def epsilon_ladder(count: int, base: float, alpha: float) -> torch.Tensor:
    """``[count]`` exploration rates eps_i = base^(1 + alpha i / (count - 1)), one per environment (actor)."""
    share = torch.arange(count, dtype=torch.float64) / max(count - 1, 1)
    return (base ** (1.0 + alpha * share)).float()


class EpsilonGreedyCore(ActorCore):
    """R2D2's actor core: each environment takes the greedy action of the Q-network or, with its own probability
    epsilon, a uniform one; each step records the state it started from and mu(a|s). Environment i of all the
    actors' explores at rate i of one ladder over all of them."""

    def __init__(self, policy: RecurrentQNetwork, config: R2D2Config, first_env: int = 0, total_envs: int | None = None):
        super().__init__(policy, first_env, total_envs)
        self.config = config
        self.epsilons: torch.Tensor | None = None
        """``[N]`` its environments' rates, set at the first step."""

    @torch.no_grad()
    def act(self, obs: torch.Tensor, state: RecurrentState, episode_start: torch.Tensor,
            previous_reward: torch.Tensor) -> tuple[torch.Tensor, RecurrentState]:
        start = self.policy.reset_where(state, episode_start)
        q, state = self.policy.step(obs, start, previous_reward)
        action = self.epsilon_greedy(q, (start.hidden, start.cell))
        return action, state._replace(previous_action=action)

    def epsilon_greedy(self, q: torch.Tensor, start_state: tuple[torch.Tensor, ...], extra_rewards: torch.Tensor | None = None) -> torch.Tensor:
        """Each environment's greedy action in ``q [N, A]`` or, with its epsilon, a uniform one ``[N]``; records the step
        (``start_state``: what the sequences keep of the state it started from; ``extra_rewards [N, K]``)."""
        if self.epsilons is None:
            total = self.total_envs or len(q)
            ladder = epsilon_ladder(total, self.config.epsilon_base, self.config.epsilon_alpha)
            self.epsilons = ladder[self.first_env:self.first_env + len(q)]
        epsilon = self.epsilons.to(q.device)
        greedy = q.argmax(-1)
        explore = torch.rand(len(q), device=q.device) < epsilon
        action = torch.where(explore, torch.randint_like(greedy, q.shape[1]), greedy)
        behaviour_probs = epsilon / q.shape[1] + (1.0 - epsilon) * (action == greedy)
        self.records.append(StepRecord(start_state, behaviour_probs, extra_rewards))
        return action


class R2D2Builder(SequenceBuilder):
    """R2D2's parts: its Q-network, an epsilon-greedy core, sequences of ``sequence_length`` every ``sequence_period``
    steps, a prioritised replay replayed ``samples_per_insert`` times."""

    def make_policy(self, device: torch.device | str) -> RecurrentQNetwork:
        cfg = self.config
        return RecurrentQNetwork(self.obs_shape, self.action_space.n, cfg.network, cfg.hidden_sizes, cfg.lstm_size, cfg.head_size,
                                 cfg.memory).to(device)

    def make_core(self, policy: RecurrentQNetwork, first_env: int, total_envs: int | None) -> EpsilonGreedyCore:
        return EpsilonGreedyCore(policy, self.config, first_env, total_envs)

    def make_adder(self) -> SequenceAdder:
        return SequenceAdder(self.config.sequence_length, self.config.sequence_period)

    def make_replay(self) -> SequenceReplay:
        cfg = self.config
        return SequenceReplay(cfg.replay_capacity, cfg.priority_exponent, cfg.importance_exponent, seed=int(torch.randint(2**31, ())),
                              limiter=SamplesPerInsert(cfg.samples_per_insert, cfg.batch_size, cfg.min_replay))


class R2D2(SequenceLearner):
    config_class = R2D2Config
    presets = PRESETS
    builder_class = R2D2Builder

    def __init__(self, config: R2D2Config, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str = "cpu"):
        config.validate()
        if not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(f"{type(self).__name__.lower()} needs a discrete action space, got {action_space}")
        self.config, self.num_steps, self.device = config, config.num_steps, torch.device(device)
        self.builder = self.builder_class(config, obs_shape, action_space)
        self.policy = self.builder.make_policy(device)
        self.target = self.builder.make_policy(device).requires_grad_(False)
        self.target.load_state_dict(self.policy.state_dict())
        self.parameters = TrainedParameters(self.q_parameters(), adam(config.learning_rate, config.adam_eps))
        self.replay = self.builder.make_replay()
        self.actor = self.make_local_actor()
        self.updates = 0

    def q_parameters(self) -> Iterator[nn.Parameter]:
        """What the TD loss trains."""
        return self.policy.parameters()

    def learn(self, sampled: SequenceBatch) -> dict[str, float]:
        """One gradient step of every value head on a batch of sequences; updates their priorities. The family's
        members differ in ``unroll_start``, ``head_values``, ``value_targets`` and ``after_learning``."""
        cfg, batch = self.config, sampled.to(self.device)
        if self.updates == 0:  # the target starts from the online network as the run begins (after any --from)
            self.target.load_state_dict(self.policy.state_dict())
        previous_actions = torch.cat([batch.previous_action.unsqueeze(0), batch.actions])
        previous_rewards = torch.cat([batch.previous_reward.unsqueeze(0), batch.rewards])
        start_state, context = self.unroll_start(batch)
        q = self.unroll_with_burn_in(batch.obs, previous_actions, previous_rewards, start_state, batch.starts_episode, **context)
        with torch.no_grad():
            target_q, _ = self.target.unroll(batch.obs, previous_actions, previous_rewards, start_state, **context)
            targets = self.value_targets(q.detach(), target_q, batch, context)
        heads = self.head_values(q[:-1])
        taken = heads.gather(-1, batch.actions[:, :, None, None].expand(-1, -1, heads.shape[2], 1)).squeeze(-1)
        td = targets - taken
        trained = trained_steps(batch.mask, batch.starts_episode, cfg.burn_in)
        loss = 0.5 * ((batch.weights.unsqueeze(0) * trained).unsqueeze(-1) * td.pow(2)).sum() / trained.sum()
        grad_norm = self.parameters.minimize(loss, cfg.max_grad_norm)
        self.replay.update_priorities(batch.keys, sequence_priorities(td.detach().abs().sum(-1), trained, cfg.priority_eta).cpu())
        metrics = {"train/td_loss": loss.item(), "train/grad_norm": grad_norm.item(), **self.after_learning(batch)}
        self.updates += 1
        if self.updates % cfg.target_update_period == 0:
            self.target.load_state_dict(self.policy.state_dict())
        names = ["q_taken"] if heads.shape[2] == 1 else ["q_extrinsic_taken", "q_intrinsic_taken"]
        for head, name in enumerate(names):
            metrics[f"train/{name}"] = (taken[..., head].detach() * trained).sum().item() / trained.sum().item()
        return metrics

    def unroll_start(self, batch: SequenceBatch) -> tuple[tuple[torch.Tensor, ...], dict[str, Any]]:
        """The LSTM state ``(h, c)`` each sequence starts from, and what else every unroll takes (nothing here)."""
        return batch.start_state, {}

    def head_values(self, q: torch.Tensor) -> torch.Tensor:
        """The online Q ``[L, B, A]`` as values per head ``[L, B, H, A]`` (one head here)."""
        return q.unsqueeze(2)

    def value_targets(self, online_q: torch.Tensor, target_q: torch.Tensor, batch: SequenceBatch,
                      context: dict[str, Any]) -> torch.Tensor:
        """``[L, B, H]`` regression targets of each head, from the online Q ``[L + 1, B, A]`` (greedy actions) and the
        target network's ``[L + 1, B, A]`` (bootstraps)."""
        return self.targets(online_q, target_q, batch.rewards, self.config.gamma, batch).unsqueeze(-1)

    def after_learning(self, batch: SequenceBatch) -> dict[str, float]:
        """What else one learning step trains on ``batch``, after the value heads; its metrics (nothing here)."""
        return {}

    def targets(self, online_q: torch.Tensor, target_q: torch.Tensor, rewards: torch.Tensor, gamma: float | torch.Tensor,
                batch: SequenceBatch) -> torch.Tensor:
        """``[L, B]`` regression targets of ``rewards [L, B]`` discounted by ``gamma`` (a number or ``[B]``):
        the target network's Q ``[L + 1, B, A]`` bootstraps, the online network's (``online_q``, the same
        shape) picks the greedy actions."""
        cfg = self.config
        rescale_eps = R2D2_RESCALE_EPS if cfg.value_rescaling else None
        if cfg.td_target == "n-step":
            next_values = double_q_bootstrap(online_q[1:], target_q[1:])
            return n_step_targets(rewards, next_values, batch.terminated, batch.truncated, gamma, cfg.n_step, rescale_eps)
        greedy = F.one_hot(online_q.argmax(-1), online_q.shape[-1]).to(target_q.dtype)  # pi: greedy in the online Q
        actions = batch.actions.unsqueeze(-1)
        behaviour = batch.behaviour_probs.clamp(min=1e-8)  # the padding's 0 would make 0/0
        traces = retrace_traces(greedy[:-1].gather(-1, actions).squeeze(-1), behaviour, cfg.trace_lambda)
        taken_q = target_q[:-1].gather(-1, actions).squeeze(-1)
        return retrace_targets(rewards, taken_q, target_q[1:], greedy[1:], traces, batch.terminated, batch.truncated,
                               gamma, rescale_eps)

    def unroll_with_burn_in(self, obs: torch.Tensor, previous_actions: torch.Tensor, previous_rewards: torch.Tensor,
                            start: tuple[torch.Tensor, torch.Tensor], starts_episode: torch.Tensor, **context: torch.Tensor) -> torch.Tensor:
        """Online Q ``[L + 1, B, ...]``. The burn-in steps refresh the stored state without gradient, except in
        sequences that start an episode (their stored state is exact and their burn-in steps are trained).
        ``context`` goes to every unroll (NGU's family member j)."""
        burn_in = self.config.burn_in
        if not burn_in:
            return self.policy.unroll(obs, previous_actions, previous_rewards, start, **context)[0]
        early, (h, c) = self.policy.unroll(obs[:burn_in], previous_actions[:burn_in], previous_rewards[:burn_in], start, **context)
        keep_gradient = starts_episode.unsqueeze(-1)
        h, c = torch.where(keep_gradient, h, h.detach()), torch.where(keep_gradient, c, c.detach())
        late, _ = self.policy.unroll(obs[burn_in:], previous_actions[burn_in:], previous_rewards[burn_in:], (h, c), **context)
        return torch.cat([early, late])

    def state_dict(self) -> dict[str, Any]:
        return {"policy": self.policy.state_dict(), "target": self.target.state_dict(), "optimizer": self.parameters.state_dict(),
                "updates": self.updates, **self.roles_state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.policy.load_state_dict(state["policy"])
        self.target.load_state_dict(state["target"])
        self.parameters.load_state_dict(state["optimizer"])
        self.updates = state["updates"]
        self.load_roles_state_dict(state)
