"""Many actors feeding one learner, on Ray.

``--actors N`` starts N Ray actors (``ActorWorker``), each stepping ``num_envs`` environments with the actor its
algorithm's builder makes (``voidrl.algos.roles``), with its own copy of the acting network; the learner, in the
driver, takes what each delivers as soon as it arrives (``Algorithm.receive``) and hands that actor its latest
weights with the request for its next chunk. Nothing here knows an agent:

- where the agent has a replay (``Algorithm.shared_replay``: R2D2, NGU, Agent57), it moves into one more Ray actor
  (``Hosted``) for the run; actors write their sequences into it and the learner samples it, each through a
  ``HostedReplay``;
- whatever else an actor hands over (a gradient for A3C; bandit states and reward statistics for NGU's family)
  travels in its delivery;
- an actor whose builder ``waits_for_weights`` (A3C) acts again only with the weights its delivery led to; the
  others act on while the learner trains.

Ray restarts an actor that dies and reruns its chunk, so the run goes on. The loop that drives them is
``voidrl.training.ray_loop.DistributedTrainer``; nothing here imports the training loop.
"""

from __future__ import annotations

import copy
import os
import socket
import time
from typing import Any

import numpy as np
import torch
from torch import nn

from voidrl.algos.roles import Builder
from voidrl.config import TrainConfig
from voidrl.envs import make_env
from voidrl.replay import Replay, Sequence, SequenceBatch
from voidrl.rollout import Collector
from voidrl.seeding import env_seed, seed_everything


def import_ray() -> Any:
    # Ray's C++ failure-signal handler would take over SIGTERM once the driver connects, print a stack trace and abort
    # (exit -6) after voidrl's own handler has checkpointed; crashes still end the process, only without that trace.
    os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
    try:
        import ray
    except ImportError:
        raise ValueError("actors > 0 needs the ray package: pip install 'ray==2.60.0' (or voidrl[ray])") from None
    return ray


def check_ray_address(address: str, timeout: float = 3.0) -> None:
    """Refuse at once an address where no Ray head listens (``ray.init`` would wait minutes). Takes
    ``host:port``, ``ray://host:port`` or ``auto`` (the cluster this machine belongs to, found as Ray finds it)."""
    if address == "auto":
        from ray._private.services import canonicalize_bootstrap_address  # Ray's own lookup (ray is pinned)

        try:
            found = canonicalize_bootstrap_address("auto")
        except ConnectionError:
            found = None
        if found is None:
            raise ValueError("ray_address auto: no Ray cluster runs on this machine; start one with `ray start --head`, "
                             "or leave --ray-address out and this run starts its own")
        address = found
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"ray_address must be host:port, ray://host:port or auto, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        raise ValueError(f"ray_address {address!r}: no Ray head answers there ({error.strerror or error}); "
                         "start one with `ray start --head` and pass the address it prints") from None


def tensor_to_wire(tensor: torch.Tensor) -> Any:
    """A tensor as Ray should carry it: a numpy array (an out-of-band buffer, where Ray's default, torch's own pickling,
    writes each tensor through ``torch.save``, tens of microseconds apiece); a dtype numpy lacks keeps torch's way."""
    tensor = tensor.detach().cpu()
    try:
        return tensor.numpy()
    except TypeError:
        return tensor.__reduce_ex__(2)


def tensor_from_wire(wire: Any) -> torch.Tensor:
    """The tensor ``tensor_to_wire`` sent: a writable copy, so that nothing keeps Ray's read-only object alive."""
    if isinstance(wire, np.ndarray):
        return torch.from_numpy(wire.copy())
    rebuild, arguments = wire
    return rebuild(*arguments)


def send_tensors_as_arrays(ray: Any) -> None:
    """Make this process's Ray send torch tensors as numpy arrays (``tensor_to_wire``): called by the driver and by
    every Ray actor of the run, each for what it sends."""
    ray.util.register_serializer(torch.Tensor, serializer=tensor_to_wire, deserializer=tensor_from_wire)


class Hosted:
    """Any object as a Ray actor (the run's replay): its methods called by name (``HostedReplay`` calls them)."""

    def __init__(self, hosted: Any):
        import ray

        send_tensors_as_arrays(ray)
        self.hosted = copy.deepcopy(hosted)  # Ray hands over numpy arrays read-only

    def call(self, name: str, *args: Any) -> Any:
        return getattr(self.hosted, name)(*args)

    def unwrap(self) -> Any:
        """The object itself, as it is now (a copy in the caller's process)."""
        return self.hosted


class HostedReplay(Replay):
    """A handle on the replay a ``Hosted`` Ray actor holds: each method a Ray call that waits for its answer."""

    def __init__(self, server: Any, ray: Any):
        self.server, self.ray = server, ray

    def call(self, name: str, *args: Any) -> Any:
        """The hosted replay's method ``name`` called with ``args``, its answer."""
        return self.ray.get(self.server.call.remote(name, *args))

    def __len__(self) -> int:
        return self.call("__len__")

    def add(self, sequences: list[Sequence]) -> None:
        self.call("add", sequences)

    def sample(self, batch_size: int) -> SequenceBatch:
        return self.call("sample", batch_size)

    def sample_due(self) -> tuple[SequenceBatch, bool] | None:
        return self.call("sample_due")

    def update_priorities(self, keys: torch.Tensor, priorities: np.ndarray | torch.Tensor) -> None:
        self.call("update_priorities", keys, priorities)

    def due_credit(self) -> float:
        return self.call("due_credit")

    def set_due_credit(self, credit: float) -> None:
        self.call("set_due_credit", credit)

    def state_dict(self) -> dict[str, Any]:
        return self.call("state_dict")

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.call("load_state_dict", state)

    def snapshot(self, since: int) -> dict[str, Any]:
        return self.call("snapshot", since)


def tensors(module: nn.Module) -> dict[str, torch.Tensor]:
    """``module``'s weights and buffers, on the CPU: what the learner hands its actors."""
    return {name: value.detach().cpu() for name, value in module.state_dict().items() if isinstance(value, torch.Tensor)}


def statistics(module: nn.Module) -> dict[str, Any]:
    """``module``'s extra states (running statistics such as NGU's novelty normalisers): what each actor keeps for itself."""
    return {name: value for name, value in module.state_dict().items() if not isinstance(value, torch.Tensor)}


def adopt_statistics(module: nn.Module, states: dict[str, Any]) -> None:
    """Load an actor's ``statistics`` into the learner's ``module`` (for its evaluations and checkpoints)."""
    for name, state in states.items():
        module.get_submodule(name.removesuffix("_extra_state").rstrip(".")).set_extra_state(state)


class ActorWorker:
    """One Ray actor: its environments, a collector, and the actor the algorithm's builder makes for it.

    Args:
        config: the run's (passed as it is, with ``builder_class``, so an algorithm registered in the driver alone has
            actors too).
        builder_class: its algorithm's builder.
        index: this actor's number among ``num_actors``.
        num_actors: the run's actors.
        update: the run's update count when it started (a resumed run's environments are reset with new seeds, as in
            the one-process loop).
        replay: the ``Hosted`` replay it writes into, or None.
        state: its state in the checkpoint.
    """

    def __init__(self, config: TrainConfig, builder_class: type[Builder], index: int, num_actors: int, update: int, replay: Any,
                 state: dict[str, Any] | None):
        import ray

        send_tensors_as_arrays(ray)
        torch.set_num_threads(1)
        self.config = config
        run, self.index = config.run, index
        seed_everything(run.seed + 7919 * (index + 1))
        self.env = make_env(run.env, config.env, gamma=config.algo_config.gamma)
        space = self.env.single_action_space
        builder = builder_class(config.algo_config, self.env.single_observation_space.shape, space)
        self.actor = builder.make_actor(index, num_actors, self.env.num_envs, None if replay is None else HostedReplay(replay, ray))
        if state is not None:
            self.actor.load_state_dict(state)
        self.collector = Collector(self.env, self.actor.acting(self.env.num_envs))
        self.collector.reset(env_seed(run.seed + index + 1, update))
        self.storage = self.collector.make_storage(self.config.algo_config.num_steps)
        self.version = -1

    def ready(self) -> int:
        """This actor's index, once it is built: its environments made and reset."""
        return self.index

    def run(self, version: int, weights: dict[str, torch.Tensor]) -> dict[str, Any]:
        """One chunk acted with the weights of ``version`` (this actor's statistics kept): its statistics, timing and
        the actor's delivery, which carries this actor's ``index``, the ``version``, its ``state`` and its network's ``statistics``."""
        policy = self.actor.policy
        if version != self.version:
            policy.load_state_dict(weights | statistics(policy))
            self.version = version
        started = time.perf_counter()
        stats = self.collector.collect(self.storage, 0)
        delivery = self.actor.deliver(self.storage) | {"index": self.index, "version": version, "state": self.actor.state_dict(),
                                                       "statistics": statistics(policy)}
        return {"stats": stats, "seconds": time.perf_counter() - started, "delivery": delivery}
