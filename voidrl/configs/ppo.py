"""PPO's options and presets (the algorithm: ``voidrl.algos.ppo``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from voidrl.configs.conditions import IsSet
from voidrl.configs.policy import PolicyConfig, validate_discounting
from voidrl.configs.run import RunConfig
from voidrl.schedule import Schedule
from voidrl.validation import require_non_negative, require_positive, require_positive_integers, validate_fraction


ATARI: dict[str, dict[str, Any]] = {
    # Schulman et al. (2017) / CleanRL ppo_atari.
    "env": {"num_envs": 8, "reward_clip": 1.0},
    "algo_config": {
        "num_steps": 128, "minibatch_size": 256, "epochs": 4, "learning_rate": "lin_2.5e-4",
        "clip": 0.1, "clip_value": 0.1, "entropy_coef": 0.01, "network": "nature", "shared": True,
    },
}

MINIGRID: dict[str, dict[str, Any]] = {
    # MiniGrid's 7 x 7 view as one-hot planes through the small grid CNN; 16 envs x 128 steps, 4 epochs of
    # minibatches of 256, lr 1e-3, entropy 0.01 (the settings of the minigrid authors' rl-starter-files). With
    # --memory lstm each environment's whole rollout is one sequence: on MemoryS7, sequences of 16 learned in 1 seed
    # of 3 by 500k steps, of 128 in 3 of 3, at about a third of the steps/s (benchmarks/RESULTS.md).
    "env": {"num_envs": 16},
    "algo_config": {"num_steps": 128, "minibatch_size": 256, "epochs": 4, "learning_rate": 1e-3, "entropy_coef": 0.01,
                    "network": "minatar", "shared": True, "sequence_length": 128},
}

MUJOCO: dict[str, dict[str, Any]] = {
    # CleanRL ppo_continuous_action.
    "env": {"num_envs": 1, "normalize_observation": True, "normalize_reward": True},
    "algo_config": {"num_steps": 2048, "minibatch_size": 64, "epochs": 10, "learning_rate": "lin_3e-4"},
}

# Named settings: preset -> section (run, env, algo_config, intrinsic_config) -> overrides.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "cartpole": {
        # RL Zoo's tuned CartPole-v1 settings in full (hyperparams/ppo.yml): the learning rate and the clip range
        # both fall linearly to 0 over the run. 10 greedy games at 100k steps scored 500 on 5 of 5 report seeds
        # (docs/results.md, cartpole-rl-zoo-100k).
        "env": {"num_envs": 8},
        "algo_config": {
            "num_steps": 32, "minibatch_size": 256, "epochs": 20, "gamma": 0.98, "gae_lambda": 0.8,
            "learning_rate": "lin_1e-3", "clip": "lin_0.2", "entropy_coef": 0.0,
        },
    },
    "cartpole-memory": {
        # CartPole without velocities (voidrl/CartPoleNoVelocity-v1) with --memory lstm: 8 envs x 128 steps, sequences
        # of 32, 4 epochs, lr 3e-4 annealed; one seed's greedy evaluation 489 at 200k steps (benchmarks/RESULTS.md).
        "env": {"num_envs": 8},
        "algo_config": {
            "num_steps": 128, "minibatch_size": 256, "epochs": 4, "learning_rate": "lin_3e-4",
            "memory": "lstm", "lstm_size": 64, "sequence_length": 32,
        },
    },
    "atari": ATARI,
    "atari-rnd": {
        # Burda et al. (2019) on hard-exploration games: RND with its own value head (gamma 0.99, non-episodic)
        # beside the task's (0.999), lr 1e-4, entropy 0.001; the Atari preset otherwise.
        "run": {"intrinsic": "rnd"},
        "env": ATARI["env"],
        "algo_config": {**ATARI["algo_config"], "learning_rate": 1e-4, "entropy_coef": 0.001, "gamma": 0.999,
                        "intrinsic_gamma": 0.99},
    },
    "minatar": {
        "env": {"num_envs": 8},
        "algo_config": {
            "num_steps": 128, "minibatch_size": 256, "epochs": 4, "learning_rate": "lin_2.5e-4",
            "entropy_coef": 0.01, "network": "minatar", "shared": True,
        },
    },
    "minigrid": MINIGRID,
    "minigrid-rnd": {
        # The same with RND: its own value head (gamma 0.99, non-episodic) beside the task's (0.999).
        "run": {"intrinsic": "rnd"},
        "env": MINIGRID["env"],
        "algo_config": {**MINIGRID["algo_config"], "gamma": 0.999, "intrinsic_gamma": 0.99},
    },
    "mujoco": MUJOCO,
    "mujoco-pixels": {
        # The same on 64x64 rendered frames (PlaNet's size; 96x96 until 2026-11-26, --pixels 96 restores it: the CNN's
        # update cost 3x as much there), 3 stacked to see velocities, through one shared Nature CNN. The action repeat
        # is the task's: --action-repeat 4 on HalfCheetah (cheetah-run's in PlaNet and DrQ); 1 on InvertedPendulum,
        # where PPO did not learn from the state at 4 (benchmarks/RESULTS.md).
        "env": {**MUJOCO["env"], "normalize_observation": False, "pixels": 64, "frame_stack": 3},
        "algo_config": {**MUJOCO["algo_config"], "network": "nature", "shared": True},
    },
}


# What voidrl tune samples on top of the preset: after RL Zoo's PPO sampler (sample_ppo_params), continuous where it
# lists values, the learning rate capped at 1e-2 (constant, as RL Zoo samples it) and the minibatches from 32 samples.
SEARCH_SPACE: dict[str, tuple[Any, ...]] = {
    "learning_rate": ("log_float", 1e-5, 1e-2),
    "num_steps": ("categorical", [16, 32, 64, 128, 256, 512, 1024, 2048]),
    "minibatch_size": ("categorical", [32, 64, 128, 256, 512]),
    "epochs": ("categorical", [1, 5, 10, 20]),
    "gamma": ("float", 0.9, 0.9999),
    "gae_lambda": ("float", 0.8, 1.0),
    "clip": ("float", 0.1, 0.4),
    "entropy_coef": ("log_float", 1e-8, 0.1),
    "max_grad_norm": ("float", 0.3, 5.0),
}


@dataclass
class PPOConfig(PolicyConfig):
    """PPO hyperparameters. Defaults are Stable-Baselines3's."""

    presets = PRESETS
    search_space = SEARCH_SPACE
    data_parallel = True
    takes_memory = True
    minibatch_epochs = True

    num_steps: int = 256
    """Rollout length per environment between two updates. 256: with the default 8 environments, 2,048 steps an update,
    Stable-Baselines3's with its one environment (8 x 2,048 made 8x fewer updates and learned slower per step on
    environments without a preset: benchmarks/RESULTS.md, "PPO's defaults"); every suite's preset sets its own."""
    learning_rate: Schedule = 3e-4
    """Adam learning rate: a number, or lin_X (from X linearly to 0 over the run; Python: also a function of the
    remaining progress)."""
    adam_eps: float = 1e-5
    """Adam's epsilon."""
    gamma: float = 0.99
    """Discount factor."""
    gae_lambda: float = 0.95
    """GAE lambda (1 = Monte-Carlo advantages, 0 = one-step TD)."""
    epochs: int = 10
    """Passes over each rollout."""
    minibatch_size: int = 64
    """Samples per gradient step, drawn without replacement from the flattened rollout (memory lstm: steps per
    gradient step, minibatch_size / sequence_length whole sequences)."""
    clip: Schedule = 0.2
    """Surrogate clipping range epsilon, in (0, 1) at the start (a schedule, as learning_rate)."""
    clip_value: float | None = None
    """Clip each value prediction to +-this around its rollout value (PPO2 style); None disables."""
    entropy_coef: Schedule = 0.0
    """Weight of the entropy bonus (a schedule, as learning_rate)."""
    value_coef: float = 0.5
    """Weight of the value loss in the combined loss."""
    max_grad_norm: float = 0.5
    """Clip the global gradient norm to this before each step."""
    normalize_advantages: bool = True
    """Standardise advantages within each minibatch."""
    target_kl: float | None = None
    """Early stop: the update ends at the first minibatch whose approximate KL to the rollout
    policy, measured on that minibatch before its gradient step, exceeds this; that step is
    not taken. None disables."""
    intrinsic_gamma: float | None = None
    """With a reward plug-in: a second value head learns the plug-in's rewards alone with this discount,
    their returns running on across episode ends (RND: 0.99 beside a task gamma of 0.999), and the
    advantage is the plug-in's (task, intrinsic) weights applied to the two heads' advantages. None:
    one head learns the weighted sum of the rewards."""

    acts_only = {"intrinsic_gamma": IsSet("intrinsic")}

    def validate(self) -> None:
        require_positive_integers(self, ("num_steps", "epochs", "minibatch_size"))
        require_positive(self, ("learning_rate", "adam_eps", "max_grad_norm", "target_kl", "clip_value"))
        require_non_negative(self, ("entropy_coef", "value_coef"))
        validate_fraction("clip", self.clip)
        validate_discounting(self)
        self.validate_policy(whole_sequences=("num_steps", "minibatch_size"))
        if self.memory != "none" and self.action_persistence:
            raise ValueError(f"action_persistence needs a feed-forward policy (memory none), not memory {self.memory}")

    def check_run(self, run: RunConfig) -> None:
        if self.intrinsic_gamma is not None and run.intrinsic is None:
            raise ValueError("intrinsic_gamma needs a reward plug-in (--intrinsic), whose rewards its value head learns")
