"""PPG's options and presets (the algorithm: ``voidrl.algos.ppg``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voidrl.configs.choices import NETWORKS
from voidrl.configs.conditions import IsSet, MlpBody
from voidrl.configs.policy import MemoryConfig, validate_discounting
from voidrl.schedule import Schedule
from voidrl.validation import require_choice, require_non_negative, require_positive, require_positive_integers, validate_fraction, validate_hidden_sizes


ATARI: dict[str, dict[str, Any]] = {
    # PPG on Atari (the default there; "thesis" before): the published attempt's fine-tuning set-up on Ms. Pac-Man.
    "env": {"num_envs": 16, "reward_scale": 0.1},
    "algo_config": {"num_steps": 256, "minibatch_size": 32, "learning_rate": 3e-4, "critic_learning_rate": 1e-3,
                    "clip": 0.25, "entropy_coef": 0.01, "policy_iterations": 32, "aux_epochs": 3,
                    "clone_coef": 1.0, "aux_kl_stop": 0.01, "network": "dqn2013", "critic_network": "nature",
                    "chunk_size": 64},
}
ATARI_PRETRAIN_SCHEDULE: dict[str, dict[str, Any]] = {
    # The published attempt's reward-free PPG schedule on Ms. Pac-Man: APT rewards only, longer rollouts, bigger minibatches.
    "run": {"intrinsic": "apt"},
    "env": {"num_envs": 16, "reward_scale": 0.1},
    "algo_config": {"num_steps": 512, "minibatch_size": 512, "learning_rate": 1e-4, "critic_learning_rate": 1e-3,
                    "clip": 0.25, "entropy_coef": 0.01, "policy_iterations": 32, "aux_epochs": 3,
                    "clone_coef": 1.0, "aux_kl_stop": 0.01, "network": "dqn2013", "critic_network": "nature",
                    "chunk_size": 64},
}
REWARD_FREE_APT: dict[str, Any] = {"extrinsic_coef": 0.0, "intrinsic_coef": 1.0, "contrastive_chunk_size": 64}
"""Gradient accumulation / caching in chunks of 64 states: the same updates with ~30 MB of activations
instead of 100-300 MB, so 32 stored rollouts stay under 3 GB (measured: PPG phases no slower; a
contrastive update 0.47 s against 0.41 s unchunked, 0.63 s at 512)."""

PRETRAIN_ROLLOUT_SCOPE: dict[str, dict[str, Any]] = {
    # Reward-free pre-training on Atari at budgets of 1-2M steps ("pretrain" until 2026-11-28): rollouts of 16 x 256,
    # 4 policy epochs of minibatches of 256 at learning rate 5e-4 (8x the published schedule's gradient steps per
    # environment step, each 5x larger), an auxiliary phase of 2 epochs every 16 rollouts, the particles' neighbours
    # sought among all the rollout's. The published schedule (pretrain-published) left the policy at its initial
    # entropy after 254k steps; this one moves it within 30k, and the representation stays healthy
    # (benchmarks/RESULTS.md, "a reward-free pre-training that moves the policy").
    **ATARI_PRETRAIN_SCHEDULE,
    "algo_config": {**ATARI_PRETRAIN_SCHEDULE["algo_config"], "num_steps": 256, "minibatch_size": 256, "epochs": 4,
                    "learning_rate": 5e-4, "policy_iterations": 16, "aux_epochs": 2},
    "intrinsic_config": {**REWARD_FREE_APT, "contrastive_updates_per_step": 0.125, "contrastive_chunk_size": None},
}

# Named settings: preset -> section (run, env, algo_config, intrinsic_config) -> overrides.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "cartpole": {
        "env": {"num_envs": 8},
        "algo_config": {"num_steps": 64, "minibatch_size": 64, "epochs": 2, "gamma": 0.98, "gae_lambda": 0.8,
                        "learning_rate": 1e-3, "clip": 0.2, "entropy_coef": 0.0, "policy_iterations": 4,
                        "aux_epochs": 2},
    },
    "cartpole-memory": {
        # CartPole without velocities (voidrl/CartPoleNoVelocity-v1) with --memory lstm: PPO's cartpole-memory schedule
        # (8 envs x 128 steps, 4 epochs of 256-step minibatches of sequences of 32, lr 3e-4) with an auxiliary phase
        # every 8 rollouts, and rewards normalised: unnormalised returns (up to ~100) made the auxiliary value
        # regression through the actor's LSTM stall the policy (entropy stuck at ln 2; benchmarks/RESULTS.md).
        "env": {"num_envs": 8, "normalize_reward": True},
        "algo_config": {"num_steps": 128, "minibatch_size": 256, "epochs": 4, "learning_rate": 3e-4, "critic_learning_rate": 3e-4,
                        "entropy_coef": 0.0, "policy_iterations": 8, "aux_minibatch_size": 256,
                        "memory": "lstm", "lstm_size": 64, "sequence_length": 32},
    },
    "minatar": {
        "env": {"num_envs": 16},
        "algo_config": {"num_steps": 128, "minibatch_size": 256, "network": "minatar", "policy_iterations": 8,
                        "epochs": 2, "learning_rate": 5e-4},
    },
    "minatar-pretrain": {
        # Reward-free pre-training on MinAtar (pretrain's default there): the minatar set-up with an entropy
        # bonus of 0.05, which keeps the APT policy from growing near-deterministic; fine-tuning from it
        # (actor only) raised the AUC on Breakout and Asterix and was within noise on SpaceInvaders, where
        # 0.01 had hurt (benchmarks/RESULTS.md, "Which parts to transfer").
        "run": {"intrinsic": "apt"},
        "env": {"num_envs": 16},
        "algo_config": {"num_steps": 128, "minibatch_size": 256, "network": "minatar", "policy_iterations": 8,
                        "epochs": 2, "learning_rate": 5e-4, "entropy_coef": 0.05},
    },
    "atari": ATARI,
    "atari-finetune": {
        # Fine-tuning reward-free pre-trained weights on Atari (finetune's default there): the atari set-up with three
        # passes over each rollout (epochs 3) and Atari's sign clipping of the score's rewards instead of scaling them
        # by 0.1 (benchmarks/RESULTS.md, "Fine-tuning that adds"), an entropy bonus of 0.001, and the loaded policy's
        # logits divided by 0.25, so its sampled play starts near its greedy play. From the committed Ms. Pac-Man
        # weights, 5 seeds: at 500k steps the last 100 training games 1,120 (IQM) against 976 without the last two,
        # the AUC 99 higher; at 100k the AUC 68 higher, the last 100 training games within noise (822 against 762
        # and 808), and no first games below the weights' own play (RESULTS.md, "Sharper from the start"). A run
        # without a loaded policy head (train, or init_parts without policy_head) keeps its logits: temperature 1.
        "run": {"init_temperature": 0.25},
        "env": {**ATARI["env"], "reward_clip": 1.0, "reward_scale": 1.0},
        "algo_config": {**ATARI["algo_config"], "epochs": 3, "entropy_coef": 0.001},
    },
    "pretrain": {
        # Reward-free pre-training on Atari at budgets of 1-2M steps (pretrain's default there): pretrain-rollout-scope's
        # schedule with each particle's neighbours sought within its own game (knn_scope environment), not among all
        # the rollout's games: after 1M steps on Ms. Pac-Man its sampled games visit 1.53x the random policy's
        # distinct positions and score 2.65x over 60 games, against 1.21x and 1.98x (benchmarks/RESULTS.md, "novelty
        # within the game"). That is seed 0 with 32 contrastive updates a rollout (0.125, the committed weights'), the
        # best of four: seeds 1, 2 and 3 ended at 0.80x, 1.25x and 0.77x (RESULTS.md, "Is it luck?"). Since 2026-12-01
        # 2 updates a rollout (0.0078125): 0.92x plain PPG's steps/s against 0.48x, all four seeds above the random
        # policy's coverage (1.12-1.31x), fine-tuned from them level with 32 at the end of 100k steps and ahead on the
        # AUC (+86.4 [2.6, 136.1]; RESULTS.md, "Fine-tuning from all four 2-update pre-trainings").
        **PRETRAIN_ROLLOUT_SCOPE,
        "intrinsic_config": {**PRETRAIN_ROLLOUT_SCOPE["intrinsic_config"], "knn_scope": "environment",
                             "contrastive_updates_per_step": 0.0078125},
    },
    "pretrain-rollout-scope": PRETRAIN_ROLLOUT_SCOPE,
    "pretrain-published": {
        # The published attempt's reward-free schedule on Ms. Pac-Man (made for 62.5M steps; "pretrain" before) with
        # the representation that does not collapse there (APTConfig's defaults), one contrastive update every 8
        # vector steps (128 environment steps) instead of every one, back-propagated whole: 4x the steps/s of one
        # per vector step, the representation still healthy after 100k steps (benchmarks/RESULTS.md, "Pre-training
        # at 150 steps/s").
        **ATARI_PRETRAIN_SCHEDULE,
        "intrinsic_config": {**REWARD_FREE_APT, "contrastive_updates_per_step": 0.125, "contrastive_chunk_size": None},
    },
    "pretrain-nt-xent": {
        # The published attempt's reward-free pre-training, literally ("thesis-pretrain" before), with its
        # SimCLR NT-Xent contrastive set-up (which collapses on Ms. Pac-Man; kept for reproduction).
        **ATARI_PRETRAIN_SCHEDULE,
        "intrinsic_config": {**REWARD_FREE_APT, "contrastive_loss": "nt-xent", "temperature": 0.1,
                             "encoder_learning_rate": 1e-3, "warmup_updates": 0, "spectral_norm": True,
                             "head_norm": "none", "shift_probability": 1.0, "brightness": 0.2,
                             "representation_stride": 1},
    },
}


# What voidrl tune samples on top of the preset: PPO's ranges for what the policy phase shares with it, and the
# phase lengths around the paper's (N_pi 32, E_aux 6 in Cobbe et al.; 4 and 2 in the cartpole preset).
SEARCH_SPACE: dict[str, tuple[Any, ...]] = {
    "learning_rate": ("log_float", 1e-5, 1e-2),
    "critic_learning_rate": ("log_float", 1e-5, 1e-2),
    "num_steps": ("categorical", [32, 64, 128, 256, 512]),
    "minibatch_size": ("categorical", [32, 64, 128, 256]),
    "epochs": ("categorical", [1, 2, 4]),
    "policy_iterations": ("categorical", [2, 4, 8, 16, 32]),
    "aux_epochs": ("categorical", [1, 2, 3, 6]),
    "gamma": ("float", 0.9, 0.9999),
    "gae_lambda": ("float", 0.8, 1.0),
    "clip": ("float", 0.1, 0.4),
    "entropy_coef": ("log_float", 1e-8, 0.1),
}


@dataclass
class PPGConfig(MemoryConfig):
    """PPG hyperparameters. Defaults follow the PPG paper (Cobbe et al., 2021) and Müller (2022)."""

    presets = PRESETS
    search_space = SEARCH_SPACE
    data_parallel = True
    takes_memory = True
    minibatch_epochs = True

    num_steps: int = 256
    """Rollout length per environment between two policy phases."""
    learning_rate: Schedule = 3e-4
    """Adam learning rate of the policy network (Müller (2022) uses 1e-4 in pre-training): a number, or lin_X (from X
    linearly to 0 over the run; Python: also a function of the remaining progress)."""
    critic_learning_rate: float = 1e-3
    """Adam learning rate of the critic."""
    adam_eps: float = 1e-5
    """Adam's epsilon for both networks."""
    gamma: float = 0.99
    """Discount factor."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    epochs: int = 1
    """Policy epochs per rollout (E_pi)."""
    value_epochs: int = 1
    """Critic epochs per rollout in the policy phase (E_V)."""
    minibatch_size: int = 32
    """Samples per gradient step in the policy phase (memory lstm: steps, minibatch_size / sequence_length whole
    sequences)."""
    clip: Schedule = 0.25
    """Surrogate clipping range epsilon, in (0, 1) at the start (a schedule, as learning_rate)."""
    entropy_coef: Schedule = 0.01
    """Weight of the entropy bonus (a schedule, as learning_rate; a number by default, never decayed)."""
    max_grad_norm: float = 0.5
    """Clip the policy network's gradient norm to this."""
    critic_max_grad_norm: float = 10.0
    """Clip the critic's gradient norm to this."""
    normalize_advantages: bool = True
    """Standardise advantages within each minibatch."""
    policy_iterations: int = 32
    """N_pi: rollouts between two auxiliary phases; the phase trains on all their states."""
    aux_epochs: int = 3
    """E_aux: passes over the stored states in each auxiliary phase."""
    aux_minibatch_size: int = 256
    """Samples per gradient step in the auxiliary phase (memory lstm: steps, in whole sequences)."""
    critic_warmup_rollouts: int = 0
    """Rollouts at the start of a run that train the critic alone: the policy phase is skipped, so that a fresh
    critic's first advantages (fine-tuning without the critic, as from a reward-free pre-training) cannot move the
    loaded policy, and their states are kept out of the auxiliary phase, whose policy_iterations count from the first
    rollout after. Logged as train/critic_warmup (1 during the warm-up, 0 after); 0 = none."""
    chunk_size: int | None = None
    """Gradient accumulation: every minibatch (policy, critic and auxiliary phases) goes forward and
    backward in chunks of at most this many samples before its one optimiser step. The same step with a
    fraction of the activation memory; None = whole minibatches (memory lstm: steps, in whole sequences)."""
    clone_coef: float = 1.0
    """Weight of the behaviour-cloning KL(pi_old || pi) in the auxiliary loss."""
    aux_kl_stop: float | None = None
    """Early stop (a stabiliser of the published Ms. Pac-Man set-up): end the phase's policy updates once a minibatch's KL(pi_old || pi)
    exceeds this (critic updates continue); None disables."""
    network: str = "auto"
    """Policy body: auto, mlp, nature, dqn2013, minatar, apt (APT's encoder, fc 256: init_parts apt_encoder loads a
    pre-trained one)."""
    critic_network: str | None = None
    """Critic body (a separate network); None = same kind as the policy's."""
    intrinsic_gamma: float | None = None
    """With a reward plug-in: the critic's second value head learns the plug-in's rewards alone with this
    discount, their returns running on across episode ends (RND: 0.99 beside a task gamma of 0.999), and
    the advantage is the plug-in's (task, intrinsic) weights applied to the two heads' advantages; the
    auxiliary head distils the same weighting of the heads' returns (reward-free: the intrinsic returns alone).
    None: one head learns the weighted sum of the rewards."""
    hidden_sizes: tuple[int, ...] = (64, 64)
    """Hidden layer sizes of mlp bodies."""

    acts_only = {"hidden_sizes": MlpBody("network", "critic_network"), "intrinsic_gamma": IsSet("intrinsic")}

    @property
    def shared(self) -> bool:
        """PPG always keeps a separate critic."""
        return False

    def validate(self) -> None:
        require_positive_integers(self, ("num_steps", "epochs", "value_epochs", "minibatch_size", "policy_iterations",
                                         "aux_epochs", "aux_minibatch_size"))
        if self.chunk_size is not None:
            require_positive_integers(self, ("chunk_size",))
        require_positive(self, ("learning_rate", "critic_learning_rate", "max_grad_norm", "critic_max_grad_norm", "aux_kl_stop"))
        validate_fraction("clip", self.clip)
        validate_discounting(self)
        require_positive(self, ("adam_eps",))
        require_non_negative(self, ("clone_coef", "entropy_coef", "critic_warmup_rollouts"))
        validate_hidden_sizes(self.hidden_sizes)
        require_choice(self, "network", NETWORKS)
        if self.critic_network is not None:
            require_choice(self, "critic_network", NETWORKS)
        self.validate_memory(whole_sequences=("num_steps", "minibatch_size", "aux_minibatch_size", "chunk_size"))
