"""Seeing from pixels: PPO on a MuJoCo task's state, on a VAE's latent, and on raw frames, several seeds.

First trains the VAE (``voidrl vae train`` with ``--vae-options``, reused when RUN_DIR/vae/vae.pt exists; ``--vae``
takes one already trained), then measures in this
process how fast frames render and how fast the VAE encodes them, then trains every (agent, seed) through
``voidrl train ppo`` (a finished run is reused, an interrupted one resumed), ``--parallel`` runs at a time
with ``--torch-threads`` each (1 by default). Prints the speed table, the compare table (final return, AUC and early returns
with 95% intervals), a uniformly random policy's return and each run's steps/s, and writes the learning curves.

    python benchmarks/bench_vision.py                                   # 1M steps x 3 seeds (hours per pixel run)
    python benchmarks/bench_vision.py --steps 50000 --out runs/vision   # what fitted on a 2-core CPU
    python benchmarks/bench_vision.py --env InvertedPendulum-v5 --steps 50000 --vae-options "--pixels 64 --body-weight 20 --latent-size 32"
    python benchmarks/bench_vision.py --steps 500000 --action-repeat 4 --vae runs/vae-w20-z32/vae.pt   # cheetah, PlaNet's repeat
    python benchmarks/bench_vision.py --parallel 9 --num-envs 4 --torch-threads 3 --device cuda   # a GPU machine
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

AGENTS = {
    # name: options of `voidrl train ppo` beyond --env, --steps and --seed ({vae}: the VAE file)
    "state": ["--preset", "mujoco"],
    "vae-latent": ["--preset", "mujoco", "--vision", "vae:{vae}", "--frame-stack", "3"],
    "pixels-cnn": ["--preset", "mujoco-pixels"],
}
ROLLOUT_STEPS = 2048  # the mujoco presets' steps per PPO update
PIXEL_ARM_SIZE = 64  # the mujoco-pixels preset's frame size


def run_logged(command: list[str], log: Path) -> float:
    started = time.perf_counter()
    with open(log, "a") as handle:
        handle.write(f"$ {' '.join(command)}\n")
        handle.flush()
        subprocess.run(command, stdout=handle, stderr=subprocess.STDOUT, check=True)
    return time.perf_counter() - started


def train(name: str, seed: int, vae: Path, args: argparse.Namespace) -> tuple[str, int, float]:
    """Train (or resume, or reuse) one run; returns its name, seed and wall seconds."""
    run_dir = Path(args.out) / f"{name}-s{seed}"
    options = [option.format(vae=vae) for option in AGENTS[name]]
    command = [sys.executable, "-m", "voidrl", "train", "ppo", "--env", args.env, *options, "--steps", str(args.steps),
               "--seed", str(seed), "--run-dir", str(run_dir), "--torch-threads", str(args.torch_threads), "--no-progress",
               "--action-repeat", str(args.action_repeat)]
    if args.num_envs > 1:  # the same 2,048 steps per update, gathered from several environments
        command += ["--num-envs", str(args.num_envs), "--num-steps", str(ROLLOUT_STEPS // args.num_envs)]
    if name != "state":  # the CNN and the VAE; the state MLP acts one step at a time, faster on the CPU
        command += ["--device", args.device]
    if (run_dir / "checkpoint.pt").exists():
        command.append("--resume")
    return name, seed, run_logged(command, Path(f"{run_dir}.log"))


@torch.no_grad()
def throughput(env_id: str, vae_path: Path, steps: int = 300) -> dict[str, float]:
    """Frames/s of rendering (env steps included), of the VAE's encoder alone, and of both through the wrapper,
    one environment, one torch thread."""
    from voidrl.envs import EnvConfig, make_env
    from voidrl.nets.vae import load_vae

    torch.set_num_threads(1)
    size = PIXEL_ARM_SIZE
    vae = load_vae(vae_path)[0]
    vae_size = f"{vae.shape.image_size}x{vae.shape.image_size}"
    speeds = {f"rendering {size}x{size} with gymnasium's default settings (env step + render)":
              gymnasium_default_speed(env_id, steps, size)}
    for label, config in ((f"rendering {size}x{size} (env step + render)", EnvConfig(num_envs=1, pixels=size)),
                          (f"rendering {vae_size} + VAE encoding (--vision)", EnvConfig(num_envs=1, vision=f"vae:{vae_path}"))):
        env = make_env(env_id, config)
        env.reset(0)
        actions = torch.zeros(1, *env.single_action_space.shape)
        started = time.perf_counter()
        for _ in range(steps):
            env.step(actions)
        speeds[label] = steps / (time.perf_counter() - started)
        env.close()
    batch = torch.randint(0, 256, (64, 3, vae.shape.image_size, vae.shape.image_size), dtype=torch.uint8)
    vae.encode(batch)
    started = time.perf_counter()
    for _ in range(10):
        vae.encode(batch)
    speeds[f"VAE encoder alone ({vae_size}, batches of 64)"] = 640 / (time.perf_counter() - started)
    started = time.perf_counter()
    for _ in range(3):
        vae.loss(batch)[0]
    speeds[f"VAE training forward (-ELBO, {vae_size}, batches of 64)"] = 192 / (time.perf_counter() - started)
    return speeds


def gymnasium_default_speed(env_id: str, steps: int, size: int) -> float:
    """Frames/s of ``env.render()`` on an env as gymnasium makes it (shadow map 4096, 4x multisampling)."""
    import os

    import gymnasium as gym
    import numpy as np

    from voidrl.envs.factory import route_mujoco_warnings

    route_mujoco_warnings()
    os.environ.setdefault("MUJOCO_GL", "egl")
    env = gym.make(env_id, render_mode="rgb_array", width=size, height=size)
    env.reset(seed=0)
    action = np.zeros(env.action_space.shape)
    started = time.perf_counter()
    for _ in range(steps):
        env.step(action)
        env.render()
    speed = steps / (time.perf_counter() - started)
    env.close()
    return speed


def random_policy_return(env_id: str, action_repeat: int, episodes: int = 20) -> tuple[float, float]:
    """Mean and standard deviation of the return of uniformly random actions, each held for ``action_repeat`` steps,
    over ``episodes`` episodes of the task's own time limit."""
    import gymnasium as gym
    import numpy as np

    from voidrl.envs.factory import route_mujoco_warnings

    route_mujoco_warnings()
    env = gym.make(env_id)
    env.action_space.seed(0)
    returns = []
    for episode in range(episodes):
        env.reset(seed=episode)
        total, done = 0.0, False
        while not done:
            action = env.action_space.sample()
            for _ in range(action_repeat):
                _, reward, terminated, truncated, _ = env.step(action)
                total += float(reward)
                done = terminated or truncated
                if done:
                    break
        returns.append(total)
    env.close()
    return float(np.mean(returns)), float(np.std(returns))


def mean_sps(run_dir: Path) -> float:
    """The mean of a run's ``time/sps`` column (metrics.csv, or metrics.csv.gz as results are committed); NaN without one."""
    from voidrl.io.report import run_csv_rows

    try:
        speeds = [float(row["time/sps"]) for row in run_csv_rows(run_dir, "metrics.csv") if row.get("time/sps")]
    except FileNotFoundError:
        return float("nan")
    return sum(speeds) / max(len(speeds), 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--env", default="HalfCheetah-v5")
    parser.add_argument("--agents", nargs="+", default=list(AGENTS), choices=list(AGENTS))
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--vae-frames", type=int, default=20_000, help="frames the VAE is trained on")
    parser.add_argument("--vae-epochs", type=int, default=8, help="passes over those frames")
    parser.add_argument("--vae-options", default="--body-weight 20 --latent-size 32",
                        help="further options of `voidrl vae train`, one string")
    parser.add_argument("--vae", help="a VAE file already trained on --env, used instead of training RUN_DIR/vae/vae.pt")
    parser.add_argument("--action-repeat", type=int, default=1, help="every arm's --action-repeat")
    parser.add_argument("--parallel", type=int, default=2, help="runs at a time")
    parser.add_argument("--torch-threads", type=int, default=1, help="torch CPU threads of each run")
    parser.add_argument("--num-envs", type=int, default=1,
                        help="environments per run; each update still learns from 2,048 steps (--num-steps 2048/N)")
    parser.add_argument("--device", default="cpu", help="torch device of the pixel and VAE-latent runs and of the VAE's training")
    parser.add_argument("--window", type=int, default=10,
                        help="training episodes each point of the curves and the final return average over (InvertedPendulum's "
                             "last 100 reach back to its 5-step episodes)")
    parser.add_argument("--report-only", action="store_true", help="print the tables of the runs as they stand; train nothing")
    parser.add_argument("--out", default="runs/vision")
    args = parser.parse_args()
    if min(args.steps, args.seeds, args.parallel, args.vae_frames, args.vae_epochs, args.torch_threads, args.num_envs,
           args.action_repeat, args.window) < 1:
        parser.error("--steps, --seeds, --vae-frames, --vae-epochs, --parallel, --torch-threads, --num-envs, "
                     "--action-repeat and --window must be positive")
    if args.vae and not Path(args.vae).is_file():
        parser.error(f"--vae: no file at {args.vae}")
    if ROLLOUT_STEPS % args.num_envs:
        parser.error(f"--num-envs must divide {ROLLOUT_STEPS}, got {args.num_envs}")
    out = Path(args.out)
    if args.report_only:
        from voidrl.io.report import run_csv_file

        missing = [f"{name}-s{seed}" for name in args.agents for seed in range(args.seeds)
                   if run_csv_file(out / f"{name}-s{seed}", "episodes.csv") is None]
        if missing:
            parser.error(f"--report-only: no episodes of {', '.join(missing)} under {out} (train them first, or choose "
                         f"the arms with --agents and the seeds with --seeds)")
    out.mkdir(parents=True, exist_ok=True)
    vae = Path(args.vae) if args.vae else out / "vae" / "vae.pt"
    if not args.report_only:
        if not vae.exists():
            run_logged([sys.executable, "-m", "voidrl", "vae", "train", "--env", args.env, "--frames", str(args.vae_frames),
                        "--epochs", str(args.vae_epochs), *shlex.split(args.vae_options), "--device", args.device,
                        "--run-dir", str(vae.parent), "--torch-threads", str(args.torch_threads), "--no-progress"],
                       out / "vae.log")

        print("| stage | frames/s |\n|---|---:|")
        for stage, speed in throughput(args.env, vae).items():
            print(f"| {stage} | {speed:.0f} |", flush=True)

        jobs = [(name, seed) for seed in range(args.seeds) for name in args.agents]
        with ThreadPoolExecutor(args.parallel) as pool:
            for name, seed, seconds in pool.map(lambda job: train(*job, vae, args), jobs):
                print(f"{name} seed {seed}: {seconds:.0f} s", flush=True)

    from voidrl.io.report import compare_runs, plot_runs

    groups = {name: [out / f"{name}-s{seed}" for seed in range(args.seeds)] for name in args.agents}
    prefix = out / f"{args.env}-vision"
    print(*plot_runs(groups, prefix, args.window), sep="\n")
    print(f"\n### PPO on {args.env}: {', '.join(args.agents)}; {args.steps:,} steps, {args.seeds} seeds\n")
    print(compare_runs(groups, args.steps, Path(f"{prefix}-table"), args.window))
    mean, std = random_policy_return(args.env, args.action_repeat)
    print(f"\nUniformly random actions (each held {args.action_repeat} step(s)), 20 episodes: {mean:.1f} +- {std:.1f}")
    print("\n| agent | seed | steps/s (mean of the run's updates) |\n|---|---:|---:|")
    for name, runs in groups.items():
        for seed, run_dir in enumerate(runs):
            print(f"| {name} | {seed} | {mean_sps(run_dir):.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
