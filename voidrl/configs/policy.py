"""The acting network's options, which every algorithm's config but PPG's and the replay learners' extends, and the
discount checks every config shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from voidrl.configs.base import AlgorithmConfig
from voidrl.configs.choices import CONTINUOUS_POLICIES, MEMORIES, NETWORKS, STD_PARAMETERIZATIONS
from voidrl.configs.conditions import AllOf, BoxActions, Choice, MlpBody
from voidrl.registry import CONFIGS, import_attribute
from voidrl.validation import require_choice, require_positive_integers, validate_fraction, validate_hidden_sizes


MEMORY_OPTIONS = ("memory", "lstm_size", "sequence_length", "refresh_states")
"""A recurrent policy's options: left out of the ``--help`` of the algorithms that refuse ``memory lstm``."""


@dataclass
class MemoryConfig(AlgorithmConfig):
    """A recurrent policy's options, shared by every on-policy config (PPG's and ``PolicyConfig``)."""

    takes_memory: ClassVar[bool] = False
    """Its algorithm trains a recurrent policy (``memory lstm``); the others refuse one."""
    minibatch_epochs: ClassVar[bool] = False
    """Its update takes several gradient steps on one rollout's sequences (ppo, ppg), so their stored starting
    states can go stale within it (``refresh_states``)."""

    memory: str = "none"
    """lstm, or none (feed-forward): with lstm the body's features go through an LSTM (one when shared, else one
    for the actor and one for the critic) before the heads, its state reset where an episode begins (ppo, ppg,
    a2c, a3c)."""
    lstm_size: int = 128
    """LSTM units (memory lstm)."""
    sequence_length: int = 16
    """memory lstm, ppo and ppg: the update cuts each environment's rollout into sequences of this many steps
    (num_steps and the minibatch sizes must be multiples of it) and unrolls the LSTM over whole sequences (a2c
    and a3c unroll each environment's whole rollout from the state it began with)."""
    refresh_states: bool = False
    """memory lstm, ppo and ppg: before every minibatch of the policy and critic updates, recompute each
    sequence's starting state with the current parameters (each environment's rollout unrolled from its first
    state) instead of unrolling from the state stored at collection, stale after the first gradient step. On
    CartPole without velocities it raised the greedy return at 200k steps from 421 to 486 (15 seeds a side) and
    made the update 2.3x slower (benchmarks/RESULTS.md); PPG's auxiliary phase keeps the stored states."""

    acts_only = {name: Choice("memory", "lstm") for name in ("lstm_size", "sequence_length", "refresh_states")}

    @property
    def value_gammas(self) -> tuple[float, ...]:
        """The discount of each value head, one per head: the task's ``gamma``, then, where the config sets
        ``intrinsic_gamma`` (ppo, ppg), that of a second head learning a reward plug-in's rewards alone."""
        intrinsic_gamma = getattr(self, "intrinsic_gamma", None)
        return (self.gamma,) if intrinsic_gamma is None else (self.gamma, intrinsic_gamma)

    @property
    def unroll_length(self) -> int:
        """Steps of each sample of an update's minibatches, unrolled from the state stored before its first step:
        ``sequence_length`` with an LSTM, 1 for a feed-forward policy (each step its own sample)."""
        return 1 if self.memory == "none" else self.sequence_length

    def validate_memory(self, whole_sequences: tuple[str, ...] = ()) -> None:
        """``memory`` is known and allowed for this algorithm; with an LSTM, the fields ``whole_sequences``
        (step counts the update cuts into sequences) are multiples of ``sequence_length`` and a config with a
        second value head (``intrinsic_gamma``) leaves it unset."""
        require_choice(self, "memory", MEMORIES)
        require_positive_integers(self, ("lstm_size", "sequence_length"))
        if self.memory == "none":
            if self.refresh_states:
                raise ValueError("refresh_states recomputes an LSTM's states: it needs memory lstm, not memory none")
            return
        if not self.takes_memory:
            algo = type(self).__name__.removesuffix("Config").lower()
            recurrent = ", ".join(name for name, config in memory_configs().items() if config.takes_memory)
            raise ValueError(f"memory {self.memory} is available for {recurrent}; {algo} is feed-forward (memory none)")
        uneven = [f"{name} ({getattr(self, name)})" for name in whole_sequences
                  if getattr(self, name) is not None and getattr(self, name) % self.sequence_length]
        if uneven:
            multiples = "multiples" if len(uneven) > 1 else "a multiple"
            raise ValueError(f"memory {self.memory}: {' and '.join(uneven)} must be {multiples} of sequence_length ({self.sequence_length})")
        if getattr(self, "intrinsic_gamma", None) is not None:
            raise ValueError(f"memory {self.memory} has no intrinsic value head; leave intrinsic_gamma unset")
        if self.refresh_states and not self.minibatch_epochs:
            algo = type(self).__name__.removesuffix("Config").lower()
            several = ", ".join(name for name, config in memory_configs().items() if config.minibatch_epochs)
            raise ValueError(f"refresh_states is for {several} (several gradient steps per rollout); {algo} takes one "
                             "gradient step per rollout, from the states its own parameters computed")


@dataclass
class PolicyConfig(MemoryConfig):
    """The acting network; every algorithm's config except PPG's (discrete only) extends it."""

    network: str = "auto"
    """Body: auto, mlp, nature (Nature CNN, 2015), dqn2013 (the 2013 DQN network, Müller's (2022) policy body),
    minatar, apt (APT's encoder, fc 256)."""
    hidden_sizes: tuple[int, ...] = (64, 64)
    """Hidden layer sizes of the mlp body."""
    shared: bool = False
    """One body for actor and critic (else two separate networks)."""
    continuous_policy: str = "gaussian"
    """Box actions: gaussian (diagonal), tanh_gaussian (squashed into the action bounds), or mixture
    (Leite's (2022) per-coordinate mixture of Gaussians, means clamped to [-1, 1])."""
    std_parameterization: str = "log_std"
    """Gaussian std: log_std (state-independent parameter) or softplus (state-dependent, softplus with
    an offset so it starts at exp(init_log_std))."""
    init_log_std: float = 0.0
    """Initial log standard deviation of Gaussian policies."""
    mixture_modes: int = 3
    """Modes per action coordinate of the mixture policy."""
    action_persistence: float = 0.0
    """Mixture policy only: probability that an environment keeps its mode and Gaussian quantile draws
    from the previous step (Leite (2022) uses 0.965 on the pendulum, 0.931 on the cheetah); 0 = fresh
    draws every step."""
    bfloat16: bool = False
    """Run the network's bodies (its convolutions and hidden layers) in bfloat16 under torch's autocast, when acting
    and in updates; the heads, losses, parameters and optimiser stay float32. Feed-forward policies only. On a CPU
    with bfloat16 instructions (AVX512-BF16 or AMX) PPO on Ms. Pac-Man's Nature CNN ran 1.46-1.61x float32's steps/s
    (benchmarks/RESULTS.md); on one without, it may run slower (not measured). The features round to 8 significant
    bits: the same seed is the same run with the same setting, not across it."""

    compile: bool = False
    """Compute each gradient (ppo: each minibatch's; a2c and a3c: each rollout's) as one compiled graph: torch.func.grad
    of the loss over the flat parameters, compiled by torch.compile (inductor; needs a C++ compiler), without
    autograd; the optimiser takes the step. Feed-forward policies only. On a CPU PPO's MLP update took about 0.4x the
    time (CartPole with SB3's settings: 0.64 s an update against 1.6 s); a CNN's gains little or nothing (MinAtar's
    ran slower; the convolutions dominate). Compiling costs about 10 s at the first update (about 2 s when torch's
    inductor cache holds the graph from an earlier run), so it pays from about 180k steps: benchmarks/RESULTS.md.
    The compiled kernels round differently from eager ones: the same seed is the same run with the same setting,
    not across it."""

    acts_only = {
        "hidden_sizes": MlpBody("network"),
        "continuous_policy": BoxActions(),
        "std_parameterization": AllOf(Choice("continuous_policy", "gaussian", "tanh_gaussian"), BoxActions()),
        "init_log_std": AllOf(Choice("continuous_policy", "gaussian", "tanh_gaussian"), BoxActions()),
        "mixture_modes": Choice("continuous_policy", "mixture"),
        "action_persistence": Choice("continuous_policy", "mixture"),
    }

    def validate_policy(self, whole_sequences: tuple[str, ...] = ()) -> None:
        self.validate_memory(whole_sequences)
        require_choice(self, "network", NETWORKS)
        require_choice(self, "continuous_policy", CONTINUOUS_POLICIES)
        require_choice(self, "std_parameterization", STD_PARAMETERIZATIONS)
        require_positive_integers(self, ("mixture_modes",))
        validate_hidden_sizes(self.hidden_sizes)
        if not 0.0 <= self.action_persistence < 1.0:
            raise ValueError(f"action_persistence must lie in [0, 1), got {self.action_persistence}")
        if self.action_persistence and self.continuous_policy != "mixture":
            raise ValueError("action_persistence needs continuous_policy mixture")
        if self.bfloat16 and self.memory != "none":
            raise ValueError(f"bfloat16 needs a feed-forward policy (memory none), not memory {self.memory}")
        if self.compile and self.memory != "none":
            raise ValueError(f"compile needs a feed-forward policy (memory none), not memory {self.memory}: a recurrent "
                             "policy's update ran slower compiled than eager (benchmarks/RESULTS.md)")

    def compiles(self) -> bool:
        return self.compile


def memory_configs() -> dict[str, type[MemoryConfig]]:
    """Algorithm name -> its config class, for the algorithms whose configs have ``memory`` (in the registry's order)."""
    configs = {name: import_attribute(path) for name, path in CONFIGS.items()}
    return {name: config for name, config in configs.items() if issubclass(config, MemoryConfig)}


def validate_discounting(config: Any) -> None:
    """gamma in (0, 1] and, where the config has them, gae_lambda in [0, 1] and intrinsic_gamma in (0, 1)."""
    validate_fraction("gamma", config.gamma, 0.0, 1.0 + 1e-9)
    gae_lambda = getattr(config, "gae_lambda", 0.0)
    if not 0.0 <= gae_lambda <= 1.0:
        raise ValueError(f"gae_lambda must lie in [0, 1], got {gae_lambda}")
    if getattr(config, "intrinsic_gamma", None) is not None:
        validate_fraction("intrinsic_gamma", config.intrinsic_gamma, 0.0, 1.0)
