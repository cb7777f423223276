"""The roles of an off-policy agent, after DeepMind Acme's split: an actor core chooses actions and says what
to record, an adder cuts the steps into sequences, a replay stores them and rations their sampling, a dataset
iterator hands the learner the batches the replay allows, a learner takes one gradient step per batch, and a
builder per agent makes them all.

One builder serves both kinds of run. The learner's process asks it for its roles
(``SequenceBuilder.make_learner_roles``): the networks, the replay, the dataset over it, one ``Actor`` writing into
it, which the loop's collector drives with ``--actors 0``, and the ``Learner`` (``make_learner(networks, dataset,
replay)``), which holds the math; ``voidrl.algos.learner.SequenceAgent`` adapts them to the training loop. With
``--actors N`` the replay moves into a Ray actor, and the learner and every Ray actor's ``Actor`` (``make_actor``) use
a handle on it (``voidrl.distributed.engine.HostedReplay``). Whatever an actor hands the learner besides the replay's
sequences travels in its ``deliver`` result.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from typing import Any, ClassVar, NamedTuple, Protocol

import gymnasium as gym
import torch
from torch import nn

from voidrl.envs.base import Step
from voidrl.envs.snapshot import NotSaveable
from voidrl.replay.adder import SequenceAdder, StepRecord
from voidrl.replay.base import Replay, SequenceBatch
from voidrl.replay.dataset import ReplayDataset
from voidrl.rollout.memory import Memory
from voidrl.rollout.storage import RolloutStorage


class RecurrentActing:
    """The collector's way of acting for a ``ReplayLearner`` or an ``ActorCore`` (``acts_for``): its ``Memory`` of the
    recurrent state."""

    state_shape = (0, 0)  # the states go into the core's records (StepRecord), not the storage
    value_heads = 1  # no critic: the storage's values stay unused

    def __init__(self, acts_for: Any, num_envs: int, adder: SequenceAdder | None = None):
        self.acts_for = acts_for
        self.num_envs = num_envs
        self.adder = adder
        """Where the steps acted go (an ``Actor``'s): its sequences in progress belong to the episodes in progress."""
        self.reset()

    def reset(self) -> None:
        self.memory = Memory(self.acts_for.initial_state(self.num_envs), self.num_envs, self.acts_for.act)
        if self.adder is not None:
            self.adder.load_state_dict({}, self.num_envs)

    def state_dict(self) -> dict:
        """The memory (``Memory.state_dict``), the adder's sequences in progress and what the core keeps of the episodes
        (``ActorCore.episodes_state_dict``); ``NotSaveable`` for a core whose episodes keep what it cannot save
        (``ActorCore.keeps_episode_state``)."""
        self.check_saveable()
        return self.memory.state_dict() | {"sequences": self.adder.state_dict(), "core": self.acts_for.episodes_state_dict()}

    def load_state_dict(self, state: dict) -> None:
        self.check_saveable()
        if not isinstance(state, dict) or "sequences" not in state:
            raise ValueError("the saved state is not this actor's: it holds no sequences in progress")
        self.memory.load_state_dict({name: value for name, value in state.items() if name not in ("sequences", "core")})
        self.adder.load_state_dict(state["sequences"], self.num_envs)
        self.acts_for.load_episodes_state_dict(state.get("core", {}))  # a checkpoint from before cores kept any: none

    def check_saveable(self) -> None:
        if self.adder is None or getattr(self.acts_for, "keeps_episode_state", True):
            raise NotSaveable(f"{type(self.acts_for).__name__}: what it keeps of the episodes in progress")

    def act(self, obs: torch.Tensor, t: int, storage: RolloutStorage) -> torch.Tensor:
        return self.memory.act(obs)

    def after_step(self, step: Step, t: int, storage: RolloutStorage) -> None:
        self.memory.after_step(step)
        self.acts_for.after_step(step)

    def finish(self, storage: RolloutStorage, last_obs: torch.Tensor) -> None:
        """Nothing to bootstrap: the learner computes its own targets."""


class ActorCore(ABC):
    """Chooses actions from observations and a recurrent state, and records what the sequences need of each step.

    Args:
        policy: the network it acts with; first_env: its first environment's number among ``total_envs`` of all actors
            (None: it has every environment, however many it is first given).
    """

    def __init__(self, policy: nn.Module, first_env: int = 0, total_envs: int | None = None):
        self.policy, self.first_env, self.total_envs = policy, first_env, total_envs
        self.records: list[StepRecord] = []
        """What it recorded of each step since the last ``take_records``."""

    keeps_episode_state = False
    """It keeps something of the episodes in progress beyond the recurrent state (NGU's family members and bandit
    updates): a checkpoint cannot save them, and a resumed run starts new episodes."""

    def initial_state(self, num_envs: int) -> Any:
        return self.policy.initial_state(num_envs)

    @abstractmethod
    def act(self, obs: torch.Tensor, state: Any, episode_starts: torch.Tensor, previous_reward: torch.Tensor) -> tuple[torch.Tensor, Any]:
        """Actions ``[N]`` for ``obs [N, ...]`` and the next state; appends the step's ``StepRecord`` to ``records``.
        ``episode_starts [N]`` marks the environments whose episode begins at ``obs``; ``previous_reward [N]``."""

    def after_step(self, step: Step) -> None:
        """Each vector step's outcome (NGU's bandits read finished episodes' returns); nothing by default."""

    def take_records(self) -> list[StepRecord]:
        records, self.records = self.records, []
        return records

    def metrics(self) -> dict[str, float]:
        """What it measured since the last call (logged by the learner); nothing by default."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        """What a resumed run needs of this actor (its bandits); nothing by default. It goes into the checkpoint with the
        learner's state, from Ray actors too."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass

    def episodes_state_dict(self) -> dict[str, Any]:
        """What it carries of the episodes in progress besides the recurrent state, saved with them (the collector's
        state, as it stood before the collection a signal interrupts); nothing by default."""
        return {}

    def load_episodes_state_dict(self, state: dict[str, Any]) -> None:
        pass


class Actor:
    """An actor core, its adder and the replay they write into: what the collector drives, in the learner's process
    or in a Ray actor alike."""

    def __init__(self, core: ActorCore, adder: SequenceAdder, replay: Replay):
        self.core, self.adder, self.replay = core, adder, replay

    @property
    def policy(self) -> nn.Module:
        return self.core.policy

    def acting(self, num_envs: int) -> RecurrentActing:
        return RecurrentActing(self.core, num_envs, self.adder)

    def deliver(self, chunk: RolloutStorage) -> dict[str, Any]:
        """Cut ``chunk`` (just acted) into sequences and add them to the replay; what the learner takes of it:
        ``inserted`` (their number), ``write_seconds`` and the core's ``metrics``."""
        sequences = self.adder.add(chunk, self.core.take_records())
        started = time.perf_counter()
        self.replay.add(sequences)
        return {"inserted": len(sequences), "write_seconds": time.perf_counter() - started, "metrics": self.core.metrics()}

    def state_dict(self) -> dict[str, Any]:
        return self.core.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.core.load_state_dict(state)


class RemoteActor(Protocol):
    """What the Ray engine asks of the actor a builder makes."""

    policy: nn.Module
    """The network the learner's weights are loaded into."""

    def acting(self, num_envs: int) -> Any: ...

    def deliver(self, chunk: RolloutStorage) -> dict[str, Any]: ...

    def state_dict(self) -> dict[str, Any]:
        """What a resumed run hands this actor back (the engine sends it with each delivery)."""

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class Builder(ABC):
    """Makes one agent's remote parts from its config; the learner's process and every Ray actor use the same one.

    Args:
        config: the agent's config; obs_shape, action_space: one environment's.
    """

    waits_for_weights: ClassVar[bool] = False
    """An actor waits for the learner's next weights before acting again (A3C's actor-learners); otherwise it acts
    on while the learner trains."""

    def __init__(self, config: Any, obs_shape: tuple[int, ...], action_space: gym.Space):
        self.config, self.obs_shape, self.action_space = config, obs_shape, action_space

    def make_replay(self) -> Replay | None:
        """The replay the actors write into and the learner samples (None: the actors send the learner everything)."""
        return None

    @abstractmethod
    def make_actor(self, index: int, num_actors: int, num_envs: int, replay: Replay | None) -> RemoteActor:
        """Ray actor ``index`` of ``num_actors``, each stepping ``num_envs`` environments, with its own acting network."""


class Networks(NamedTuple):
    """A sequence learner's networks."""

    policy: nn.Module
    """The online network: what the learner trains and the learner's process's actor acts with."""
    target: nn.Module | None
    """The learner's target network, a frozen copy of ``policy`` (None: the learner has none)."""


class Learner(ABC):
    """Acme's learner: one gradient step (``step``) per batch its dataset iterator hands it, its priorities written
    back to the replay. It knows nothing of acting, the training loop or Ray (``SequenceAgent`` adapts it).

    Args:
        config: the agent's config; networks: the builder's; dataset: the batches of ``replay`` the rate limiter allows.
    """

    def __init__(self, config: Any, networks: Networks, dataset: ReplayDataset, replay: Replay):
        self.config, self.dataset, self.replay = config, dataset, replay
        self.policy, self.target = networks
        self.device = next(self.policy.parameters()).device
        self.updates = 0
        """Gradient steps taken: the version of the weights."""

    @abstractmethod
    def learn(self, batch: SequenceBatch) -> dict[str, float]:
        """One gradient step on ``batch``; its metrics (``train/...``). Updates the batch's priorities."""

    def step(self) -> dict[str, float]:
        """One gradient step on the dataset's next batch (Acme's ``Learner.step``); its metrics."""
        return self.learn(next(self.dataset))

    def advance(self, progress: float) -> dict[str, float]:
        """Set what changes over the run to its value at ``progress`` in [0, 1) (a schedule's learning rate), before the
        steps due; the values as metrics (nothing by default)."""
        return {}

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """The networks, the optimisers and ``updates``."""

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class LearnerRoles(NamedTuple):
    """What a sequence learner's process holds of its agent's roles (``SequenceBuilder.make_learner_roles``)."""

    networks: Networks
    replay: Replay
    """The replay its actors write into."""
    dataset: ReplayDataset
    """The batches of ``replay`` its rate limiter allows: what the learner's step takes."""
    actor: Actor
    """The actor of the learner's process (``--actors 0``): every environment, acting with the online network."""
    learner: Learner


class SequenceBuilder(Builder):
    """The builder of a recurrent Q agent: its networks, a rate-limited replay of sequences and the dataset over it,
    an actor core and a ``SequenceAdder`` per actor, and the learner."""

    @abstractmethod
    def make_policy(self, device: torch.device | str) -> nn.Module:
        """The acting network (the learner's online network is one too)."""

    def make_target(self, policy: nn.Module, device: torch.device | str) -> nn.Module | None:
        """The learner's target network, starting as a frozen copy of ``policy`` (None here: the learner has none)."""
        return None

    def make_networks(self, device: torch.device | str) -> Networks:
        """The online network, then its target."""
        policy = self.make_policy(device)
        return Networks(policy, self.make_target(policy, device))

    @abstractmethod
    def make_replay(self) -> Replay:
        """The replay, with its rate limiter."""

    def make_dataset(self, replay: Replay) -> ReplayDataset:
        """The learner's dataset iterator over ``replay`` (the replay itself, or a Ray actor's handle on it)."""
        return ReplayDataset(replay)

    @abstractmethod
    def make_core(self, policy: nn.Module, first_env: int, total_envs: int | None) -> ActorCore:
        """An actor core acting with ``policy`` on environments ``first_env ..`` of ``total_envs``."""

    @abstractmethod
    def make_adder(self) -> SequenceAdder: ...

    @abstractmethod
    def make_learner(self, networks: Networks, dataset: ReplayDataset, replay: Replay) -> Learner:
        """The learner training ``networks`` on ``dataset``, writing priorities into ``replay``."""

    def make_learner_roles(self, device: torch.device | str) -> LearnerRoles:
        """The roles of the learner's process, made in this order (the order of their random draws): the networks, the
        replay, the actor writing into it, the dataset over it and the learner."""
        networks = self.make_networks(device)
        replay = self.make_replay()
        actor = Actor(self.make_core(networks.policy, 0, None), self.make_adder(), replay)
        dataset = self.make_dataset(replay)
        return LearnerRoles(networks, replay, dataset, actor, self.make_learner(networks, dataset, replay))

    def make_actor(self, index: int, num_actors: int, num_envs: int, replay: Replay | None) -> Actor:
        core = self.make_core(self.make_policy("cpu"), index * num_envs, num_actors * num_envs)
        return Actor(core, self.make_adder(), replay)
