"""R2D2's options and presets (the algorithm: ``voidrl.algos.r2d2``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from voidrl.configs.base import AlgorithmConfig
from voidrl.configs.choices import NETWORKS
from voidrl.configs.conditions import Choice, IsSet, MlpBody, Positive
from voidrl.configs.policy import validate_discounting
from voidrl.schedule import Schedule
from voidrl.validation import require_choice, require_non_negative, require_positive, require_positive_integers, validate_fraction, validate_hidden_sizes


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
        # (benchmarks/RESULTS.md, "R2D2's minatar preset"). Three-step returns, not the paper's five: at 300k
        # steps (3 seeds, greedy) Breakout 12.9 -> 16.2, Freeway 19.3 -> 27.5, SpaceInvaders 25.8 -> 36.1, Seaquest
        # 0.70 -> 0.77, which neither it nor DQN learns (benchmarks/RESULTS.md, "R2D2 with three-step returns").
        # Adam's epsilon is 1e-6 as in the minigrid preset.
        "env": {"num_envs": 16},
        "algo_config": {"network": "minatar", "num_steps": 20, "sequence_length": 40, "burn_in": 20, "sequence_period": 20,
                        "n_step": 3, "gamma": 0.99, "learning_rate": 2.5e-4, "adam_eps": 1e-6, "batch_size": 32, "samples_per_insert": 32.0,
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
    "atari-100k": {
        # Atari in 100k agent steps, as the data-efficient DQNs (DER, DrQ) learn it: no memory (a feed-forward layer in
        # the LSTM's place) on the DQN-2013 torso, sequences of 8 steps without burn-in, three-step double-Q returns
        # at gamma 0.99 without value rescaling on clipped rewards, all 100k steps kept (12,500 sequences), each
        # transition replayed 32 times (DER's one update of 32 a step), Adam at 1e-4 with epsilon 1.5e-4, a target copy
        # every 1,000 updates. From scratch on Ms. Pac-Man (3 seeds): last 100 training games 907, 808, 788, greedy
        # (30 games) 1,266, 706, 946 (benchmarks/RESULTS.md, "Off-policy at 100k, continued"; its arm scratch-q-body).
        "env": {"num_envs": 4, "reward_clip": 1.0},
        "algo_config": {"network": "dqn2013", "memory": "none", "lstm_size": 256, "head_size": 256, "num_steps": 8,
                        "sequence_length": 8, "sequence_period": 8, "burn_in": 0, "n_step": 3, "gamma": 0.99,
                        "value_rescaling": False, "learning_rate": 1e-4, "adam_eps": 1.5e-4, "batch_size": 8,
                        "samples_per_insert": 32.0, "min_replay": 200, "replay_capacity": 12500, "target_update_period": 1000},
    },
}


@dataclass
class RecurrentQConfig(AlgorithmConfig):
    """What every recurrent Q agent takes (R2D2, NGU, Agent57). Defaults are R2D2's paper's (Atari), except the
    replay's size."""

    remote_actors = True
    acts_greedily = True

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
    learning_rate: Schedule = 1e-4
    """Adam learning rate: a number, or lin_X (from X linearly to 0 over the run; Python: also a function of the
    remaining progress)."""
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
    shift_pixels: int = 0
    """DrQ's augmentation (Kostrikov et al., 2020) for image observations: each replayed sequence's frames translated by
    up to this many pixels each way (replicate padding, then a crop back to size), one offset for all its steps, drawn
    apart for the online and the target network; 0 replays the frames as stored. DrQ uses 4 on Atari's 84 x 84."""
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

    acts_only = {"trace_lambda": Choice("td_target", "retrace"), "hidden_sizes": MlpBody("network")}

    def validate(self) -> None:
        require_positive_integers(self, ("num_steps", "sequence_length", "sequence_period", "n_step", "batch_size",
                                         "target_update_period", "replay_capacity", "min_replay", "lstm_size", "head_size"))
        require_positive(self, ("learning_rate", "adam_eps", "max_grad_norm", "samples_per_insert", "epsilon_alpha"))
        require_choice(self, "network", NETWORKS)
        require_non_negative(self, ("shift_pixels",))
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


@dataclass
class GuideConfig:
    """A part of a recurrent Q agent's options (R2D2's): a guide policy that plays each episode's first steps, and
    DQfD's margin loss on what it played. The agent's builder and learner take it up (``voidrl.algos.guide``)."""

    checkpoint_options: ClassVar[tuple[str, ...]] = ("guide",)

    guide: str | None = None
    """Jump-Start RL (Uchendu et al., 2023): a saved actor-critic of the same environment (a run's checkpoint.pt, or the
    weights ``voidrl export --format weights`` writes, such as a reward-free pre-training's) whose greedy policy plays
    the first guide_steps steps of every episode, the actors' epsilon-greedy policy the rest; what it plays goes into
    the replay as theirs (one saved from another environment id guides with a warning naming both). None: no guide."""
    guide_steps: int = 1000
    """The episode steps the guide plays at the run's start; the horizon shrinks linearly to 0 over guide_decay_steps."""
    guide_decay_steps: int = 50000
    """Environment steps of the run until the guide plays no more."""
    guide_margin_coef: float = 0.0
    """DQfD's large-margin loss (Hester et al., 2018) on the replayed steps the guide played, added to the TD loss with
    this weight (DQfD's lambda is 1): max_a [Q(s, a) + guide_margin (a != a_guide)] - Q(s, a_guide), which makes the
    guide's actions the greedy ones where it played, so the Q-network keeps its play after the hand-over. 0: the guide's
    steps are learned from by TD alone."""
    guide_margin: float = 0.8
    """The margin by which the guide's action should lead every other's value (DQfD: 0.8)."""

    acts_only = {"guide_steps": IsSet("guide"), "guide_decay_steps": IsSet("guide"), "guide_margin_coef": IsSet("guide"),
                 "guide_margin": Positive("guide_margin_coef")}

    def validate_guide(self) -> None:
        require_positive_integers(self, ("guide_steps", "guide_decay_steps"))
        require_positive(self, ("guide_margin",))
        require_non_negative(self, ("guide_margin_coef",))


@dataclass
class PriorConfig:
    """A part of a recurrent Q agent's options (R2D2's): a frozen policy whose log-probabilities every Q holds."""

    checkpoint_options: ClassVar[tuple[str, ...]] = ("prior",)

    prior: str | None = None
    """A saved feed-forward actor-critic of the same environment (as ``guide`` takes), frozen inside the Q-network:
    Q(s, a) = Q_theta(s, a) + prior_coef log pi_prior(a|s), so the greedy policy starts as the prior's and the
    network learns the correction to its preferences; acting, targets and evaluation all use this Q. None: no prior."""
    prior_coef: float = 1.0
    """How much of the prior's log-probabilities each Q(s, .) holds."""

    acts_only = {"prior_coef": IsSet("prior")}

    def validate_prior(self) -> None:
        require_positive(self, ("prior_coef",))


@dataclass
class R2D2Config(PriorConfig, GuideConfig, RecurrentQConfig):
    """R2D2 hyperparameters: a recurrent Q agent's, with a guide and a prior as parts. Defaults are the paper's (Atari),
    except the replay's size."""

    presets = PRESETS
    checkpoint_options = (*GuideConfig.checkpoint_options, *PriorConfig.checkpoint_options)

    def validate(self) -> None:
        super().validate()
        self.validate_guide()
        self.validate_prior()
