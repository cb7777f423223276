#!/usr/bin/env python
"""Throughput benchmark: voidrl PPO against Stable-Baselines3 PPO, same machine, same run.

For each scenario it measures

1. raw vector-environment steps/s with random actions (voidrl's ``make_env`` and,
   for reference, the VecEnv SB3 trains on),
2. voidrl's end-to-end PPO training steps/s, split into environment stepping,
   action inference (rest of the rollout collection) and updates, read from the
   run's ``metrics.csv``,
3. SB3's PPO with the same hyperparameters on the same task, with the same split
   measured by a ``PPO`` subclass (timed ``VecEnv.step``, ``collect_rollouts``
   and ``train``),
4. the ratios voidrl/SB3 and PPO-training/raw-env,

and prints them as markdown. Not a test: run it by hand::

    python benchmarks/bench_ppo.py                       # both scenarios
    python benchmarks/bench_ppo.py --scenario cartpole --steps 32768 --threads 1
    python benchmarks/bench_ppo.py --out benchmarks/results.md

"Steady" throughput leaves out the first update of each run (warm-up: allocator,
first convolution calls, ...) and counts collection plus update time only.
"Wall" throughput divides all steps by the wall time of the whole call,
construction of environments, networks and loggers included.

Timings on a small shared VM vary by 20-30% from run to run, so each library
trains ``--repeats`` times (default 2), alternating which goes first, and the
report pools them and shows the spread. CPU time used by other processes
during each run is measured (/proc/stat) and a busy machine is flagged: with
torch's intra-op threads on every core, a competing process can slow small ops
down by 10-100x.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from pool import cpu_model

REPO = Path(__file__).resolve().parent.parent
BUSY_LOAD = 0.2
"""Other processes using more CPU cores than this (before or during a training run) earn a warning."""


# --------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    voidrl_env: str
    voidrl_preset: str | None
    voidrl_overrides: dict
    sb3_policy: str
    sb3_kwargs: dict
    num_envs: int
    num_steps: int
    default_steps: int
    notes: tuple[str, ...] = ()

    @property
    def steps_per_update(self) -> int:
        return self.num_envs * self.num_steps


# SB3's PPO defaults, written out so both libraries get them explicitly.
CARTPOLE = Scenario(
    name="cartpole",
    title="CartPole-v1, 8 envs x 2048 steps, MLP 64-64 tanh (separate actor/critic), SB3 defaults",
    voidrl_env="CartPole-v1",
    voidrl_preset=None,  # CartPole's default preset is overridden field by field below
    voidrl_overrides=dict(
        num_envs=8, num_steps=2048, minibatch_size=64, epochs=10, learning_rate=3e-4, adam_eps=1e-5,
        gamma=0.99, gae_lambda=0.95, clip=0.2, clip_value=None, entropy_coef=0.0, value_coef=0.5,
        max_grad_norm=0.5, normalize_advantages=True, target_kl=None,
        shared=False, network="mlp", hidden_sizes=(64, 64),
    ),
    sb3_policy="MlpPolicy",
    sb3_kwargs=dict(
        n_steps=2048, batch_size=64, n_epochs=10, learning_rate=3e-4, gamma=0.99, gae_lambda=0.95,
        clip_range=0.2, clip_range_vf=None, ent_coef=0.0, vf_coef=0.5, max_grad_norm=0.5,
        normalize_advantage=True, target_kl=None,
    ),
    num_envs=8,
    num_steps=2048,
    default_steps=6 * 8 * 2048,  # 6 updates
    notes=(
        "CartPole: voidrl steps gymnasium's numpy-vectorised `CartPoleVectorEnv` (same-step autoreset); "
        "SB3 steps 8 `gym.make` envs (Monitor, TimeLimit, env checker) in a `DummyVecEnv`.",
    ),
)

ATARI = Scenario(
    name="atari",
    title="Ms. Pac-Man, 8 envs x 128 steps, Nature CNN (shared), 4 epochs x 256, lr 2.5e-4, clip 0.1",
    voidrl_env="ALE/MsPacman-v5",
    voidrl_preset="atari",
    voidrl_overrides=dict(
        num_envs=8, num_steps=128, minibatch_size=256, epochs=4, learning_rate=2.5e-4, adam_eps=1e-5,
        gamma=0.99, gae_lambda=0.95, clip=0.1, clip_value=None, entropy_coef=0.01, value_coef=0.5,
        max_grad_norm=0.5, normalize_advantages=True, target_kl=None,
        shared=True, network="nature", reward_clip=1.0, episodic_life=True,
    ),
    sb3_policy="CnnPolicy",
    sb3_kwargs=dict(
        n_steps=128, batch_size=256, n_epochs=4, learning_rate=2.5e-4, gamma=0.99, gae_lambda=0.95,
        clip_range=0.1, clip_range_vf=None, ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5,
        normalize_advantage=True, target_kl=None,
    ),
    num_envs=8,
    num_steps=128,
    default_steps=8 * 8 * 128,  # 8 updates
    notes=(
        "Atari: voidrl uses ale-py's C++ `AtariVectorEnv` (multithreaded, frame stack and 84x84 grayscale "
        "resize in C++); SB3 uses `make_atari_env(\"MsPacmanNoFrameskip-v4\")` = 8 python envs in a "
        "`DummyVecEnv` with `AtariWrapper` (cv2 resize) + `VecFrameStack(4)` + `VecTransposeImage`.",
        "Atari, same in both: 18 actions (SB3 gets `full_action_space=True`), frame skip 4 with max-pool "
        "of the last 2 frames, up to 30 no-ops at reset, no sticky actions, 108,000-frame limit, "
        "life loss ends the training episode, rewards clipped to [-1, 1] (sign for Atari's integer rewards), "
        "reported returns are whole-game raw scores.",
        "Atari, different: SB3's `FireResetEnv` presses FIRE then UP after every reset and, through "
        "`EpisodicLifeEnv`'s soft reset, after every life loss (plus one no-op step there); ALE's vector env "
        "(`use_fire_reset` left at its default) presses FIRE once at a game reset, within the no-ops. "
        "Both resize with OpenCV INTER_AREA.",
    ),
)

SCENARIOS = {s.name: s for s in (CARTPOLE, ATARI)}

GENERAL_NOTES = (
    "Each library trains `--repeats` times with the same seed, alternating which goes first; steps are per "
    "run, timings pooled over runs (steady steps/s: pooled, then the slowest-fastest run in brackets). "
    "steps/s (steady): updates 2..n of each run only (first update = warm-up), collection + update time; "
    "steps/s (wall): all steps / wall time of the whole call, setup (envs, nets, loggers) included.",
    "env = time inside the vector env's `step`; inference = rest of rollout collection (policy forward, "
    "sampling, storage, bootstrap values); update = PPO's update (voidrl `algo.update`, SB3 `train()`), "
    "both incl. GAE; seconds summed over the steady updates.",
    "Time ratio columns are voidrl seconds / SB3 seconds (<1: voidrl faster).",
)


# --------------------------------------------------------------------------- background load


class BackgroundLoad:
    """CPU cores used by *other* processes while it runs: machine-wide busy time (/proc/stat)
    minus this process's CPU time, over wall time. NaN where /proc/stat is unreadable."""

    def __enter__(self) -> BackgroundLoad:
        self.cores = float("nan")
        self._start = (_machine_busy_seconds(), _own_cpu_seconds(), time.perf_counter())
        return self

    def __exit__(self, *exc) -> None:
        busy, own, wall = _machine_busy_seconds(), _own_cpu_seconds(), time.perf_counter()
        if busy is not None and self._start[0] is not None:
            self.cores = max(0.0, (busy - self._start[0]) - (own - self._start[1])) / (wall - self._start[2])


def _machine_busy_seconds() -> float | None:
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    guest = sum(fields[8:10]) if len(fields) > 9 else 0  # already counted in user/nice
    return (sum(fields) - idle - guest) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime + children.ru_utime + children.ru_stime


def background_cores(seconds: float = 1.0) -> float:
    with BackgroundLoad() as load:
        time.sleep(seconds)
    return load.cores


# --------------------------------------------------------------------------- results


@dataclass
class TrainResult:
    library: str
    steps: int
    wall: float
    steps_per_update: int
    per_update: list[tuple[float, float, float]]  # (env, inference, update) seconds
    last_returns: list[float] = field(default_factory=list)
    background: float = float("nan")  # cores used by other processes during the run
    warmup: int = 1  # leading updates left out of the steady numbers
    updates: int = 0  # updates per run
    runs_sps: list[float] = field(default_factory=list)  # steady steps/s of each pooled run

    def __post_init__(self):
        self.updates = self.updates or len(self.per_update)

    @property
    def measured(self) -> list[tuple[float, float, float]]:
        return self.per_update[self.warmup:] if len(self.per_update) > self.warmup else self.per_update

    def split(self) -> tuple[float, float, float]:
        env, inference, update = (sum(col) for col in zip(*self.measured))
        return env, inference, update

    @property
    def steady_sps(self) -> float:
        return self.steps_per_update * len(self.measured) / sum(self.split())

    @property
    def wall_sps(self) -> float:
        return self.steps / self.wall


def pool(runs: list[TrainResult]) -> TrainResult:
    """Several runs of one library as one result: their steady updates pooled, walls and steps summed."""
    return TrainResult(
        runs[0].library, sum(r.steps for r in runs), sum(r.wall for r in runs), runs[0].steps_per_update,
        [u for r in runs for u in r.measured], runs[0].last_returns, max(r.background for r in runs),
        warmup=0, updates=runs[0].updates, runs_sps=[r.steady_sps for r in runs],
    )


@dataclass
class RawResult:
    library: str
    steps: int
    seconds: float

    @property
    def sps(self) -> float:
        return self.steps / self.seconds


# --------------------------------------------------------------------------- raw env throughput


def _time_random_steps(step, action_batches: list, seconds: float, warmup: int = 20) -> tuple[int, float]:
    """Call ``step`` on cycled pre-drawn action batches for ~``seconds``; returns (vector steps, time)."""
    for i in range(warmup):
        step(action_batches[i % len(action_batches)])
    calls = 0
    started = time.perf_counter()
    while True:
        for _ in range(32):
            step(action_batches[calls % len(action_batches)])
            calls += 1
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return calls, elapsed


def raw_voidrl(scenario: Scenario, seconds: float, seed: int) -> RawResult:
    from voidrl.envs import EnvConfig, make_env

    env = make_env(scenario.voidrl_env, EnvConfig(num_envs=scenario.num_envs))
    try:
        env.reset(seed)
        n = int(env.single_action_space.n)
        gen = torch.Generator().manual_seed(seed)
        batches = [torch.randint(0, n, (scenario.num_envs,), generator=gen) for _ in range(256)]
        calls, elapsed = _time_random_steps(env.step, batches, seconds)
    finally:
        env.close()
    return RawResult("voidrl", calls * scenario.num_envs, elapsed)


def raw_sb3(scenario: Scenario, seconds: float, seed: int) -> RawResult:
    from stable_baselines3.common.vec_env import VecTransposeImage

    env = make_sb3_env(scenario, seed)
    if scenario.sb3_policy == "CnnPolicy":
        env = VecTransposeImage(env)  # what SB3's PPO wraps around image envs
    try:
        env.reset()
        rng = np.random.default_rng(seed)
        n = int(env.action_space.n)
        batches = [rng.integers(0, n, scenario.num_envs) for _ in range(256)]
        calls, elapsed = _time_random_steps(env.step, batches, seconds)
    finally:
        env.close()
    return RawResult("SB3", calls * scenario.num_envs, elapsed)


# --------------------------------------------------------------------------- training runs


def train_voidrl(scenario: Scenario, steps: int, threads: int, seed: int, compile_update: bool = False,
                 bfloat16: bool = False) -> TrainResult:
    import voidrl

    with tempfile.TemporaryDirectory(prefix="bench_ppo_") as tmp:
        run_dir = Path(tmp) / "run"
        started = time.perf_counter()
        config = voidrl.make_config(
            "ppo", preset=scenario.voidrl_preset, env=scenario.voidrl_env, steps=steps, seed=seed,
            run_dir=str(run_dir), progress=False, torch_threads=threads, device="cpu", compile=compile_update,
            bfloat16=bfloat16,
            **scenario.voidrl_overrides,
        )
        assert config.steps_per_update == scenario.steps_per_update, config.steps_per_update
        voidrl.train_from_config(config)
        wall = time.perf_counter() - started
        with (run_dir / "metrics.csv").open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        with (run_dir / "episodes.csv").open(newline="") as handle:
            returns = [float(row["return"]) for row in csv.DictReader(handle)]
    per_update = [
        (float(r["time/env_seconds"]), float(r["time/inference_seconds"]), float(r["time/update_seconds"]))
        for r in rows
    ]
    return TrainResult("voidrl", int(float(rows[-1]["step"])), wall, scenario.steps_per_update, per_update,
                       returns[-20:])


def make_sb3_env(scenario: Scenario, seed: int):
    from stable_baselines3.common.env_util import make_atari_env, make_vec_env
    from stable_baselines3.common.vec_env import VecFrameStack

    if scenario.name == "cartpole":
        return make_vec_env("CartPole-v1", n_envs=scenario.num_envs, seed=seed)
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    env = make_atari_env("MsPacmanNoFrameskip-v4", n_envs=scenario.num_envs, seed=seed,
                         env_kwargs={"full_action_space": True, "repeat_action_probability": 0.0})
    return VecFrameStack(env, n_stack=4)


def _timed_ppo_class():
    from stable_baselines3 import PPO

    class TimedPPO(PPO):
        """PPO recording (env, inference, update) seconds per iteration."""

        timings: list[list[float]]

        def collect_rollouts(self, env, callback, rollout_buffer, n_rollout_steps):
            if not hasattr(self, "timings"):
                self.timings = []
            original = env.step
            env_seconds = 0.0

            def timed_step(actions):
                nonlocal env_seconds
                t0 = time.perf_counter()
                out = original(actions)
                env_seconds += time.perf_counter() - t0
                return out

            env.step = timed_step
            started = time.perf_counter()
            try:
                result = super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps)
            finally:
                total = time.perf_counter() - started
                del env.step  # back to the class's method
            self.timings.append([env_seconds, total - env_seconds, 0.0])
            return result

        def train(self):
            started = time.perf_counter()
            super().train()
            self.timings[-1][2] = time.perf_counter() - started

    return TimedPPO


def train_sb3(scenario: Scenario, steps: int, seed: int) -> TrainResult:
    TimedPPO = _timed_ppo_class()
    started = time.perf_counter()
    env = make_sb3_env(scenario, seed)
    model = TimedPPO(scenario.sb3_policy, env, seed=seed, device="cpu", verbose=0, **scenario.sb3_kwargs)
    model.learn(total_timesteps=steps)
    wall = time.perf_counter() - started
    returns = [float(info["r"]) for info in model.ep_info_buffer][-20:]
    env.close()
    per_update = [tuple(t) for t in model.timings]
    return TrainResult("SB3", int(model.num_timesteps), wall, scenario.steps_per_update, per_update, returns)


# --------------------------------------------------------------------------- report


def _git_commit() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True).stdout.strip()
        return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def environment_line() -> str:
    import ale_py
    import gymnasium
    import stable_baselines3

    return (
        f"commit {_git_commit()}; torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"stable-baselines3 {stable_baselines3.__version__}, gymnasium {gymnasium.__version__}, "
        f"ale-py {ale_py.__version__}, numpy {np.__version__}, python {platform.python_version()}; "
        f"{cpu_model()}, {os.cpu_count()} logical CPUs"
    )


def _fmt_sps(value: float) -> str:
    return f"{value:,.0f}"


def _fmt_split(seconds: float, total: float) -> str:
    return f"{seconds:.2f} s ({100 * seconds / total:.0f}%)"


def _fmt_return(values: list[float]) -> str:
    return f"{np.mean(values):.1f} (n={len(values)})" if values else "-"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def render(results: list[tuple[Scenario, RawResult, RawResult, TrainResult, TrainResult]],
           threads_note: str, load_before: float) -> str:
    lines = [
        f"### PPO throughput: voidrl vs Stable-Baselines3 ({datetime.date.today().isoformat()})",
        "",
        environment_line() + threads_note,
        "",
    ]
    during = [r.background for _, _, _, *runs in results for r in runs]
    busiest = max([load_before, *during])
    if busiest > BUSY_LOAD:
        lines += [f"**Warning: other processes used up to {busiest:.2f} CPU cores around the measurements; "
                  "with torch's intra-op threads competing for cores, small ops can slow down by 10-100x "
                  "and these numbers are unreliable.**", ""]
    lines += [
        "| scenario | run | steps | steps/s (steady) | steps/s (wall) | env | inference | update | return (last eps) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario, raw_v, raw_s, ours, theirs in results:
        lines.append(f"| {scenario.name} | voidrl raw env (random actions) | {raw_v.steps:,} | {_fmt_sps(raw_v.sps)} "
                     "| - | - | - | - | - |")
        lines.append(f"| {scenario.name} | SB3 raw VecEnv (random actions) | {raw_s.steps:,} | {_fmt_sps(raw_s.sps)} "
                     "| - | - | - | - | - |")
        for result in (ours, theirs):
            env, inference, update = result.split()
            total = env + inference + update
            runs = max(1, len(result.runs_sps))
            plural = "s" if result.updates != 1 else ""
            label = f"{result.library} PPO ({result.updates} update{plural}" + (f" x {runs} runs)" if runs > 1 else ")")
            steady = _fmt_sps(result.steady_sps)
            if runs > 1:
                steady += f" ({_fmt_sps(min(result.runs_sps))}-{_fmt_sps(max(result.runs_sps))})"
            lines.append(
                f"| {scenario.name} | {label} | {result.steps // runs:,} "
                f"| {steady} | {_fmt_sps(result.wall_sps)} | {_fmt_split(env, total)} "
                f"| {_fmt_split(inference, total)} | {_fmt_split(update, total)} | {_fmt_return(result.last_returns)} |"
            )
    lines += [
        "",
        "| scenario | voidrl/SB3 steps/s (steady) | voidrl/SB3 steps/s (wall) | voidrl/SB3 time: env | inference "
        "| update | voidrl PPO / voidrl raw env | SB3 PPO / SB3 raw env |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario, raw_v, raw_s, ours, theirs in results:
        # Per-step seconds, so runs with a different number of measured updates compare.
        ours_per = [s / (len(ours.measured) * ours.steps_per_update) for s in ours.split()]
        theirs_per = [s / (len(theirs.measured) * theirs.steps_per_update) for s in theirs.split()]
        lines.append(
            f"| {scenario.name} | {_ratio(ours.steady_sps, theirs.steady_sps)} "
            f"| {_ratio(ours.wall_sps, theirs.wall_sps)} | {_ratio(ours_per[0], theirs_per[0])} "
            f"| {_ratio(ours_per[1], theirs_per[1])} | {_ratio(ours_per[2], theirs_per[2])} "
            f"| {_ratio(ours.steady_sps, raw_v.sps)} "
            f"| {_ratio(theirs.steady_sps, raw_s.sps)} |"
        )
    lines += ["", "Notes:", "", "- Both libraries run with glibc's mmap threshold at 4 MiB and trim threshold at 64 MiB "
              "(`voidrl.training.allocator.pin_allocator_thresholds`, applied once for the whole process)."]
    for scenario, *_ in results:
        lines.append(f"- {scenario.name}: {scenario.title}.")
    loads = "; ".join(f"{scenario.name} voidrl {ours.background:.2f}, SB3 {theirs.background:.2f}"
                      for scenario, _, _, ours, theirs in results)
    lines.append(f"- CPU cores used by other processes: {load_before:.2f} just before the run; "
                 f"during training (max over runs): {loads}.")
    lines += [f"- {note}" for note in GENERAL_NOTES]
    for scenario, *_ in results:
        lines += [f"- {note}" for note in scenario.notes]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument("--steps", type=int, default=None,
                        help="training budget per library (env steps); default: 98,304 cartpole, 8,192 atari")
    parser.add_argument("--threads", type=int, default=0,
                        help="torch.set_num_threads for both libraries; 0 keeps torch's default")
    parser.add_argument("--repeats", type=int, default=2,
                        help="training runs per library, alternating which library goes first (default 2)")
    parser.add_argument("--raw-seconds", type=float, default=3.0, help="duration of each raw env measurement")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--compile", action="store_true",
                        help="voidrl's arm compiles its minibatch step (PPO's compile option); steady steps/s leave the "
                             "first update, which compiles, out; wall time keeps it")
    parser.add_argument("--bfloat16", action="store_true",
                        help="voidrl's arm runs its network's bodies in bfloat16 (the policies' bfloat16 option)")
    parser.add_argument("--out", type=Path, default=None, help="append the markdown report to this file")
    args = parser.parse_args(argv)
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be positive")
    if args.repeats < 1:
        parser.error("--repeats must be positive")
    if args.threads < 0:
        parser.error("--threads must be >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load_before = background_cores()
    if load_before > BUSY_LOAD:
        print(f"warning: other processes are using {load_before:.2f} CPU cores; timings will be noisy",
              file=sys.stderr)
    if args.threads:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    # One-time imports both libraries would otherwise pay only on first use (creating the first
    # optimizer imports torch._dynamo, ~1.5 s), so that the library run first is not charged for them.
    torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))])
    import stable_baselines3  # noqa: F401
    import voidrl  # noqa: F401
    from voidrl.training.allocator import pin_allocator_thresholds

    # voidrl's training loop pins glibc's mmap/trim thresholds for the whole process; do it
    # up front so SB3, sharing this process, gets the same allocator in every run.
    pin_allocator_thresholds()
    threads_note = ("" if args.threads else " (torch default thread count)") + (", voidrl compiled (--compile)" if args.compile else "") \
        + (", voidrl's bodies in bfloat16 (--bfloat16)" if args.bfloat16 else "")
    names = list(SCENARIOS) if args.scenario == "all" else [args.scenario]

    results = []
    for name in names:
        scenario = SCENARIOS[name]
        steps = args.steps or scenario.default_steps
        log = lambda msg: print(f"[{name}] {msg}", file=sys.stderr, flush=True)  # noqa: E731
        log("raw env, voidrl")
        raw_v = raw_voidrl(scenario, args.raw_seconds, args.seed)
        log(f"  {raw_v.sps:,.0f} steps/s; raw env, SB3")
        raw_s = raw_sb3(scenario, args.raw_seconds, args.seed)
        log(f"  {raw_s.sps:,.0f} steps/s")
        runs: dict[str, list[TrainResult]] = {"voidrl": [], "SB3": []}
        for repeat in range(args.repeats):
            order = ["voidrl", "SB3"] if repeat % 2 == 0 else ["SB3", "voidrl"]
            for library in order:
                log(f"{library} PPO, {steps:,} steps (run {repeat + 1}/{args.repeats})")
                torch.set_num_threads(threads)  # same thread count for both, whatever the other did
                with BackgroundLoad() as load:
                    if library == "voidrl":
                        result = train_voidrl(scenario, steps, threads, args.seed, args.compile, args.bfloat16)
                    else:
                        result = train_sb3(scenario, steps, args.seed)
                result.background = load.cores
                runs[library].append(result)
                log(f"  {result.steady_sps:,.0f} steps/s steady, {result.wall:.1f} s wall")
        results.append((scenario, raw_v, raw_s, pool(runs["voidrl"]), pool(runs["SB3"])))

    emit(render(results, threads_note, load_before), args.out)
    return 0


def emit(report: str, out: Path | None) -> None:
    """Print the markdown ``report`` and append it to ``out`` (when given)."""
    print(report)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a") as handle:
            handle.write(report + "\n")


if __name__ == "__main__":
    sys.exit(main())
