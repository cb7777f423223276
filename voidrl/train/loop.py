"""The one training loop: collect, update, log, checkpoint."""

from __future__ import annotations

import resource
import sys
import time
from collections import deque
from pathlib import Path

import torch
from tqdm import tqdm

from voidrl.algos import ALGORITHMS
from voidrl.config import TrainConfig
from voidrl.envs import make_env
from voidrl.intrinsic.apt import APTReward
from voidrl.io.checkpoint import load_checkpoint, save_checkpoint
from voidrl.io.logger import RunLogger
from voidrl.rollout import Collector, RolloutStorage
from voidrl.rollout.diagnostics import identical_action_fraction
from voidrl.train.agent import Agent, resolve_device
from voidrl.train.allocator import pin_allocator_thresholds
from voidrl.train.evaluation import PeriodicEvaluator
from voidrl.nets.parts import load_parts
from voidrl.nets.persistence import PersistentUniforms
from voidrl.train.seeding import rng_state, seed_everything, set_rng_state

CHECKPOINT_NAME = "checkpoint.pt"
HEALTHY_NAME = "healthy.pt"
"""With the collapse guard on: the last checkpoint written while the policy entropy was healthy."""


class RunDirError(ValueError):
    pass


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def env_seed(seed: int, update: int) -> int:
    """Environment reset seed; a resumed run reseeds so it does not replay the first episodes."""
    return (seed + 1_000_003 * update) % 2**31


def check_run_dir(config: TrainConfig, resume: bool) -> Path:
    """Refuse to overwrite an existing run, or to resume one that has no checkpoint."""
    run_dir = Path(config.run_dir)
    checkpoint = run_dir / CHECKPOINT_NAME
    if resume and not checkpoint.is_file():
        raise RunDirError(f"cannot resume: {str(checkpoint)!r} does not exist")
    if not resume and (checkpoint.exists() or (run_dir / "episodes.csv").exists()):
        raise RunDirError(f"run directory {str(run_dir)!r} already holds a run; pass --resume to continue it or choose another --run-dir")
    return run_dir


def train_from_config(config: TrainConfig, resume: bool = False) -> Agent:
    """Train as ``config`` says; with ``resume``, continue from ``run_dir/checkpoint.pt``."""
    config.validate()
    device = resolve_device(config.run.device)
    run_dir = check_run_dir(config, resume)
    payload = load_checkpoint(run_dir / CHECKPOINT_NAME) if resume else None
    if config.run.torch_threads:
        torch.set_num_threads(config.run.torch_threads)
    pin_allocator_thresholds()
    seed_everything(config.run.seed)

    gamma = getattr(config.algo_config, "gamma", 0.99)
    env = make_env(config.run.env, config.env, gamma=gamma)
    algo = ALGORITHMS[config.algo](config.algo_config, env.single_observation_space.shape, env.single_action_space, device)
    plugin = APTReward(config.intrinsic_config, env.single_observation_space.shape, device) if config.run.intrinsic == "apt" else None
    persistence = getattr(config.algo_config, "action_persistence", 0.0)
    action_noise = PersistentUniforms(
        env.num_envs, env.single_action_space.shape[0], persistence,
        torch.Generator().manual_seed(config.run.seed),
    ) if persistence else None
    step = update = 0
    if config.run.init_from is not None and payload is None:
        load_parts(algo.policy, config.run.init_from, config.run.init_parts)
    if payload is not None:
        algo.load_state_dict(payload["algorithm"])
        if plugin is not None:
            plugin.load_state_dict(payload["intrinsic"])
        env.load_state_dict(payload["env"])
        if action_noise is not None:
            action_noise.load_state_dict(payload["action_noise"])
        set_rng_state(payload["rng"])
        step, update = payload["step"], payload["update"]

    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(config.to_json() + "\n")
    collector = Collector(env, algo.policy, device, on_step=None if plugin is None else plugin.on_step,
                          action_noise=action_noise)
    first_obs = collector.reset(env_seed(config.run.seed, update))
    storage = RolloutStorage(
        algo.num_steps, env.num_envs, first_obs.shape[1:], first_obs.dtype,
        env.single_action_space.shape, torch.long if not env.single_action_space.shape else torch.float32, device,
    )
    logger = RunLogger(run_dir, config.to_dict(), resume_step=step if resume else None, wandb=config.run.wandb)
    evaluator = None if config.run.eval_every is None else PeriodicEvaluator(config, run_dir, step, resume)
    if evaluator is not None and payload is not None and "evaluation" in payload:
        evaluator.load_state_dict(payload["evaluation"])
    total = config.run.steps
    recent_returns: deque[float] = deque(maxlen=20)
    bar = tqdm(total=total, initial=min(step, total), unit="step", disable=not config.run.progress,
               dynamic_ncols=True, mininterval=1.0, file=sys.stderr)

    def checkpoint(healthy: bool) -> None:
        payload = {
            "config": config.to_dict(), "algorithm": algo.state_dict(), "env": env.state_dict(),
            "rng": rng_state(), "step": step, "update": update,
            **({} if plugin is None else {"intrinsic": plugin.state_dict()}),
            **({} if evaluator is None else {"evaluation": evaluator.state_dict()}),
            **({} if action_noise is None else {"action_noise": action_noise.state_dict()}),
        }
        save_checkpoint(run_dir / CHECKPOINT_NAME, payload)
        if healthy and config.run.collapse_entropy is not None:
            save_checkpoint(run_dir / HEALTHY_NAME, payload)

    def restore_healthy() -> bool:
        if not (run_dir / HEALTHY_NAME).exists():
            return False
        healthy = load_checkpoint(run_dir / HEALTHY_NAME)
        algo.load_state_dict(healthy["algorithm"])
        env.load_state_dict(healthy["env"])
        if plugin is not None:
            plugin.load_state_dict(healthy["intrinsic"])
        return True

    low_entropy_updates = 0

    try:
        while step < total:
            started = time.perf_counter()
            episodes_per_env = getattr(algo, "episodes_per_env", None)
            if episodes_per_env is not None and update > 0:  # whole episodes: every rollout starts from a reset
                collector.reset(env_seed(config.run.seed, update))
            stats = collector.collect(storage, step, episodes_per_env)
            intrinsic_metrics = {} if plugin is None else plugin.rewrite_rewards(storage)
            collected = time.perf_counter()
            metrics = algo.update(storage, progress=step / total) | intrinsic_metrics
            updated = time.perf_counter()
            steps_taken = stats.vector_steps * env.num_envs
            step += steps_taken
            update += 1
            recent_returns.extend(stats.episode_returns)
            metrics.update({
                "time/sps": steps_taken / (updated - started),
                "time/env_seconds": stats.env_seconds,
                "time/inference_seconds": stats.inference_seconds,
                "time/on_step_seconds": stats.on_step_seconds,
                "time/update_seconds": updated - collected,
                "sys/peak_rss_mb": peak_rss_mb(),
            })
            if recent_returns:
                metrics["rollout/recent_return_mean"] = sum(recent_returns) / len(recent_returns)
            if not env.single_action_space.shape:
                metrics["rollout/identical_action_fraction"] = identical_action_fraction(storage.actions)
            entropy = metrics.get("train/entropy", float("inf"))
            healthy = config.run.collapse_entropy is None or entropy >= config.run.collapse_entropy
            low_entropy_updates = 0 if healthy else low_entropy_updates + 1
            if low_entropy_updates == config.run.collapse_patience:
                restored = config.run.collapse_restore and restore_healthy()
                metrics["rollout/collapse_restored"] = float(restored)
                bar.write(
                    f"voidrl: warning: policy entropy below {config.run.collapse_entropy} for {low_entropy_updates} "
                    f"updates at step {step} (policy collapse?)"
                    + ("; restored the last healthy checkpoint" if restored else ""),
                    file=sys.stderr,
                )
                low_entropy_updates = 0
            if evaluator is not None and evaluator.due(step, final=step >= total):
                metrics |= evaluator.evaluate(Agent(config, algo.policy, env.state_dict(), step))
            logger.log_episodes(stats.episode_steps, stats.episode_returns, stats.episode_lengths)
            logger.log_metrics(step, metrics)
            logger.flush()
            if update % config.run.checkpoint_every == 0 or step >= total:
                checkpoint(healthy)
            bar.update(min(step, total) - bar.n)
            if recent_returns:
                bar.set_postfix_str(f"return(last {len(recent_returns)}) {metrics['rollout/recent_return_mean']:.1f}", refresh=False)
    finally:
        bar.close()
        logger.close()
        env.close()
    return Agent(config, algo.policy, env.state_dict(), step)
