"""Never Give Up (Badia et al., 2020a): R2D2 with a family of exploring policies.

Policy j of N learns the reward r_e + beta_j r_i with discount gamma_j, from beta_0 = 0 (the task
alone, gamma_max) to beta_{N-1} = beta (the most exploratory, gamma_min); one network serves them all,
told j as a one-hot input beside the previous action, extrinsic and intrinsic rewards. Each actor
(here: each environment) keeps a fixed j. r_i is the intrinsic reward of ``voidrl.intrinsic.ngu``:
episodic novelty in a controllable embedding, modulated by RND's life-long novelty. The learner
replays sequences as R2D2 does (transformed Retrace by default) and trains the embedding by inverse
dynamics and the RND predictor on the same sequences, with their own optimiser.

With ``split_values`` the extrinsic and intrinsic values get separate networks, combined as
h(h^-1(q_e) + beta_j h^-1(q_i)); with ``meta_controller="bandit"`` each actor picks j at each episode
start with a sliding-window UCB bandit: Agent57 (``voidrl.algos.agent57``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, NamedTuple

import torch
from torch import nn
from torch.nn import functional as F

from voidrl.algos.algorithm import PolicyFamily
from voidrl.algos.meta_controller import SlidingWindowUCB, best_arm
from voidrl.algos.r2d2 import EpsilonGreedyCore, RecurrentQAgent, RecurrentQBuilder, RecurrentQLearner
from voidrl.algos.roles import Networks
from voidrl.configs.ngu import NGUConfig
from voidrl.envs.base import Step
from voidrl.intrinsic.ngu import EpisodicMemory, NoveltyModule
from voidrl.math import inverse_value_rescale, value_rescale
from voidrl.math.off_policy import R2D2_RESCALE_EPS
from voidrl.nets.flat import TrainedParameters, adam
from voidrl.nets.recurrent import RecurrentQNetwork
from voidrl.replay import Replay, SequenceBatch
from voidrl.replay.dataset import ReplayDataset


def policy_family(count: int, intrinsic_coef: float, gamma_max: float, gamma_min: float) -> tuple[torch.Tensor, torch.Tensor]:
    """NGU's ``[count]`` (beta_j, gamma_j): beta_0 = 0, beta_{N-1} = beta, a sigmoid between,
    beta_j = beta sigmoid(10 (2j - (N - 2)) / (N - 2)); 1 - gamma_j log-spaced from 1 - gamma_max (j = 0)
    to 1 - gamma_min (j = N - 1). A family of one is the exploratory policy (beta, gamma_max)."""
    if count == 1:
        return torch.tensor([intrinsic_coef]), torch.tensor([gamma_max])
    j = torch.arange(count, dtype=torch.float64)
    if count == 2:
        betas = torch.tensor([0.0, intrinsic_coef], dtype=torch.float64)
    else:
        betas = intrinsic_coef * torch.sigmoid(10.0 * (2.0 * j - (count - 2)) / (count - 2))
        betas[0], betas[-1] = 0.0, intrinsic_coef
    log_gaps = ((count - 1 - j) * math.log(1.0 - gamma_max) + j * math.log(1.0 - gamma_min)) / (count - 1)
    return betas.float(), (1.0 - torch.exp(log_gaps)).float()


class NGUState(NamedTuple):
    """What the family's network carries between steps of ``B`` environments."""

    hidden: torch.Tensor
    """``[B, heads x lstm_size]``: each head's LSTM state side by side."""
    cell: torch.Tensor
    """``[B, heads x lstm_size]``."""
    previous_action: torch.Tensor
    """``[B]`` long."""
    previous_intrinsic: torch.Tensor
    """``[B]``: the intrinsic reward of the previous step (0 at an episode's start)."""
    member: torch.Tensor
    """``[B]`` long: j, the family member each environment follows this episode."""
    memory: EpisodicMemory
    """Each environment's embeddings of its episode so far."""


class NGUNetwork(nn.Module):
    """The family's Q: one RecurrentQNetwork per value head (one, or extrinsic and intrinsic), each fed
    the observation, a_{t-1}, (r_e, r_i)_{t-1} and one-hot j; the reward networks in ``novelty``; the
    family's ``betas`` and ``gammas`` as buffers. ``act`` (evaluation) follows one member, j = 0 (the task's
    policy) unless told otherwise, with the same intrinsic-reward inputs as in training."""

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, config: NGUConfig):
        super().__init__()
        heads = 2 if config.split_values else 1
        self.heads = nn.ModuleList(
            RecurrentQNetwork(obs_shape, num_actions, config.network, config.hidden_sizes, config.lstm_size, config.head_size,
                              config.memory, reward_inputs=2, context_size=config.num_policies) for _ in range(heads))
        self.novelty = NoveltyModule(obs_shape, num_actions, config.network, config.hidden_sizes, config.controllable_embedding_size,
                                     config.rnd_embedding_size, episodic_neighbours=config.episodic_neighbours, kernel_eps=config.kernel_eps,
                                     pseudo_count=config.pseudo_count, cluster_distance=config.cluster_distance,
                                     max_similarity=config.max_similarity, max_modulation=config.max_modulation)
        betas, gammas = policy_family(config.num_policies, config.intrinsic_coef, config.gamma, config.gamma_min)
        self.register_buffer("betas", betas)
        self.register_buffer("gammas", gammas)
        self.lstm_size, self.num_policies, self.memory_capacity = config.lstm_size, config.num_policies, config.episodic_memory
        self.rescale_eps = R2D2_RESCALE_EPS if config.value_rescaling else None

    def initial_state(self, batch: int) -> NGUState:
        device = self.betas.device
        zeros = torch.zeros(batch, len(self.heads) * self.lstm_size, device=device)
        index = torch.zeros(batch, dtype=torch.long, device=device)
        memory = EpisodicMemory(batch, self.memory_capacity, self.novelty.embedding_size, device)
        return NGUState(zeros, zeros.clone(), index, torch.zeros(batch, device=device), index.clone(), memory)

    def unroll(self, obs: torch.Tensor, previous_actions: torch.Tensor, previous_rewards: torch.Tensor,
               hidden: tuple[torch.Tensor, torch.Tensor], member: torch.Tensor
               ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """``obs [T, B, ...]``, ``previous_actions [T, B]``, ``previous_rewards [T, B, 2]`` (extrinsic,
        intrinsic), ``hidden`` each ``[B, heads x lstm_size]``, ``member [B]`` -> Q ``[T, B, heads, A]``
        (rescaled values where value rescaling is on) and the state after step T - 1."""
        context = F.one_hot(member, self.num_policies)
        outputs, hs, cs = [], [], []
        for head, h, c in zip(self.heads, hidden[0].chunk(len(self.heads), -1), hidden[1].chunk(len(self.heads), -1)):
            q, (h, c) = head.unroll(obs, previous_actions, previous_rewards, (h, c), context)
            outputs.append(q)
            hs.append(h)
            cs.append(c)
        return torch.stack(outputs, dim=2), (torch.cat(hs, -1), torch.cat(cs, -1))

    def combine(self, q: torch.Tensor, member: torch.Tensor) -> torch.Tensor:
        """The values policy j acts on, ``[..., B, A]`` from ``q [..., B, heads, A]``: the one head, or
        q_e + beta_j q_i in raw value space (h(h^-1(q_e) + beta_j h^-1(q_i)) with value rescaling)."""
        if len(self.heads) == 1:
            return q[..., 0, :]
        beta = self.betas[member].unsqueeze(-1)
        extrinsic, intrinsic = q[..., 0, :], q[..., 1, :]
        if self.rescale_eps is None:
            return extrinsic + beta * intrinsic
        raw = inverse_value_rescale(extrinsic, self.rescale_eps) + beta * inverse_value_rescale(intrinsic, self.rescale_eps)
        return value_rescale(raw, self.rescale_eps)

    def reset_where(self, state: NGUState, episode_starts: torch.Tensor) -> NGUState:
        """``state`` with the environments whose episode begins zeroed and their memories emptied (their
        ``member`` is the caller's to choose)."""
        keep = (~episode_starts).to(state.hidden.dtype)
        state.memory.clear(episode_starts)
        return state._replace(hidden=state.hidden * keep.unsqueeze(-1), cell=state.cell * keep.unsqueeze(-1),
                              previous_action=torch.where(episode_starts, 0, state.previous_action),
                              previous_intrinsic=state.previous_intrinsic * keep)

    def step(self, obs: torch.Tensor, state: NGUState, previous_reward: torch.Tensor, learn_statistics: bool
             ) -> tuple[torch.Tensor, dict[str, torch.Tensor], NGUState]:
        """One step of ``B`` environments: the acting values ``[B, A]``, the intrinsic reward of ``obs`` and
        its parts (``NoveltyModule.rewards``), and the state after it."""
        rewards = self.novelty.rewards(obs, state.memory, learn_statistics)
        previous = torch.stack([previous_reward.to(state.hidden.dtype), state.previous_intrinsic], dim=-1)
        q, (h, c) = self.unroll(obs.unsqueeze(0), state.previous_action.unsqueeze(0), previous.unsqueeze(0),
                                (state.hidden, state.cell), state.member)
        state = state._replace(hidden=h, cell=c, previous_intrinsic=rewards["intrinsic"])
        return self.combine(q.squeeze(0), state.member), rewards, state

    @torch.no_grad()
    def act(self, obs: torch.Tensor, state: NGUState, episode_starts: torch.Tensor, previous_reward: torch.Tensor,
            member: int = 0) -> tuple[torch.Tensor, NGUState]:
        """Greedy actions ``[B]`` of family member j = ``member`` (0: beta = 0, the task's policy) and the
        next state (evaluation; statistics stay fixed)."""
        if not 0 <= member < self.num_policies:
            raise ValueError(f"member must be in 0..{self.num_policies - 1} (the policy family's size is {self.num_policies}), got {member}")
        start = self.reset_where(state, episode_starts)
        start = start._replace(member=torch.where(episode_starts, member, start.member))
        q, _, state = self.step(obs, start, previous_reward, learn_statistics=False)
        action = q.argmax(dim=-1)
        return action, state._replace(previous_action=action)


class FamilyCore(EpsilonGreedyCore):
    """NGU's actor core: epsilon-greedy in the values of each environment's policy j, the intrinsic reward of
    every state it acts on recorded for the sequences (``rewards [L, 2]``: extrinsic, intrinsic), j in the recorded
    state; j fixed per environment (NGU: environment i of all actors' follows j = i mod N) or chosen at each
    episode start by the environment's bandit (Agent57)."""

    keeps_episode_state = True

    def __init__(self, policy: NGUNetwork, config: NGUConfig, seed: int, first_env: int = 0, total_envs: int | None = None):
        super().__init__(policy, config, first_env, total_envs)
        self.seed = seed
        self.bandits: list[SlidingWindowUCB] | None = None
        self.member: torch.Tensor | None = None
        """``[N]`` j of each environment's current episode."""
        self.totals: dict[str, float] = {}

    def make_bandits(self, count: int) -> list[SlidingWindowUCB]:
        cfg = self.config
        return [SlidingWindowUCB(cfg.num_policies, cfg.bandit_window, cfg.bandit_beta, cfg.bandit_epsilon, self.seed + i)
                for i in range(count)]

    def choose_members(self, episode_starts: torch.Tensor) -> torch.Tensor:
        num_envs, cfg = len(episode_starts), self.config
        if self.member is None:
            self.member = (self.first_env + torch.arange(num_envs)) % cfg.num_policies
        if cfg.meta_controller == "bandit":
            if self.bandits is None:
                self.bandits = self.make_bandits(num_envs)
            for env in episode_starts.cpu().nonzero().flatten().tolist():
                self.member[env] = self.bandits[env].choose()
        return self.member.clone()

    @torch.no_grad()
    def act(self, obs: torch.Tensor, state: NGUState, episode_starts: torch.Tensor,
            previous_reward: torch.Tensor) -> tuple[torch.Tensor, NGUState]:
        start = self.policy.reset_where(state, episode_starts)
        start = start._replace(member=self.choose_members(episode_starts).to(obs.device))
        q, rewards, state = self.policy.step(obs, start, previous_reward, learn_statistics=True)
        action = self.epsilon_greedy(q, (start.hidden, start.cell, start.member), rewards["intrinsic"].unsqueeze(-1))
        for name, value in rewards.items():
            self.totals[name] = self.totals.get(name, 0.0) + value.mean().item()
        self.totals["memory_size"] = self.totals.get("memory_size", 0.0) + state.memory.sizes.float().mean().item()
        self.totals["steps"] = self.totals.get("steps", 0.0) + 1.0
        return action, state._replace(previous_action=action)

    def after_step(self, step: Step) -> None:
        """Each finished episode's extrinsic return goes to its environment's bandit, credited to its j."""
        if self.bandits is None:
            return
        for env, episode_return in zip(step.episode_envs.tolist(), step.episode_returns.tolist()):
            self.bandits[env].observe(int(self.member[env]), episode_return)

    def metrics(self) -> dict[str, float]:
        """Means over the steps acted since the last call: ``ngu/intrinsic``, ``ngu/episodic``, ``ngu/modulator``,
        ``ngu/memory_size``; with bandits, ``ngu/mean_member``."""
        steps = self.totals.pop("steps", 0.0)
        metrics = {f"ngu/{name}": value / steps for name, value in self.totals.items()} if steps else {}
        self.totals.clear()
        if self.bandits is not None:
            metrics["ngu/mean_member"] = self.member.float().mean().item()
        return metrics

    def state_dict(self) -> dict[str, Any]:
        return {"bandits": None if self.bandits is None else [bandit.state_dict() for bandit in self.bandits]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("bandits") is not None:
            self.bandits = self.make_bandits(len(state["bandits"]))
            for bandit, saved in zip(self.bandits, state["bandits"]):
                bandit.load_state_dict(saved)


class NGUBuilder(RecurrentQBuilder):
    """A recurrent Q agent's parts with the family's network, ``FamilyCore`` and ``NGULearner``; each core's bandits
    get a seed of their own."""

    def make_policy(self, device: torch.device | str) -> NGUNetwork:
        return NGUNetwork(self.obs_shape, self.action_space.n, self.config).to(device)

    def make_core(self, policy: NGUNetwork, first_env: int, total_envs: int | None) -> FamilyCore:
        return FamilyCore(policy, self.config, int(torch.randint(2**31, ())), first_env, total_envs)

    def make_learner(self, networks: Networks, dataset: ReplayDataset, replay: Replay) -> NGULearner:
        return NGULearner(self.config, networks, dataset, replay)


class NGULearner(RecurrentQLearner):
    """A recurrent Q learner for the family's value heads, and a second optimiser for the embedding and the RND
    predictor."""

    def __init__(self, config: NGUConfig, networks: Networks, dataset: ReplayDataset, replay: Replay):
        super().__init__(config, networks, dataset, replay)
        novelty = self.policy.novelty
        trained = [*novelty.embedding.parameters(), *novelty.inverse_head.parameters(), *novelty.rnd.predictor.parameters()]
        self.novelty_parameters = TrainedParameters(trained, adam(config.novelty_learning_rate, 1e-8))

    def q_parameters(self) -> Iterator[nn.Parameter]:
        return self.policy.heads.parameters()

    def unroll_start(self, batch: SequenceBatch) -> tuple[tuple[torch.Tensor, ...], dict[str, Any]]:
        """The LSTM state, and the member j each sequence was acted by (every unroll takes it)."""
        hidden, cell, member = batch.start_state
        return (hidden, cell), {"member": member}

    def head_values(self, q: torch.Tensor) -> torch.Tensor:
        return q

    def value_targets(self, online_q: torch.Tensor, target_q: torch.Tensor, batch: SequenceBatch,
                      context: dict[str, Any]) -> torch.Tensor:
        """Each value head on its reward (the mixed one, or r_e and r_i)."""
        member = context["member"]
        return self.head_targets(self.policy.combine(online_q, member), target_q, member, batch)

    def after_learning(self, batch: SequenceBatch) -> dict[str, float]:
        """One step of the embedding and the RND predictor on the batch's transitions."""
        inverse_loss, rnd_loss = self.train_novelty(batch)
        return {"train/inverse_dynamics_loss": inverse_loss, "train/rnd_loss": rnd_loss}

    def head_targets(self, acting_q: torch.Tensor, target_q: torch.Tensor, member: torch.Tensor,
                     batch: SequenceBatch) -> torch.Tensor:
        """``[L, B, H]`` targets of each value head: one on r_e + beta_j r_i, or q_e on r_e and q_i on r_i.
        ``acting_q [L + 1, B, A]`` picks the greedy actions; ``target_q [L + 1, B, H, A]`` bootstraps."""
        beta, gamma = self.policy.betas[member], self.policy.gammas[member]
        extrinsic, intrinsic = batch.rewards.unbind(-1)
        if target_q.shape[2] == 1:
            return self.targets(acting_q, target_q[:, :, 0], extrinsic + beta * intrinsic, gamma, batch).unsqueeze(-1)
        intrinsic_batch = batch if self.config.intrinsic_terminates else replace(
            batch, terminated=torch.zeros_like(batch.terminated), truncated=batch.terminated | batch.truncated)
        return torch.stack([self.targets(acting_q, target_q[:, :, 0], extrinsic, gamma, batch),
                            self.targets(acting_q, target_q[:, :, 1], intrinsic, gamma, intrinsic_batch)], dim=-1)

    def train_novelty(self, batch: SequenceBatch) -> tuple[float, float]:
        """One step of inverse dynamics and RND on every valid transition of ``batch``; the two losses."""
        valid = batch.mask
        inverse, rnd = self.policy.novelty.losses(batch.obs[:-1][valid], batch.obs[1:][valid], batch.actions[valid])
        self.novelty_parameters.minimize(inverse.mean() + rnd.mean())
        return inverse.mean().item(), rnd.mean().item()

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "novelty_optimizer": self.novelty_parameters.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.novelty_parameters.load_state_dict(state["novelty_optimizer"])


class NGU(RecurrentQAgent, PolicyFamily):
    config_class = NGUConfig
    builder_class = NGUBuilder

    @classmethod
    def best_member(cls, state: dict[str, Any], policy: nn.Module) -> int | None:
        """With bandits (Agent57): the member whose training episodes in the bandits' windows brought the highest mean
        task return."""
        actors = state["actors"] if "actors" in state else [state.get("actor", {})]  # "actor": written before Ray actors
        histories = [bandit["history"] for actor in actors for bandit in actor.get("bandits") or []]
        return best_arm(histories, policy.num_policies) if histories else None

    @staticmethod
    def family_size(policy: nn.Module) -> int | None:
        return policy.num_policies

    @staticmethod
    def describe_member(policy: nn.Module, member: int) -> str:
        return f"member j = {member}: beta {policy.betas[member].item():.3g}, gamma {policy.gammas[member].item():.4g}"
