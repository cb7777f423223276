"""Operator calls per vector step of acting and per update of a training run: the overhead a change cuts, counted
the same on a busy machine as on an idle one (time is not).

Runs ``voidrl train`` in this process and counts every ATen operator call (a ``TorchDispatchMode``) made inside
``Collector.collect`` and inside the algorithm's ``update``; prints the mean per vector step and per update, each
with its most frequent operators and, with ``--where``, the line of voidrl that made them. One torch thread.

    python benchmarks/bench_op_counts.py train ppo --env voidrl/CartPoleNoVelocity-v1 --preset cartpole-memory --steps 10240
    python benchmarks/bench_op_counts.py --where train ppo --env voidrl/CartPoleNoVelocity-v1 --preset cartpole-memory --steps 4096
"""

from __future__ import annotations

import argparse
import collections
import tempfile
import traceback

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class OperatorCount(TorchDispatchMode):
    """Counts the operator calls made while it is active, by operator (and by the voidrl line that made each)."""

    def __init__(self, where: bool):
        super().__init__()
        self.where = where
        self.calls: collections.Counter = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        origin = ""
        if self.where:
            frames = [frame for frame in traceback.extract_stack() if "/voidrl/" in frame.filename]
            origin = f"{frames[-1].filename.rsplit('/voidrl/', 1)[1]}:{frames[-1].lineno}" if frames else "?"
        self.calls[func.overloadpacket.__name__, origin] += 1
        return func(*args, **(kwargs or {}))


def counted(cls: type, method: str, mode: OperatorCount, sections: collections.Counter) -> None:
    """Make ``cls.method`` count its operator calls in ``mode``, its calls in ``sections[method]`` and, where it returns
    ``RolloutStats``, the vector steps in ``sections["vector steps"]``."""
    original = getattr(cls, method)

    def wrapper(self, *args, **kwargs):
        with mode:
            result = original(self, *args, **kwargs)
        sections[method] += 1
        sections["vector steps"] += getattr(result, "vector_steps", 0)
        return result

    setattr(cls, method, wrapper)


def report(title: str, mode: OperatorCount, per: float, top: int) -> str:
    lines = [f"{title}: {sum(mode.calls.values()) / per:.1f} operator calls"]
    lines += [f"  {count / per:8.2f}  {name}{'  ' + origin if origin else ''}" for (name, origin), count in mode.calls.most_common(top)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--where", action="store_true", help="count by operator and by the voidrl line that called it")
    parser.add_argument("--top", type=int, default=15, help="operators listed per section")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="a 'voidrl train ALGO ...' command line, from 'train' on")
    args = parser.parse_args()
    if args.command[:1] != ["train"] or len(args.command) < 2:
        parser.error("give a training command line from 'train' on, e.g. train ppo --env CartPole-v1 --steps 8192")
    from voidrl.algos import ALGORITHMS
    from voidrl.cli import main as voidrl_main
    from voidrl.rollout.collector import Collector

    torch.set_num_threads(1)
    sections: collections.Counter = collections.Counter()
    acting, updating = OperatorCount(args.where), OperatorCount(args.where)
    counted(Collector, "collect", acting, sections)
    counted(ALGORITHMS[args.command[1]], "update", updating, sections)
    with tempfile.TemporaryDirectory() as run_dir:
        voidrl_main([*args.command, "--torch-threads", "1", "--no-progress", "--run-dir", run_dir])
    print(report(f"acting, per vector step (of {sections['vector steps']:,} in {sections['collect']} rollouts)", acting,
                 max(1, sections["vector steps"]), args.top))
    print(report(f"updating, per update (of {sections['update']})", updating, max(1, sections["update"]), args.top))


if __name__ == "__main__":
    main()
