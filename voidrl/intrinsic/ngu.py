"""Never Give Up's intrinsic reward (Badia et al. 2020): episodic novelty modulated by life-long novelty.

r_i = r_episodic * clip(alpha, 1, L). The episodic part compares a state's controllable embedding f(s)
with the embeddings of the states seen earlier in the same episode (a per-environment memory, emptied
when an episode begins): close neighbours mean a familiar state and a small reward. f is trained by
inverse dynamics, predicting a_t from (f(s_t), f(s_t+1)), so it keeps what the agent's actions change
and drops the rest. The life-long part is RND's prediction error standardised by its running mean and
std: states seen often across all episodes get alpha near 1.

The acting network owns these parts (``NoveltyModule``), so evaluation computes the same reward inputs
as training; the learner trains f and the RND predictor on replayed transitions.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from voidrl.intrinsic.rnd import Distillation
from voidrl.math.knn import episodic_novelty, lifelong_modulator
from voidrl.math.running_stats import RunningMeanStd
from voidrl.nets.bodies import make_body, orthogonal_init
from voidrl.nets.inverse_dynamics import InverseDynamicsHead


class EpisodicMemory:
    """Each environment's embeddings of the states of its current episode: ``[N, capacity, D]`` rings
    (the oldest overwritten once full). Not checkpointed: a resumed run starts fresh episodes."""

    def __init__(self, num_envs: int, capacity: int, dim: int, device: torch.device | str = "cpu"):
        self.embeddings = torch.zeros(num_envs, capacity, dim, device=device)
        self.sizes = torch.zeros(num_envs, dtype=torch.long, device=device)
        self.written = torch.zeros(num_envs, dtype=torch.long, device=device)
        """Embeddings written since the episode began (the next ring slot is this mod capacity)."""

    @property
    def capacity(self) -> int:
        return self.embeddings.shape[1]

    def clear(self, envs: torch.Tensor) -> None:
        """Empty the memories of the environments where ``envs [N]`` (bool) is True."""
        self.sizes[envs] = 0
        self.written[envs] = 0

    def nearest_squared_distances(self, queries: torch.Tensor, k: int) -> torch.Tensor:
        """``[N, k]`` squared distances from each environment's query ``[N, D]`` to its k nearest memories,
        nearest first; ``inf`` where a memory holds fewer than k."""
        used = int(self.sizes.max())  # slots past every memory's size hold nothing yet
        squared = (self.embeddings[:, :used] - queries.unsqueeze(1)).pow(2).sum(-1)
        filled = torch.arange(used, device=squared.device) < self.sizes.unsqueeze(1)
        squared = squared.masked_fill(~filled, float("inf"))
        nearest = squared.topk(min(k, used), dim=1, largest=False).values
        if nearest.shape[1] < k:
            nearest = F.pad(nearest, (0, k - nearest.shape[1]), value=float("inf"))
        return nearest

    def add(self, embeddings: torch.Tensor) -> None:
        """Write one embedding ``[N, D]`` per environment."""
        rows = torch.arange(len(embeddings), device=embeddings.device)
        self.embeddings[rows, self.written % self.capacity] = embeddings
        self.written += 1
        self.sizes = torch.clamp(self.sizes + 1, max=self.capacity)


class NoveltyModule(nn.Module):
    """NGU's reward networks and their statistics.

    - ``embedding``: f, a torso (``make_body``) and a linear layer to ``embedding_size`` (32 in NGU);
      ``inverse_head`` classifies a_t from ``[f(s_t), f(s_t+1)]`` through one hidden layer.
    - ``rnd``: RND's target (fixed) and predictor on standardised observations (``intrinsic.rnd.Distillation``);
      alpha standardises its error by the error's running mean and std.
    - the running mean of the k-NN squared distances (d_m^2).
    The statistics travel in ``state_dict`` (``get_extra_state``).
    """

    def __init__(self, obs_shape: tuple[int, ...], num_actions: int, network: str, hidden_sizes: tuple[int, ...],
                 embedding_size: int = 32, rnd_embedding_size: int = 128, rnd_hidden_size: int = 256,
                 episodic_neighbours: int = 10, kernel_eps: float = 1e-3, pseudo_count: float = 1e-3, cluster_distance: float = 8e-3,
                 max_similarity: float = 8.0, max_modulation: float = 5.0, observation_clip: float = 5.0):
        super().__init__()
        torso = make_body(network, obs_shape, hidden_sizes)
        self.embedding = nn.Sequential(torso, orthogonal_init(nn.Linear(torso.out_features, embedding_size), 1.0))
        self.inverse_head = InverseDynamicsHead(embedding_size, num_actions)
        self.rnd = Distillation(obs_shape, rnd_embedding_size, rnd_hidden_size, observation_clip)
        self.embedding_size, self.episodic_neighbours = embedding_size, episodic_neighbours
        self.kernel = dict(kernel_eps=kernel_eps, pseudo_count=pseudo_count, cluster_distance=cluster_distance,
                           max_similarity=max_similarity)
        self.max_modulation = max_modulation
        self.error_stats = RunningMeanStd(())
        self.distance_stats = RunningMeanStd(())

    @torch.no_grad()
    def rewards(self, obs: torch.Tensor, memory: EpisodicMemory, learn_statistics: bool) -> dict[str, torch.Tensor]:
        """The intrinsic reward of each environment's state ``obs [N, ...]``, measured against the
        states before it in its episode; then ``obs`` joins its memory. With ``learn_statistics`` (an
        actor in training, not an evaluation) the running statistics take the new values in first.
        Returns ``intrinsic``, ``episodic``, ``modulator``, each ``[N]``; a memory that is still empty (an
        episode's first state) gives reward 0."""
        embeddings = self.embedding(obs)
        squared = memory.nearest_squared_distances(embeddings, self.episodic_neighbours)
        known = torch.isfinite(squared)
        errors = self.rnd.errors(obs)
        if learn_statistics:
            self.distance_stats.update(squared[known])
            self.error_stats.update(errors)
            self.rnd.observation_stats.update(obs)
        mean_squared = self.distance_stats.mean.to(squared).clamp_min(1e-8)
        episodic = episodic_novelty(squared, mean_squared, **self.kernel) * known.any(-1)
        error_std = self.error_stats.std.to(errors).clamp_min(1e-8)
        modulator = lifelong_modulator(errors, self.error_stats.mean.to(errors), error_std, self.max_modulation)
        memory.add(embeddings)
        return {"intrinsic": episodic * modulator, "episodic": episodic, "modulator": modulator}

    def losses(self, obs: torch.Tensor, next_obs: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-transition inverse-dynamics cross-entropy -log p(a_t | f(s_t), f(s_t+1)) and RND's
        prediction error, each ``[B]``, for ``obs``, ``next_obs`` ``[B, ...]`` and ``actions [B]``."""
        both = self.embedding(torch.cat([obs, next_obs]))
        logits = self.inverse_head(*both.chunk(2))
        return F.cross_entropy(logits, actions, reduction="none"), self.rnd.errors(next_obs)

    def get_extra_state(self) -> dict[str, Any]:
        return {"error_stats": self.error_stats.state_dict(), "distance_stats": self.distance_stats.state_dict()}

    def set_extra_state(self, state: dict[str, Any]) -> None:
        self.error_stats.load_state_dict(state["error_stats"])
        self.distance_stats.load_state_dict(state["distance_stats"])

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
        """Checkpoints written before RND's networks moved into ``rnd`` (``rnd_target.*``, ``rnd_predictor.*``, the
        observation statistics among this module's) load as they are."""
        for old, new in (("rnd_target.", "rnd.target."), ("rnd_predictor.", "rnd.predictor.")):
            for key in [key for key in state_dict if key.startswith(prefix + old)]:
                state_dict[prefix + new + key[len(prefix + old):]] = state_dict.pop(key)
        extra = state_dict.get(prefix + "_extra_state")
        if extra is not None and "observation_stats" in extra:
            state_dict[prefix + "rnd._extra_state"] = {"observation_stats": extra["observation_stats"]}
            state_dict[prefix + "_extra_state"] = {name: stats for name, stats in extra.items() if name != "observation_stats"}
        super()._load_from_state_dict(state_dict, prefix, *args)
