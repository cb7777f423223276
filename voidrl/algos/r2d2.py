"""Recurrent Replay Distributed DQN (Kapturowski et al., 2019).

Epsilon-greedy actors with an LSTM Q-network store overlapping sequences, each with the recurrent
state it began from; the learner replays them by priority, burns the first steps in to refresh that
state, and regresses Q(s_t, a_t) on n-step double-Q targets through the value rescaling h.
Options: a guide policy that plays each episode's first steps (Jump-Start RL), whose actions DQfD's margin loss can
imitate; a frozen prior policy whose log-probabilities every Q holds; DrQ's random shift of replayed frames.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import torch
from torch import nn
from torch.nn import functional as F

from voidrl.algos.guide import JumpStartGuide, load_frozen_actor_critic
from voidrl.algos.learner import SequenceAgent
from voidrl.algos.roles import ActorCore, Learner, Networks, SequenceBuilder
from voidrl.configs.r2d2 import R2D2Config, RecurrentQConfig
from voidrl.intrinsic.augment import shift_sequences
from voidrl.math import (double_q_bootstrap, large_margin_loss, n_step_targets, prioritised_td_loss, retrace_targets, retrace_traces,
                         sequence_priorities)
from voidrl.math.off_policy import R2D2_RESCALE_EPS
from voidrl.nets.actor_critic import ActorCritic, RecurrentActorCritic
from voidrl.nets.flat import TrainedParameters, adam
from voidrl.nets.recurrent import RecurrentQNetwork, RecurrentState
from voidrl.replay import Replay, SequenceBatch, SequenceReplay
from voidrl.replay.adder import SequenceAdder, StepRecord
from voidrl.replay.dataset import ReplayDataset
from voidrl.replay.rate_limiter import SamplesPerInsert


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

    def __init__(self, policy: RecurrentQNetwork, config: RecurrentQConfig, first_env: int = 0, total_envs: int | None = None,
                 guide: JumpStartGuide | None = None):
        super().__init__(policy, first_env, total_envs)
        self.config = config
        self.epsilons: torch.Tensor | None = None
        """``[N]`` its environments' rates, set at the first step."""
        self.guide = guide
        """Where it plays each episode's first steps (``config.guide``); None: it plays them all."""

    @torch.no_grad()
    def act(self, obs: torch.Tensor, state: RecurrentState, episode_starts: torch.Tensor,
            previous_reward: torch.Tensor) -> tuple[torch.Tensor, RecurrentState]:
        start = self.policy.reset_where(state, episode_starts)
        q, state = self.policy.step(obs, start, previous_reward)
        guided = None if self.guide is None else self.guide.actions(obs, episode_starts)
        action = self.epsilon_greedy(q, (start.hidden, start.cell), guided=guided)
        return action, state._replace(previous_action=action)

    def epsilon_greedy(self, q: torch.Tensor, start_state: tuple[torch.Tensor, ...], extra_rewards: torch.Tensor | None = None,
                       guided: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        """Each environment's greedy action in ``q [N, A]`` or, with its epsilon, a uniform one ``[N]``; records the step
        (``start_state``: what the sequences keep of the state it started from; ``extra_rewards [N, K]``). ``guided``:
        ``(where [N] bool, actions [N])``, the environments a guide plays this step and its deterministic actions."""
        if self.epsilons is None:
            total = self.total_envs or len(q)
            ladder = epsilon_ladder(total, self.config.epsilon_base, self.config.epsilon_alpha)
            self.epsilons = ladder[self.first_env:self.first_env + len(q)]
        epsilon = self.epsilons.to(q.device)
        greedy = q.argmax(-1)
        explore = torch.rand(len(q), device=q.device) < epsilon
        action = torch.where(explore, torch.randint_like(greedy, q.shape[1]), greedy)
        behaviour_probs = epsilon / q.shape[1] + (1.0 - epsilon) * (action == greedy)
        if guided is not None:
            action = torch.where(guided[0], guided[1], action)
            behaviour_probs = torch.where(guided[0], 1.0, behaviour_probs)
        self.records.append(StepRecord(start_state, behaviour_probs, extra_rewards, None if guided is None else guided[0]))
        return action

    def metrics(self) -> dict[str, float]:
        return {} if self.guide is None else {"actors/guide_horizon": self.guide.horizon()}

    def state_dict(self) -> dict[str, Any]:
        """The guide's progress (its schedule's vector steps), which a Ray actor's resumed run needs too."""
        return {} if self.guide is None else {"guide_vector_steps": self.guide.vector_steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.guide is not None and "guide_vector_steps" in state:
            self.guide.vector_steps = state["guide_vector_steps"]

    def episodes_state_dict(self) -> dict[str, Any]:
        """The guide's whole state, its episodes' steps and recurrent state with its progress."""
        return {} if self.guide is None else {"guide": self.guide.state_dict()}

    def load_episodes_state_dict(self, state: dict[str, Any]) -> None:
        if self.guide is not None and "guide" in state:
            self.guide.load_state_dict(state["guide"])


class RecurrentQBuilder(SequenceBuilder):
    """What every recurrent Q agent's builder makes alike: the learner's target copy of the Q-network, sequences of
    ``sequence_length`` every ``sequence_period`` steps, a prioritised replay replayed ``samples_per_insert`` times."""

    def make_target(self, policy: nn.Module, device: torch.device | str) -> nn.Module:
        target = self.make_policy(device).requires_grad_(False)
        target.load_state_dict(policy.state_dict())
        return target

    def make_adder(self) -> SequenceAdder:
        return SequenceAdder(self.config.sequence_length, self.config.sequence_period)

    def make_replay(self) -> SequenceReplay:
        cfg = self.config
        return SequenceReplay(cfg.replay_capacity, cfg.priority_exponent, cfg.importance_exponent, seed=int(torch.randint(2**31, ())),
                              limiter=SamplesPerInsert(cfg.samples_per_insert, cfg.batch_size, cfg.min_replay))


class R2D2Builder(RecurrentQBuilder):
    """R2D2's parts: its Q-network (holding the frozen ``prior``, if any), an epsilon-greedy core (played for by the
    ``guide`` at each episode's start, if any) and ``R2D2Learner``."""

    def make_policy(self, device: torch.device | str) -> RecurrentQNetwork:
        cfg = self.config
        return RecurrentQNetwork(self.obs_shape, self.action_space.n, cfg.network, cfg.hidden_sizes, cfg.lstm_size, cfg.head_size,
                                 cfg.memory, prior=self.make_prior(device), prior_coef=cfg.prior_coef).to(device)

    def make_prior(self, device: torch.device | str) -> ActorCritic | None:
        """The frozen actor-critic of ``prior`` (None without one)."""
        if self.config.prior is None:
            return None
        prior = load_frozen_actor_critic(self.config.prior, self.obs_shape, self.action_space, device, "prior")
        if isinstance(prior, RecurrentActorCritic):
            raise ValueError(f"prior: {self.config.prior!r} is a recurrent policy; a prior reads each step alone, so give a "
                             "feed-forward one (trained without --memory)")
        return prior

    def make_core(self, policy: RecurrentQNetwork, first_env: int, total_envs: int | None) -> EpsilonGreedyCore:
        cfg = self.config
        guide = None
        if cfg.guide is not None:
            guide_policy = load_frozen_actor_critic(cfg.guide, self.obs_shape, self.action_space, next(policy.parameters()).device, "guide")
            guide = JumpStartGuide(guide_policy, cfg.guide_steps, cfg.guide_decay_steps, total_envs)
        return EpsilonGreedyCore(policy, self.config, first_env, total_envs, guide)

    def make_learner(self, networks: Networks, dataset: ReplayDataset, replay: Replay) -> R2D2Learner:
        return R2D2Learner(self.config, networks, dataset, replay)


class RecurrentQLearner(Learner):
    """A recurrent Q agent's learner: Adam on the online Q-network (not a frozen prior), n-step or Retrace targets from
    the target network, copied every ``target_update_period`` steps. The agents differ in ``unroll_start``,
    ``head_values``, ``value_targets``, ``extra_loss`` and ``after_learning``."""

    def __init__(self, config: RecurrentQConfig, networks: Networks, dataset: ReplayDataset, replay: Replay):
        super().__init__(config, networks, dataset, replay)
        self.parameters = TrainedParameters(self.q_parameters(), adam(config.at(0.0).learning_rate, config.adam_eps))

    def advance(self, progress: float) -> dict[str, float]:
        """The learning rate of ``progress`` (a schedule's value now)."""
        now = self.config.at(progress)
        self.parameters.set_learning_rate(now.learning_rate)
        return self.config.schedule_metrics(now)

    def q_parameters(self) -> Iterator[nn.Parameter]:
        """What the TD loss trains (not a frozen prior)."""
        return (parameter for parameter in self.policy.parameters() if parameter.requires_grad)

    def learn(self, sampled: SequenceBatch) -> dict[str, float]:
        """One gradient step of every value head on a batch of sequences; updates their priorities."""
        cfg, batch = self.config, sampled.to(self.device)
        if self.updates == 0:  # the target starts from the online network as the run begins (after any --from)
            self.target.load_state_dict(self.policy.state_dict())
        previous_actions = torch.cat([batch.previous_action.unsqueeze(0), batch.actions])
        previous_rewards = torch.cat([batch.previous_reward.unsqueeze(0), batch.rewards])
        start_state, context = self.unroll_start(batch)
        online_obs, target_obs = self.replayed_views(batch.obs)
        q = self.unroll_with_burn_in(online_obs, previous_actions, previous_rewards, start_state, batch.starts_episode, **context)
        with torch.no_grad():
            target_q, _ = self.target.unroll(target_obs, previous_actions, previous_rewards, start_state, **context)
            targets = self.value_targets(q.detach(), target_q, batch, context)
        heads = self.head_values(q[:-1])
        taken = heads.gather(-1, batch.actions[:, :, None, None].expand(-1, -1, heads.shape[2], 1)).squeeze(-1)
        td = targets - taken
        trained = trained_steps(batch.mask, batch.starts_episode, cfg.burn_in)
        td_loss = prioritised_td_loss(td, trained, batch.weights)
        extra = self.extra_loss(q[:-1], batch, trained)
        grad_norm = self.parameters.minimize(td_loss if extra is None else td_loss + extra[0], cfg.max_grad_norm)
        self.replay.update_priorities(batch.keys, sequence_priorities(td.detach().abs().sum(-1), trained, cfg.priority_eta).cpu())
        metrics = {"train/td_loss": td_loss.item(), "train/grad_norm": grad_norm.item(), **self.after_learning(batch),
                   **({} if extra is None else extra[1])}
        self.updates += 1
        if self.updates % cfg.target_update_period == 0:
            self.target.load_state_dict(self.policy.state_dict())
        names = ["q_taken"] if heads.shape[2] == 1 else ["q_extrinsic_taken", "q_intrinsic_taken"]
        for head, name in enumerate(names):
            metrics[f"train/{name}"] = (taken[..., head].detach() * trained).sum().item() / trained.sum().item()
        return metrics

    def extra_loss(self, q: torch.Tensor, batch: SequenceBatch, trained: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]] | None:
        """A loss added to the TD loss, weighted, and its metrics; None here. ``q [L, B, A]``: the online Q of the
        replayed steps; ``trained [L, B]``: the steps the TD loss trains."""
        return None

    def replayed_views(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """What the online and the target network see of the replayed frames ``obs [L + 1, B, ...]``: the frames
        themselves, or with ``shift_pixels`` each its own random shift of every sequence (DrQ: s and s' augmented apart)."""
        pad = self.config.shift_pixels
        return (shift_sequences(obs, pad), shift_sequences(obs, pad)) if pad else (obs, obs)

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
                "updates": self.updates}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.policy.load_state_dict(state["policy"])
        self.target.load_state_dict(state["target"])
        self.parameters.load_state_dict(state["optimizer"])
        self.updates = state["updates"]


class R2D2Learner(RecurrentQLearner):
    """R2D2's learner, with DQfD's margin loss on the steps its guide played (``guide_margin_coef``)."""

    def extra_loss(self, q: torch.Tensor, batch: SequenceBatch, trained: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]] | None:
        coef = self.config.guide_margin_coef
        if not coef:
            return None
        imitation = self.imitation_loss(q, batch, trained)
        return coef * imitation, {"train/guide_margin_loss": imitation.item(),
                                  "train/guided_share": (trained & batch.guided).sum().item() / trained.sum().item()}

    def imitation_loss(self, q: torch.Tensor, batch: SequenceBatch, trained: torch.Tensor) -> torch.Tensor:
        """DQfD's large-margin loss on the trained steps the guide played (``guide_margin_coef``), importance-weighted
        and averaged over all trained steps ``[L, B]`` as the TD loss is; 0 without it. ``q [L, B, A]``: the online Q."""
        if not self.config.guide_margin_coef:
            return torch.zeros((), device=q.device)
        imitated = (trained & batch.guided) * batch.weights.unsqueeze(0)
        return (imitated * large_margin_loss(q, batch.actions, self.config.guide_margin)).sum() / trained.sum()


class RecurrentQAgent(SequenceAgent):
    """A recurrent Q agent for the training loop: its config and action space checked, then its builder's roles."""

    def __init__(self, config: RecurrentQConfig, obs_shape: tuple[int, ...], action_space: gym.Space, device: torch.device | str = "cpu"):
        config.validate()
        if not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(f"{type(self).__name__.lower()} needs a discrete action space, got {action_space}")
        if config.shift_pixels and len(obs_shape) != 3:
            raise ValueError(f"shift_pixels shifts image observations [C, H, W]; this environment's are {list(obs_shape)}: "
                             f"set shift_pixels to 0")
        super().__init__(config, obs_shape, action_space, device)


class R2D2(RecurrentQAgent):
    config_class = R2D2Config
    builder_class = R2D2Builder
