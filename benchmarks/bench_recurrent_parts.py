"""The small costs behind issue 50's last speed changes, each against the form it replaced, one torch thread.

- a MiniGrid view as planes: ``MiniGridPlanes.observation`` against one-hot rows per index (the form before e5bc66b);
- MiniGrid-MemoryS7's 16-environment vector step (random actions) through voidrl's env factory, with either;
- TensorBoard: ``RunLogger``'s one event per step against one ``add_scalar`` per scalar through a default
  ``SummaryWriter`` (the form before 5ca079a), an update's worth (30 metrics, 40 episodes ending at distinct
  steps, then the flush);
- a categorical draw for 8 environments and 2 actions: ``Categorical.sample`` against ``torch.multinomial`` (the
  draw before a727a51);
- an LSTM of 128 over 130 inputs, forward and backward: 143 steps x 2 sequences against 40 x 8.

Run it alone on the machine:

    python benchmarks/bench_recurrent_parts.py
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np
import torch

from voidrl.envs import EnvConfig, make_env, suite_of
from voidrl.envs.gym_backend import MiniGridPlanes
from voidrl.io.logger import RunLogger
from voidrl.nets.distributions import Categorical

MEMORY = "MiniGrid-MemoryS7-v0"


def microseconds(work: Callable[[], object], calls: int, warm_up: int = 50) -> float:
    for _ in range(warm_up):
        work()
    started = time.perf_counter()
    for _ in range(calls):
        work()
    return (time.perf_counter() - started) / calls * 1e6


def one_hot_rows(view: dict) -> np.ndarray:
    """The planes as ``MiniGridPlanes`` made them before e5bc66b."""
    sizes = (11, 6, 3)
    planes = [np.moveaxis(np.eye(size, dtype=np.uint8)[view["image"][..., i]], -1, 0) for i, size in enumerate(sizes)]
    return np.concatenate(planes) * 255


def planes() -> None:
    suite_of(MEMORY)  # registers MiniGrid's ids
    wrapper = MiniGridPlanes(gym.make(MEMORY))
    view, _ = wrapper.env.reset(seed=0)
    views = [view] + [wrapper.env.step(action)[0] for action in np.random.default_rng(0).integers(3, size=199)]
    assert all(np.array_equal(wrapper.observation(v), one_hot_rows(v)) for v in views)
    for name, form in (("one index assignment (now)", wrapper.observation), ("one-hot rows per index (before)", one_hot_rows)):
        print(f"MiniGrid view as planes, {name}: {microseconds(lambda: [form(v) for v in views], 50, 5) / len(views):.1f} us")
    env = make_env(MEMORY, EnvConfig(num_envs=16))
    env.reset(0)
    actions = [torch.randint(0, 3, (16,)) for _ in range(1000)]
    for name, form in (("now", MiniGridPlanes.observation), ("one-hot rows", lambda self, view: one_hot_rows(view))):
        MiniGridPlanes.observation = form
        print(f"MemoryS7 vector step, 16 envs, planes {name}: {microseconds(lambda: [env.step(a) for a in actions], 1, 0) / 1000 / 1000:.2f} ms")


def tensorboard() -> None:
    metrics = {f"train/metric_{i}": 0.5 * i for i in range(30)}
    from torch.utils.tensorboard import SummaryWriter

    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as other:
        logger = RunLogger(folder, {})
        writer = SummaryWriter(other)  # as RunLogger made it before 5ca079a: a queue of 10 events
        update = [0]

        def one_event_per_step():
            update[0] += 1
            logger.log_episodes([update[0] * 1024 + 8 * i for i in range(40)], [1.0] * 40, [25] * 40)
            logger.log_metrics(update[0] * 1024, metrics)
            logger.flush()

        def add_scalar_each():
            update[0] += 1
            for i in range(40):
                writer.add_scalar("rollout/episode_return", 1.0, update[0] * 1024 + 8 * i)
                writer.add_scalar("rollout/episode_length", 25, update[0] * 1024 + 8 * i)
            for name, value in metrics.items():
                writer.add_scalar(name, value, update[0] * 1024)
            writer.flush()

        for name, form in (("one event per step (now)", one_event_per_step), ("add_scalar per scalar (before)", add_scalar_each)):
            print(f"TensorBoard, an update's 110 scalars, {name}: {microseconds(form, 100, 5) / 1000:.2f} ms")
        logger.close()
        writer.close()


def sampling() -> None:
    dist = Categorical(torch.randn(8, 2))
    before = lambda: torch.multinomial(dist.log_probs.exp(), 1).squeeze(-1)  # noqa: E731 - the sample before a727a51
    print(f"categorical draw, 8 x 2: Categorical.sample {microseconds(dist.sample, 20_000):.1f} us, "
          f"torch.multinomial (before) {microseconds(before, 20_000):.1f} us")


def lstm_shapes() -> None:
    lstm = torch.nn.LSTM(130, 128)
    for steps, columns in ((143, 2), (40, 8)):
        inputs = torch.randn(steps, columns, 130, requires_grad=True)
        initial = (torch.zeros(1, columns, 128), torch.zeros(1, columns, 128))
        cost = microseconds(lambda: lstm(inputs, initial)[0].sum().backward(), 100, 10)
        print(f"LSTM 130 -> 128, forward and backward, {steps} steps x {columns} sequences: {cost / 1000:.2f} ms")


def main() -> None:
    torch.set_num_threads(1)
    planes()
    tensorboard()
    sampling()
    lstm_shapes()


if __name__ == "__main__":
    main()
