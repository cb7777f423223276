#!/usr/bin/env python
"""APT + PPG's reward-free pre-training against plain PPG with the same settings on Ms. Pac-Man: steps/s of each,
their ratio, and where APT's extra time goes (issue 65: the bar is 0.9x).

Both run through the CLI, each in a process of its own, alternating (APT, plain, APT, plain, ...; the order flips
every repeat) so that a busy machine slows both alike:

APT + PPG
    ``voidrl pretrain ppg --env ALE/MsPacman-v5`` (the ``pretrain`` preset).
plain PPG
    ``voidrl train ppg --env ALE/MsPacman-v5 --preset-file F`` where F is the ``pretrain`` preset without its reward
    plug-in (its ``run`` and ``intrinsic_config`` sections): the same network, rollout, epochs, minibatches and
    auxiliary phase, learning from the task reward (scaled by 0.1) instead of the particle reward.

Both with ``--policy-iterations 1`` so that each rollout pays its share of an auxiliary phase (2 epochs over its own
states, as 2 epochs over 16 rollouts' every 16 rollouts do), and steps/s over collection + reward + update of every
rollout after the first (start-up, and the first rollout's later contrastive start, left out).

The split of APT's extra time: the timing columns of metrics.csv (``time/on_step_seconds``: the representation
buffer and the contrastive updates; ``time/intrinsic_seconds`` less that: the particle reward), and finer, timers
wrapped around APT's parts in the APT process (unless ``--no-split``; ~1 microsecond per call, a few hundred calls
per rollout): buffer, augmentations, the online and the target encoder's forward passes, the backward pass, the
optimiser, the target's moving average, the collapse diagnostics; the reward's encoder pass and its k-NN search.

The work itself, counted rather than timed (``--flops``: both runs once, in this process, every matmul and
convolution's floating-point operations attributed to acting, APT's contrastive updates, APT's reward and PPG's
update): the ratio the bar asks for is bounded by (PPG's work) / (PPG's + APT's work) unless APT's parts run faster per
operation than PPG's.

``--base-tree DIR`` adds APT + PPG with the code in DIR (``git archive BASE | tar -x -C DIR``) to the alternation:
before and after a change, paired.

    python benchmarks/bench_pretrain_overhead.py --repeats 3 --steps 12288 --threads 1
    python benchmarks/bench_pretrain_overhead.py --repeats 3 --steps 12288 --threads 1 --base-tree /tmp/base
    python benchmarks/bench_pretrain_overhead.py --repeats 2 --steps 12288 --threads 1 --contrastive-updates-per-step 0.015625
    python benchmarks/bench_pretrain_overhead.py --flops --steps 8192
    python benchmarks/bench_pretrain_overhead.py --report-only --run-dir DIR
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAME = ["--env", "ALE/MsPacman-v5"]
SPLIT_FILE = "apt_split.json"
STAGES = (
    ("env", "time/env_seconds"),
    ("inference", "time/inference_seconds"),
    ("APT: buffer + contrastive updates", "time/on_step_seconds"),
    ("APT: particle reward", None),  # time/intrinsic_seconds less the on_step time it includes
    ("policy phase", "time/policy_phase_seconds"),
    ("critic phase", "time/critic_phase_seconds"),
    ("aux phase", "time/aux_phase_seconds"),
)


def plain_preset_file(directory: Path) -> Path:
    """The ``pretrain`` preset without its reward plug-in, as a preset file."""
    from voidrl.configs.ppg import PRESETS

    path = directory / "pretrain-without-apt.json"
    path.write_text(json.dumps({section: values for section, values in PRESETS["pretrain"].items()
                                if section not in ("run", "intrinsic_config")}, indent=1))
    return path


def commands(steps: int, preset_file: Path, contrastive_updates_per_step: float | None = None) -> dict[str, list[str]]:
    common = [*GAME, "--steps", str(steps), "--policy-iterations", "1"]
    apt_options = [] if contrastive_updates_per_step is None else ["--contrastive-updates-per-step", str(contrastive_updates_per_step)]
    return {"apt": ["pretrain", "ppg", *common, *apt_options], "plain": ["train", "ppg", *common, "--preset-file", str(preset_file)]}


# ---------------------------------------------------------------------------------------------------------------
# In the APT process: timers around APT's parts.

class Timers:
    """Exclusive seconds (less the timed parts called inside) and calls per part; ``phase`` is the APT entry point
    running now (on_step, reward) or None: parts outside a phase are not timed."""

    def __init__(self):
        self.seconds: collections.Counter = collections.Counter()
        self.calls: collections.Counter = collections.Counter()
        self.phase: str | None = None
        self.inner: list[float] = []
        """Per open part: seconds of the timed parts inside it so far."""
        self.first_rollout = True
        """Until the first rollout's reward is done: its counts are dropped then (as steps/s leaves it out)."""

    def wrap(self, owner, name: str, label: str, phase: str | None = None, key=None) -> None:
        """Time ``owner.name`` as ``label`` (``key()`` may add a suffix); with ``phase`` it opens that phase."""
        original = getattr(owner, name)
        timers = self

        def timed(*args, **kwargs):
            if phase is None and timers.phase is None:
                return original(*args, **kwargs)
            outer = timers.phase
            timers.phase = phase or outer
            tag = f"{timers.phase}/{label}{key() if key else ''}"
            timers.inner.append(0.0)
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                timers.seconds[tag] += elapsed - timers.inner.pop()
                timers.calls[tag] += 1
                if timers.inner:
                    timers.inner[-1] += elapsed
                timers.phase = outer
                if phase == "reward" and timers.first_rollout:
                    timers.seconds.clear(), timers.calls.clear()
                    timers.first_rollout = False

        setattr(owner, name, timed)


def install_timers() -> Timers:
    import torch

    from voidrl.intrinsic import apt
    from voidrl.intrinsic.buffer import RepresentationBuffer
    from voidrl.nets.encoders import APTEncoder
    from voidrl.nets.flat import TrainedParameters

    def grad() -> str:
        return "" if torch.is_grad_enabled() else " (no grad)"

    timers = Timers()
    timers.wrap(apt.APTReward, "observe", "rest", phase="on_step")
    timers.wrap(apt.APTReward, "intrinsic_rewards", "rest", phase="reward")
    timers.wrap(RepresentationBuffer, "add", "buffer add")
    timers.wrap(RepresentationBuffer, "sample", "buffer sample")
    timers.wrap(apt.APTReward, "draw_views", "draw views")
    timers.wrap(apt, "augment", "augment", key=grad)
    timers.wrap(APTEncoder, "forward", "encoder forward", key=grad)
    timers.wrap(apt.APTReward, "embed", "projection head forward", key=grad)  # what embed adds to the two above
    timers.wrap(apt.APTReward, "contrastive_loss", "loss")
    timers.wrap(torch.Tensor, "backward", "backward")
    timers.wrap(TrainedParameters, "step", "optimiser step")
    timers.wrap(apt.APTReward, "update_target", "target moving average")
    timers.wrap(apt, "representation_metrics", "collapse diagnostics")
    timers.wrap(apt, "knn_distances", "k-NN distances")
    timers.wrap(apt, "particle_reward", "particle reward")
    timers.wrap(apt, "episode_sums", "episode sums")
    return timers


def child(run_dir: Path, argv: list[str]) -> int:
    """Run ``voidrl ARGV`` in this process with the timers; write their totals to run_dir/apt_split.json."""
    timers = install_timers()
    from voidrl.cli import main as voidrl_main

    status = voidrl_main([*argv, "--run-dir", str(run_dir)])
    (run_dir / SPLIT_FILE).write_text(json.dumps({"seconds": timers.seconds, "calls": timers.calls}, indent=1))
    return status


# ---------------------------------------------------------------------------------------------------------------
# Floating-point operations by part, in this process.

def count_flops(argv: list[str], run_dir: Path) -> dict[str, float]:
    """``voidrl ARGV`` in this process (one torch thread); matmul and convolution FLOPs per steady rollout (the first
    rollout left out) by part: acting, APT's on_step (contrastive updates), APT's reward, the algorithm's update."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import flop_registry

    from voidrl.algos import ALGORITHMS
    from voidrl.cli import main as voidrl_main
    from voidrl.intrinsic import apt
    from voidrl.rollout.collector import Collector

    counts: collections.Counter = collections.Counter()
    sections: list[str] = []
    rollouts = [0]

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if sections and func.overloadpacket in flop_registry:
                counts[sections[-1]] += flop_registry[func.overloadpacket](*args, **(kwargs or {}), out_val=out)
            return out

    def section(owner, name: str, label: str) -> None:
        original = getattr(owner, name)

        def counted(*args, **kwargs):
            sections.append(label)
            try:
                return original(*args, **kwargs)
            finally:
                sections.pop()
                if label == "update":
                    rollouts[0] += 1
                    if rollouts[0] == 1:
                        counts.clear()

        setattr(owner, name, counted)

    section(Collector, "collect", "acting (policy + critic inference)")
    section(apt.APTReward, "observe", "APT: contrastive updates")
    section(apt.APTReward, "intrinsic_rewards", "APT: particle reward")
    section(ALGORITHMS["ppg"], "update", "update")
    torch.set_num_threads(1)
    with Count():
        voidrl_main([*argv, "--torch-threads", "1", "--no-progress", "--run-dir", str(run_dir)])
    return {name: value / max(1, rollouts[0] - 1) for name, value in counts.items()}


def flops_report(steps: int, scratch: Path) -> list[str]:
    argv = commands(steps, plain_preset_file(scratch))
    measured = {name: count_flops(argv[name], scratch / f"flops-{name}") for name in ("apt", "plain")}
    lines = ["## Work per steady rollout (4,096 steps): matmul and convolution GFLOP", "",
             "| part | APT + PPG | plain PPG |", "|---|---:|---:|"]
    parts = sorted(set(measured["apt"]) | set(measured["plain"]))
    lines += [f"| {part} | {measured['apt'].get(part, 0) / 1e9:,.0f} | {measured['plain'].get(part, 0) / 1e9:,.0f} |" for part in parts]
    totals = {name: sum(values.values()) for name, values in measured.items()}
    lines += [f"| **in all** | {totals['apt'] / 1e9:,.0f} | {totals['plain'] / 1e9:,.0f} |", "",
              f"Plain PPG's work / APT + PPG's: **{totals['plain'] / totals['apt']:.3f}** (the steps/s ratio at equal "
              "speed per operation, the environment's own time left out).", ""]
    return lines


# ---------------------------------------------------------------------------------------------------------------
# The driver.

def run(argv: list[str], run_dir: Path, threads: int, split: bool, tree: Path = ROOT) -> None:
    """``voidrl ARGV`` with the code in ``tree``, in a process of its own (with the timers if ``split``)."""
    launcher = [sys.executable, __file__, "--child", str(run_dir), "--"] if split else [sys.executable, "-m", "voidrl"]
    tail = ["--torch-threads", str(threads), "--no-progress"] + ([] if split else ["--run-dir", str(run_dir)])
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": str(threads)}
    done = subprocess.run(launcher + argv + tail, cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_pretrain_overhead: `{' '.join(argv)}` failed:\n{done.stdout[-1500:]}{done.stderr[-1500:]}")


def steady_rows(run_dir: Path) -> list[dict[str, str]]:
    from voidrl.io.report import run_csv_rows

    rows = run_csv_rows(run_dir, "metrics.csv")
    return rows[1:] or rows


def steady_speed(run_dir: Path) -> tuple[int, float]:
    """Steps and seconds (collection + reward + update) of every rollout after the first."""
    from voidrl.io.report import run_csv_rows

    rows = run_csv_rows(run_dir, "metrics.csv")
    steps = [0] + [int(float(row["step"])) for row in rows]
    taken = [b - a for a, b in zip(steps, steps[1:])]
    pairs = list(zip(taken, rows))[1:] or list(zip(taken, rows))
    return sum(n for n, _ in pairs), sum(n / float(row["time/sps"]) for n, row in pairs)


def stage_seconds(run_dir: Path) -> dict[str, float]:
    """Seconds per stage over the steady rollouts, and ``other`` (the rest of collection + reward + update)."""
    rows = steady_rows(run_dir)
    _, total = steady_speed(run_dir)
    seconds = {}
    for name, column in STAGES:
        if column is None:
            seconds[name] = sum(float(r.get("time/intrinsic_seconds") or 0) - float(r["time/on_step_seconds"]) for r in rows)
        else:
            seconds[name] = sum(float(r.get(column) or 0) for r in rows)
    seconds["other (collector, storage, GAE, logging)"] = total - sum(seconds.values())
    return seconds


def split_table(run_dirs: list[Path]) -> list[str]:
    """APT's parts from the timers over the runs' steady rollouts: seconds per rollout and share of APT's time."""
    seconds: collections.Counter = collections.Counter()
    calls: collections.Counter = collections.Counter()
    rollouts = 0
    for run_dir in run_dirs:
        path = run_dir / SPLIT_FILE
        if path.exists():
            data = json.loads(path.read_text())
            seconds.update(data["seconds"])
            calls.update(data["calls"])
            rollouts += len(steady_rows(run_dir))
    if not seconds:
        return []
    total = sum(seconds.values())
    lines = [f"APT's own time by part (timers, exclusive of the parts inside; {rollouts} steady rollouts, "
             f"{calls['on_step/loss'] / rollouts:.1f} contrastive updates each):", "",
             "| part | seconds per rollout | share of APT's time | calls per rollout |", "|---|---:|---:|---:|"]
    lines += [f"| {tag} | {value / rollouts:.3f} | {value / total:.1%} | {calls[tag] / rollouts:.1f} |"
              for tag, value in sorted(seconds.items(), key=lambda item: -item[1])]
    return lines + [f"| **APT in all** | {total / rollouts:.3f} | 100% | |", ""]


def extra_table(apt: dict[str, float], plain: dict[str, float]) -> list[str]:
    """APT + PPG's seconds per rollout beyond plain PPG's: APT's own parts, and PPG's own stages run slower or faster in
    the APT process (noise, or the memory APT's work leaves behind)."""
    extra = sum(apt.values()) - sum(plain.values())
    own = [stage for stage in apt if stage.startswith("APT")]
    rest = sum(apt[stage] - plain[stage] for stage in apt if stage not in own)
    lines = ["APT + PPG's extra time per steady rollout over plain PPG (metrics.csv, means over the runs' steady rollouts)", "",
             "| part | seconds per rollout | share of the extra |", "|---|---:|---:|"]
    lines += [f"| {stage} | {apt[stage]:.2f} | {apt[stage] / extra:.0%} |" for stage in own]
    lines += [f"| PPG's own stages (env, inference, phases), APT run less plain run | {rest:+.2f} | {rest / extra:.0%} |",
              f"| **extra in all** | {extra:.2f} | 100% |", ""]
    return lines


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        run_dir, argv = Path(sys.argv[2]), sys.argv[4:]
        sys.exit(child(run_dir, argv))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=12_288, help="steps of each run (3 rollouts of 4,096; the first is left out)")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each, alternating")
    parser.add_argument("--threads", type=int, default=2, help="torch threads of each run")
    parser.add_argument("--no-split", dest="split", action="store_false", help="run APT without the timers")
    parser.add_argument("--base-tree", default=None, metavar="DIR",
                        help="also run APT with the code in DIR (e.g. `git archive BASE | tar -x -C DIR`), paired with "
                             "today's: before/after a change")
    parser.add_argument("--contrastive-updates-per-step", type=float, default=None, metavar="X",
                        help="APT's contrastive updates per vector step instead of the preset's (0.125: 32 a rollout of "
                             "16 x 256): what less contrastive work would buy")
    parser.add_argument("--run-dir", default=None, help="where the runs go (default: a temporary directory)")
    parser.add_argument("--report-only", action="store_true", help="train nothing: report the runs in --run-dir")
    parser.add_argument("--flops", action="store_true", help="instead: count each run's work by part (in this process)")
    args = parser.parse_args()
    if args.report_only and not args.run_dir:
        parser.error("--report-only needs --run-dir")
    scratch = Path(args.run_dir or tempfile.mkdtemp(prefix="bench_pretrain_overhead_"))
    scratch.mkdir(parents=True, exist_ok=True)
    if args.flops:
        print("\n".join(flops_report(args.steps, scratch)), flush=True)
        return
    names = ["apt", "plain"] + (["apt-base"] if args.base_tree or (scratch / "apt-base-0").exists() else [])
    runs = {name: [scratch / f"{name}-{repeat}" for repeat in range(args.repeats)] for name in names}
    if not args.report_only:
        argv = commands(args.steps, plain_preset_file(scratch), args.contrastive_updates_per_step)
        argv["apt-base"] = argv["apt"]
        for repeat in range(args.repeats):
            for name in (names if repeat % 2 == 0 else names[::-1]):
                tree = Path(args.base_tree).resolve() if name == "apt-base" else ROOT
                run(argv[name], runs[name][repeat], args.threads, split=args.split and name.startswith("apt"), tree=tree)
    runs = {name: [d for d in dirs if (d / "metrics.csv").exists() or (d / "metrics.csv.gz").exists()] for name, dirs in runs.items()}
    speeds = {name: [steps / seconds for steps, seconds in map(steady_speed, dirs)] for name, dirs in runs.items()}
    ratios = [a / p for a, p in zip(speeds["apt"], speeds["plain"])]
    threads = int(float(steady_rows(runs["apt"][0])[0].get("sys/torch_threads") or args.threads))
    updates = "" if args.contrastive_updates_per_step is None else f", {args.contrastive_updates_per_step:g} contrastive updates per vector step"
    lines = [f"## APT + PPG pre-training against plain PPG, Ms. Pac-Man, {threads} torch thread(s), "
             f"{len(ratios)} paired repeat(s){updates}", "",
             "| repeat | APT + PPG steps/s | plain PPG steps/s | ratio |", "|---:|---:|---:|---:|"]
    lines += [f"| {i} | {a:.1f} | {p:.1f} | {a / p:.3f} |" for i, (a, p) in enumerate(zip(speeds["apt"], speeds["plain"]))]
    lines += ["", f"Median ratio **{statistics.median(ratios):.3f}x** (bar: 0.9x; range {min(ratios):.3f}-{max(ratios):.3f}).", ""]
    if "apt-base" in runs:
        before = [b / p for b, p in zip(speeds["apt-base"], speeds["plain"])]
        gains = [a / b for a, b in zip(speeds["apt"], speeds["apt-base"])]
        lines += [f"With the code in --base-tree: ratio to plain PPG {', '.join(f'{r:.3f}' for r in before)} (median "
                  f"{statistics.median(before):.3f}x); today's APT + PPG over it: {', '.join(f'{g:.3f}' for g in gains)} "
                  f"(median {statistics.median(gains):.3f}x).", ""]
    per_rollout = {}
    for name, dirs in runs.items():
        stages = collections.Counter()
        for run_dir in dirs:
            stages.update(stage_seconds(run_dir))
        rollouts = sum(len(steady_rows(run_dir)) for run_dir in dirs)
        per_rollout[name] = {stage: value / rollouts for stage, value in stages.items()}
    lines += extra_table(per_rollout["apt"], per_rollout["plain"])
    for name, stages in per_rollout.items():
        total = sum(stages.values())
        lines += [f"{name}: seconds per steady rollout by stage (metrics.csv)", "", "| stage | seconds per rollout | share |", "|---|---:|---:|"]
        lines += [f"| {stage} | {value:.2f} | {value / total:.1%} |" for stage, value in stages.items()]
        lines += [f"| **in all** | {total:.2f} | 100% |", ""]
    for name in runs:
        if name.startswith("apt"):
            lines += [f"{name}:", ""] + split_table(runs[name])
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
