"""Run configuration: one dataclass per concern, documented field by field, plus presets."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import math
import textwrap
import time
import types
import typing
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from voidrl.algos import ALGORITHMS
from voidrl.algos.base import require_non_negative, require_positive, require_positive_integers
from voidrl.envs.factory import EnvConfig, suite_of
from voidrl.intrinsic.apt import APTConfig
from voidrl.nets.parts import validate_parts

INTRINSIC_PLUGINS = (None, "apt")


@dataclass
class RunConfig:
    """What to train on, for how long, and where results go."""

    env: str = "CartPole-v1"
    """Environment id (``voidrl envs`` lists them)."""
    steps: int = 100_000
    """Environment steps to train for, counted over all parallel environments."""
    seed: int = 0
    """Seed for torch, numpy, python and the environments."""
    device: str = "cpu"
    """Torch device for networks and rollouts: cpu, cuda, cuda:N, or auto (cuda when available)."""
    run_dir: str | None = None
    """Directory for logs and checkpoints; default runs/<algo>-<env>-seed<seed>-<start time>."""
    checkpoint_every: int = 20
    """Write a checkpoint every this many updates (and always at the end)."""
    torch_threads: int = 0
    """Torch intra-op CPU threads; 0 keeps torch's default."""
    progress: bool = True
    """Show a progress bar with steps/s and ETA."""
    wandb: bool = False
    """Also log to Weights & Biases (needs the wandb package)."""
    intrinsic: str | None = None
    """Intrinsic-reward plug-in that rewrites the training reward: apt, or none."""
    collapse_entropy: float | None = None
    """Policy-collapse guard: warn when train/entropy stays below this for collapse_patience updates;
    None disables."""
    collapse_patience: int = 5
    """Consecutive low-entropy updates that count as a collapse."""
    collapse_restore: bool = False
    """On a collapse, reload the last checkpoint written while the entropy was healthy (healthy.pt)
    and go on from the current step."""
    init_from: str | None = None
    """Checkpoint whose networks start this run (fine-tuning); none = fresh initialisation."""
    init_parts: tuple[str, ...] | None = None
    """With init_from: which parts to load (policy_body, policy_head, aux_head, critic from the saved
    policy; apt_encoder: the saved run's APT encoder into an apt policy body); the rest is freshly
    initialised, so leaving out the heads re-initialises them. None = every part of the saved policy
    this run's network has (PPG's aux_head only for PPG)."""
    eval_every: int | None = None
    """Greedy evaluation every this many environment steps, checked after each update, and once at the
    end; scores go to evaluations.csv, the best agent to best.pt; None disables. Counted in environment
    steps, not training episodes: the unit of --steps, the same for every algorithm."""
    eval_episodes: int = 10
    """Whole episodes per evaluation, split evenly over the parallel environments."""


@dataclass
class TrainConfig:
    """Everything that defines a training run; ``config.json`` is its ``to_dict``."""

    algo: str
    run: RunConfig = field(default_factory=RunConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    algo_config: Any = None
    intrinsic_config: APTConfig = field(default_factory=APTConfig)

    def __post_init__(self):
        if self.algo not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {self.algo!r}; choose one of {', '.join(sorted(ALGORITHMS))}")
        if self.algo_config is None:
            self.algo_config = ALGORITHMS[self.algo].config_class()

    def sections(self) -> dict[str, Any]:
        """The config dataclasses by section name (the keys of ``to_dict`` besides ``algo``)."""
        return {"run": self.run, "env": self.env, "algo_config": self.algo_config, "intrinsic_config": self.intrinsic_config}

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field; cheap (no I/O), runs before any training.

        Checks every field's type (finite numbers only), each one's range, and the combinations of
        options that cannot work together; the fit to the environment's spaces is checked when the
        run is built (``Trainer``), still before anything is written.
        """
        for section in self.sections().values():
            check_field_types(section)
        require_positive_integers(self.run, ("steps", "checkpoint_every", "collapse_patience", "eval_every", "eval_episodes"))
        require_non_negative(self.run, ("torch_threads",))
        require_positive_integers(self.env, ("num_envs", "max_episode_steps"))
        require_positive(self.env, ("reward_scale", "reward_clip"))
        if self.run.intrinsic not in INTRINSIC_PLUGINS:
            raise ValueError(f"intrinsic must be one of {', '.join(map(str, INTRINSIC_PLUGINS))}, got {self.run.intrinsic!r}")
        suite_of(self.run.env)
        self.algo_config.validate()
        self.intrinsic_config.validate()
        if self.run.intrinsic is None and self.intrinsic_config != APTConfig():
            changed = [f.name for f in dataclasses.fields(APTConfig) if getattr(self.intrinsic_config, f.name) != f.default]
            raise ValueError(f"{', '.join(changed)}: APT option{'s' if len(changed) > 1 else ''}, used only with --intrinsic apt")
        if self.run.collapse_restore and self.run.collapse_entropy is None:
            raise ValueError("collapse_restore needs collapse_entropy (the entropy below which the guard acts)")
        if self.run.init_parts is not None:
            if self.run.init_from is None:
                raise ValueError("init_parts needs init_from (--from CHECKPOINT)")
            validate_parts(self.run.init_parts)

    @property
    def run_dir(self) -> str:
        """``run.run_dir``, or a new timestamped default that is stored on first use (so config.json shows it)."""
        if self.run.run_dir is None:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            self.run.run_dir = f"runs/{self.algo}-{self.run.env.replace('/', '_')}-seed{self.run.seed}-{stamp}"
        return self.run.run_dir

    @property
    def steps_per_update(self) -> int:
        return self.algo_config.num_steps * self.env.num_envs

    def to_dict(self) -> dict[str, Any]:
        return {"algo": self.algo, **{name: dataclasses.asdict(section) for name, section in self.sections().items()}}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        algo = data["algo"]
        if algo not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {algo!r}")
        return cls(
            algo=algo,
            run=_build(RunConfig, data["run"]),
            env=_build(EnvConfig, data["env"]),
            algo_config=_build(ALGORITHMS[algo].config_class, {
                name: RENAMED_VALUES.get((name, value), value) if isinstance(value, str) else value
                for name, value in data["algo_config"].items()}),
            intrinsic_config=_build(APTConfig, data.get("intrinsic_config", {})),
        )


RENAMED_VALUES = {("network", "thesis"): "dqn2013", ("critic_network", "thesis"): "dqn2013"}
"""Option values renamed since; the configs and checkpoints of runs written before still load."""


def _build(cls: type, values: dict[str, Any]):
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = set(values) - set(known)
    if unknown:
        raise ValueError(f"unknown {cls.__name__} fields: {', '.join(sorted(unknown))}")
    converted = {name: tuple(v) if isinstance(v, list) else v for name, v in values.items()}
    return cls(**converted)


THESIS_PRETRAIN_SCHEDULE: dict[str, dict[str, Any]] = {
    # The thesis's reward-free PPG schedule on Ms. Pac-Man: APT rewards only, longer rollouts, bigger minibatches.
    "run": {"intrinsic": "apt"},
    "env": {"num_envs": 16, "reward_scale": 0.1},
    "algo_config": {"num_steps": 512, "minibatch_size": 512, "learning_rate": 1e-4, "critic_learning_rate": 1e-3,
                    "clip": 0.25, "entropy_coef": 0.01, "policy_iterations": 32, "aux_epochs": 3,
                    "beta_clone": 1.0, "aux_kl_stop": 0.01, "network": "dqn2013", "critic_network": "nature",
                    "chunk_size": 64},
}
REWARD_FREE_APT: dict[str, Any] = {"extrinsic_coef": 0.0, "intrinsic_coef": 1.0, "contrastive_chunk_size": 64}
"""Gradient accumulation / caching in chunks of 64 states: the same updates with ~30 MB of activations
instead of 100-300 MB, so 32 stored rollouts stay under 3 GB (measured: PPG phases no slower; a
contrastive update 0.47 s against 0.41 s unchunked, 0.63 s at 512)."""

# Named presets: algorithm -> preset -> section (run, env, algo_config, intrinsic_config) -> overrides.
PRESETS: dict[str, dict[str, dict[str, dict[str, Any]]]] = {
    "ppg": {
        "cartpole": {
            "env": {"num_envs": 8},
            "algo_config": {"num_steps": 64, "minibatch_size": 64, "epochs": 2, "gamma": 0.98, "gae_lambda": 0.8,
                            "learning_rate": 1e-3, "clip": 0.2, "entropy_coef": 0.0, "policy_iterations": 4,
                            "aux_epochs": 2},
        },
        "minatar": {
            "env": {"num_envs": 16},
            "algo_config": {"num_steps": 128, "minibatch_size": 256, "network": "minatar", "policy_iterations": 8,
                            "epochs": 2, "learning_rate": 5e-4},
        },
        "thesis": {
            # The thesis's fine-tuning set-up on Ms. Pac-Man.
            "env": {"num_envs": 16, "reward_scale": 0.1},
            "algo_config": {"num_steps": 256, "minibatch_size": 32, "learning_rate": 3e-4, "critic_learning_rate": 1e-3,
                            "clip": 0.25, "entropy_coef": 0.01, "policy_iterations": 32, "aux_epochs": 3,
                            "beta_clone": 1.0, "aux_kl_stop": 0.01, "network": "dqn2013", "critic_network": "nature",
                            "chunk_size": 64},
        },
        "pretrain": {
            # Reward-free pre-training on Atari (pretrain's default there): the thesis's PPG schedule with
            # the representation that does not collapse on Ms. Pac-Man (APTConfig's defaults).
            **THESIS_PRETRAIN_SCHEDULE,
            "intrinsic_config": REWARD_FREE_APT,
        },
        "thesis-pretrain": {
            # The thesis's reward-free pre-training, literally, with its contrastive set-up (which collapses
            # on Ms. Pac-Man; kept for reproduction).
            **THESIS_PRETRAIN_SCHEDULE,
            "intrinsic_config": {**REWARD_FREE_APT, "contrastive_loss": "nt-xent", "temperature": 0.1,
                                 "encoder_learning_rate": 1e-3, "warmup_updates": 0, "spectral_norm": True,
                                 "head_norm": "none", "shift_probability": 1.0, "brightness": 0.2,
                                 "representation_stride": 1},
        },
    },
    "ppo": {
        "cartpole": {
            # RL Zoo's tuned CartPole-v1 settings: solves within 100k steps.
            "env": {"num_envs": 8},
            "algo_config": {
                "num_steps": 32, "minibatch_size": 256, "epochs": 20, "gamma": 0.98, "gae_lambda": 0.8,
                "learning_rate": 1e-3, "anneal_lr": True,
            },
        },
        "atari": {
            # Schulman et al. (2017) / CleanRL ppo_atari.
            "env": {"num_envs": 8, "reward_clip": 1.0},
            "algo_config": {
                "num_steps": 128, "minibatch_size": 256, "epochs": 4, "learning_rate": 2.5e-4, "anneal_lr": True,
                "clip": 0.1, "clip_value": 0.1, "entropy_coef": 0.01, "network": "nature", "shared": True,
            },
        },
        "minatar": {
            "env": {"num_envs": 8},
            "algo_config": {
                "num_steps": 128, "minibatch_size": 256, "epochs": 4, "learning_rate": 2.5e-4, "anneal_lr": True,
                "entropy_coef": 0.01, "network": "minatar", "shared": True,
            },
        },
        "mujoco": {
            # CleanRL ppo_continuous_action.
            "env": {"num_envs": 1, "normalize_observation": True, "normalize_reward": True},
            "algo_config": {"num_steps": 2048, "minibatch_size": 64, "epochs": 10, "anneal_lr": True},
        },
    },
    "npg": {
        "cartpole": {
            # TRPO's cartpole settings with a fixed step whose quadratic KL model is 0.2^2 / 2 = 0.02.
            "env": {"num_envs": 2},
            "algo_config": {"num_steps": 512, "gamma": 0.99, "gae_lambda": 0.98, "step_size": 0.2, "value_epochs": 10},
        },
    },
    "trpo": {
        "cartpole": {
            # After RL Zoo's CartPole-v1 settings (2 x 512 steps per update, lambda 0.98); 475+ by about 25k steps.
            "env": {"num_envs": 2},
            "algo_config": {"num_steps": 512, "gamma": 0.99, "gae_lambda": 0.98, "value_epochs": 10},
        },
        "mujoco": {
            # RL Zoo-like: 1024 steps per update, delta 0.01, 10 critic epochs, observation normalisation.
            "env": {"num_envs": 1, "normalize_observation": True},
            "algo_config": {"num_steps": 1024, "gamma": 0.99, "gae_lambda": 0.95, "max_kl": 0.01, "cg_damping": 0.1,
                            "value_learning_rate": 1e-3, "value_epochs": 10, "value_minibatch_size": 128},
        },
    },
    "reinforce": {
        "cartpole": {
            # Tuned here: with a baseline, 8 episodes per update; 475+ (last 20 episodes) by about 150k steps.
            "env": {"num_envs": 8},
            "algo_config": {"learning_rate": 5e-3},
        },
    },
    "a2c": {
        "cartpole": {
            # Tuned here from SB3's defaults (RMSprop 7e-4): 8 x 8-step rollouts, gamma 0.98, lambda 0.9;
            # 475+ (last 20 episodes) by about 200k steps.
            "env": {"num_envs": 8},
            "algo_config": {"num_steps": 8, "gamma": 0.98, "gae_lambda": 0.9},
        },
        "pendulum": {
            # The notebook's pendulum (voidrl/InvertedPendulumFall-v5): its 25 actors, [40, 20] networks,
            # gamma 0.95, 3-mode mixture policy with persistence 0.965, Adam; tuned here to n = 32 steps,
            # lr 1e-3, lambda 0.95, entropy 0.01, normalised observations and advantages. With seeds 0-2
            # greedy evaluations balance all 1000 steps by 250k-400k steps; at this constant lr they can
            # fall back later, so keep the best agent (--eval-every; benchmarks/RESULTS.md).
            "env": {"num_envs": 25, "normalize_observation": True},
            "algo_config": {"num_steps": 32, "optimizer": "adam", "learning_rate": 1e-3, "gamma": 0.95,
                            "gae_lambda": 0.95, "entropy_coef": 0.01, "normalize_advantages": True,
                            "hidden_sizes": (40, 20), "continuous_policy": "mixture", "mixture_modes": 3,
                            "action_persistence": 0.965},
        },
    },
}


ENV_PRESETS = {"CartPole-v1": "cartpole", "voidrl/InvertedPendulumFall-v5": "pendulum"}
"""Environments whose default preset is their own rather than their suite's (when the algorithm has it)."""


def default_preset(algo: str, env_id: str) -> str | None:
    """The preset applied when none is named: per-environment defaults."""
    suite = suite_of(env_id)
    name = ENV_PRESETS.get(env_id, suite)
    if algo == "ppg" and suite == "atari":
        name = "thesis"
    return name if name in PRESETS.get(algo, {}) else None


def make_config(algo: str, preset: str | None = None, **overrides: Any) -> TrainConfig:
    """Defaults, then the preset (given or the env's default), then ``overrides`` by field name.

    ``overrides`` may name fields of RunConfig, EnvConfig or the algorithm's config.
    """
    config = TrainConfig(algo=algo)
    sections = config.sections()
    owner = {f.name: section for section, obj in sections.items() for f in dataclasses.fields(obj)}
    unknown = set(overrides) - set(owner)
    if unknown:
        raise ValueError(f"unknown option(s) for {algo}: {', '.join(sorted(unknown))}")
    if "env" in overrides:
        if not isinstance(overrides["env"], str):
            raise ValueError(f"env must be a str (an environment id), got {overrides['env']!r}")
        config.run.env = overrides["env"]
    if preset is None:
        preset = default_preset(algo, config.run.env)
    elif preset not in PRESETS.get(algo, {}):
        raise ValueError(f"unknown preset {preset!r} for {algo}; choose one of {', '.join(PRESETS.get(algo, {}))}")
    if preset is not None:
        for section, values in PRESETS[algo][preset].items():
            for name, value in values.items():
                setattr(sections[section], name, value)
    for name, value in overrides.items():
        setattr(sections[owner[name]], name, value)
    return config


@cache
def field_docs(cls: type) -> dict[str, str]:
    """The docstring written under each field of dataclass ``cls`` (read from its source)."""
    docs = {}
    for base in reversed(cls.__mro__[1:]):
        if dataclasses.is_dataclass(base):
            docs.update(field_docs(base))
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body
    for node, following in zip(body, body[1:]):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[node.target.id] = " ".join(following.value.value.split())
    return docs


def check_field_types(config: Any) -> None:
    """Every field of dataclass ``config`` holds a value of its annotated type, and floats are finite.

    An int is accepted for a float field; None only where the field is optional.
    """
    for field_ in dataclasses.fields(config):
        name, value = field_.name, getattr(config, field_.name)
        base, optional = field_type(type(config), name)
        if value is None and optional:
            continue
        sequence = typing.get_origin(base) is tuple
        kind = typing.get_args(base)[0] if sequence else base
        items = value if sequence and isinstance(value, tuple) else (value,)
        if (sequence and not isinstance(value, tuple)) or not all(_is_instance(item, kind) for item in items):
            expected = f"a sequence of {kind.__name__} values" if sequence else f"{'an' if kind is int else 'a'} {kind.__name__}"
            raise ValueError(f"{name} must be {expected}{' or None' if optional else ''}, got {value!r}")
        if kind is float and not all(math.isfinite(item) for item in items):
            raise ValueError(f"{name} must be a finite number, got {value!r}")


def _is_instance(value: Any, kind: type) -> bool:
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def field_type(cls: type, name: str) -> tuple[type, bool]:
    """``(base type, optional)`` of a field: ``float | None`` -> ``(float, True)``."""
    hint = typing.get_type_hints(cls)[name]
    args = typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        base = next(a for a in args if a is not type(None))
        return base, True
    return hint, False
