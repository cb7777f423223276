"""``voidrl vae train``: frames from random rollouts, then the VAE trained on them (Leite's (2022) recipe)."""

from __future__ import annotations

import contextlib
import csv
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from tqdm import tqdm

from voidrl.config import progress_shown
from voidrl.configs.vae import VAE_NAME, VAEProbeConfig, VAETrainConfig
from voidrl.envs.factory import route_mujoco_warnings
from voidrl.envs.gym_backend import make_rendering_env
from voidrl.envs.suites import suite_of
from voidrl.extras import require
from voidrl.io.checkpoint import CheckpointError
from voidrl.io.report import pyplot
from voidrl.io.run_dir import check_writable_dir
from voidrl.math.probes import knn_probe_r2, linear_probe_r2, masked_mean_squared_error
from voidrl.nets.vae import VAE, VAEShape, load_vae, save_vae
from voidrl.training.agent import Agent, resolve_device
from voidrl.seeding import seed_everything
from voidrl.training.threads import torch_threads


def load_frame_policy(path: str, env_id: str) -> Agent:
    """The agent whose sampled actions play part of the frame-collecting episodes: a ValueError unless it was trained
    on ``env_id``'s own observations (not pixels, not a VAE's latent, one frame)."""
    try:
        agent = Agent.load(path)
    except CheckpointError as error:
        raise ValueError(f"policy: {error}") from None
    env = agent.config.env
    if agent.config.run.env != env_id or env.pixels is not None or env.vision is not None or env.frame_stack != 1:
        raise ValueError(f"policy must be an agent trained on {env_id}'s state observations, got one trained on "
                         f"{agent.config.run.env} (pixels {env.pixels}, vision {env.vision}, frame_stack {env.frame_stack})")
    return agent


def collect_frames(env_id: str, pixels: int, count: int, keep_probability: float, action_persistence: float, seed: int,
                   progress: bool | None = None, body_masks: bool = False, policy: Agent | None = None,
                   policy_share: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``count`` frames ``[count, 3, S, S]`` uint8 of one MuJoCo env stepped with persistent random actions (each
    redrawn with probability ``1 - action_persistence``; a step's frame kept with ``keep_probability``), the
    joint positions ``[count, P]`` each frame shows (the positions of the env's observation: ``qpos`` without the
    root's coordinates the task leaves out, ``positions_skipped``), and with ``body_masks`` where each frame shows
    the body (``[count, S, S]`` bool, ``FrameRenderer.body_mask``; else None). With ``policy``, its sampled actions
    (drawn from its ``action_generator``, reseeded here with ``seed``: ``Agent.set_random_seed``), each held for its
    run's action repeat, play every episode that starts while the frames from its episodes are at most
    ``policy_share`` of those kept so far: about that share of the frames, whatever the episodes' lengths."""
    rng = np.random.default_rng(seed)
    route_mujoco_warnings(env_id)
    env, renderer = make_rendering_env(env_id, pixels)
    low, high = env.action_space.low, env.action_space.high
    data = env.unwrapped.data
    skipped = positions_skipped(env)
    frames = np.zeros((count, 3, pixels, pixels), dtype=np.uint8)
    positions = np.zeros((count, data.qpos.size - skipped))
    masks = np.zeros((count, pixels, pixels), dtype=bool) if body_masks else None
    repeat = 1 if policy is None else policy.config.env.action_repeat
    kept = from_policy = 0

    def policy_plays() -> bool:
        """Whether the episode starting now goes to the policy: while its frames are at most its share of those kept."""
        return policy is not None and policy_share > 0 and from_policy <= policy_share * kept

    if policy is not None:
        policy.set_random_seed(seed)
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(env.close)
        cleanup.callback(renderer.close)  # closed before the env
        bar = cleanup.enter_context(tqdm(total=count, desc="rendering frames", unit="frame", disable=not progress_shown(progress)))
        obs, _ = env.reset(seed=seed)
        driven = policy_plays()
        action, step = rng.normal(size=low.shape), 0
        while kept < count:
            if driven and step % repeat == 0:
                action = policy.predict(obs.astype(np.float32), deterministic=False)[0]
            elif not driven and rng.random() >= action_persistence:
                action = rng.normal(size=low.shape)
            obs, _, terminated, truncated, _ = env.step(np.clip(action, low, high))
            step += 1
            if rng.random() < keep_probability:
                frames[kept], positions[kept] = renderer.frame(), data.qpos.flat[skipped:]
                if body_masks:
                    masks[kept] = renderer.body_mask()
                kept += 1
                from_policy += driven
                bar.update()
            if terminated or truncated:
                obs, _ = env.reset()
                driven, step = policy_plays(), 0
                if policy is not None and not driven:  # random actions start afresh, not from the policy's last
                    action = rng.normal(size=low.shape)
    return frames, positions, masks


def positions_skipped(env: gym.Env) -> int:
    """How many leading entries of ``qpos`` the task's observation leaves out: the root's x (HalfCheetah, Hopper), or
    x and y (Ant, Humanoid), as gymnasium's v5 tasks state in ``observation_structure``; earlier versions, which do
    not, are taken to leave out x where they exclude positions."""
    structure = getattr(env.unwrapped, "observation_structure", None) or {}
    if "skipped_qpos" in structure:
        return int(structure["skipped_qpos"])
    return 1 if getattr(env.unwrapped, "_exclude_current_positions_from_observation", False) else 0


def limb_angle_columns(env_id: str) -> dict[str, int]:
    """The limbs' joint angles among ``collect_frames``' positions: joint name -> column, for each hinge joint of a
    body that hangs from another body (the root's own hinge, a body's pitch against the world, is left out)."""
    route_mujoco_warnings(env_id)  # first: without MuJoCo, the one-line error naming the extra
    import mujoco

    env = gym.make(env_id)
    try:
        model, skipped = env.unwrapped.model, positions_skipped(env)
        return {mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, joint): int(model.jnt_qposadr[joint]) - skipped
                for joint in range(model.njnt)
                if model.jnt_type[joint] == mujoco.mjtJoint.mjJNT_HINGE and model.body_parentid[model.jnt_bodyid[joint]] != 0}
    finally:
        env.close()


def latent_cosine_similarity(reference: torch.Tensor, current: torch.Tensor) -> float:
    """Mean over frames of the cosine similarity between each frame's latent mean then and now ``[K, Z]``."""
    return torch.nn.functional.cosine_similarity(reference, current, dim=-1).mean().item()


@torch.no_grad()
def validation_loss(vae: VAE, frames: torch.Tensor, batch_size: int, generator: torch.Generator) -> float:
    losses = [vae.loss(frames[i : i + batch_size], generator)[0].item() * len(frames[i : i + batch_size])
              for i in range(0, len(frames), batch_size)]
    return sum(losses) / len(frames)


def vae_shape(config: VAETrainConfig) -> VAEShape:
    """The VAE that ``config`` trains."""
    return VAEShape(config.pixels, config.latent_size, config.likelihood, config.gaussian_std, config.encoder_kernel)


def check_vae_training(config: VAETrainConfig) -> None:
    """``config.validate()``, then what needs more than the config: the VAE's shape, the device, a MuJoCo task, and a
    run directory that can be written and holds no VAE yet; a ValueError naming the field, before anything is
    written."""
    config.validate()
    vae_shape(config).validate()
    resolve_device(config.device)
    if suite_of(config.env) != "mujoco":
        raise ValueError(f"env must be a MuJoCo task (rendered frames), got {config.env!r} ({suite_of(config.env)})")
    check_writable_dir(config.run_dir, "run_dir")
    if (Path(config.run_dir) / VAE_NAME).exists():
        raise ValueError(f"run_dir {config.run_dir!r} already holds {VAE_NAME}; choose another --run-dir")


def split_frames(frames: np.ndarray, body: np.ndarray | None, validation_fraction: float, generator: torch.Generator,
                 device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """``frames [F, ...]`` shuffled by ``generator`` into (training, held-out) frames on ``device``, at least one held
    out, with the training frames' ``body`` pixels (weighted in the loss; the held-out loss stays the -ELBO, comparable
    across weights), or None without ``body``."""
    shuffle = torch.randperm(len(frames), generator=generator)
    shuffled = torch.from_numpy(frames)[shuffle]
    held_out = max(1, int(len(shuffled) * validation_fraction))
    training_body = None if body is None else torch.from_numpy(body)[shuffle][held_out:].to(device)
    return shuffled[held_out:].to(device), shuffled[:held_out].to(device), training_body


def write_rows(rows: list[dict[str, Any]], path: Path) -> None:
    """``rows`` as a CSV file with a header of the first row's keys."""
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def save_training(run_dir: Path, vae: VAE, env_id: str, rows: list[dict[str, Any]], shown: torch.Tensor) -> tuple[Path, str]:
    """A trained VAE into ``run_dir``: the weights (vae.pt), its losses (losses.csv and training.png) and the
    reconstructions of the held-out frames ``shown``; returns vae.pt's path and SHA-256."""
    path = run_dir / VAE_NAME
    sha256 = save_vae(path, vae, env_id)
    write_rows(rows, run_dir / "losses.csv")
    plot_training(rows, run_dir / "training.png")
    plot_reconstructions(vae, shown, run_dir / "reconstructions.png")
    return path, sha256


def train_vae(config: VAETrainConfig) -> Path:
    """Collect frames, train, and write RUN_DIR/{vae.pt, losses.csv, config.json, training.png,
    reconstructions.png}; returns the path of vae.pt."""
    check_vae_training(config)
    require("matplotlib", "analysis", "VAE training")  # the figures at the end: checked before minutes of work
    run_dir = Path(config.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(asdict(config), indent=2))
    seed_everything(config.seed)
    threads = config.torch_threads or torch.get_num_threads()
    started = time.perf_counter()
    weighted = config.body_weight != 1.0
    policy = None if config.policy is None else load_frame_policy(config.policy, config.env)
    frames, _, body = collect_frames(config.env, config.pixels, config.frames, config.keep_probability, config.action_persistence,
                                     config.seed, config.progress, body_masks=weighted, policy=policy,
                                     policy_share=config.policy_share)
    render_seconds = time.perf_counter() - started
    generator = torch.Generator().manual_seed(config.seed)
    device = resolve_device(config.device)
    training, validation, training_body = split_frames(frames, body if weighted else None, config.validation_fraction, generator, device)
    drift_sample = training[:10]  # Leite's (2022) fixed sample whose latents are watched
    with torch_threads(threads):
        vae = VAE(vae_shape(config)).to(device)
        optimizer = torch.optim.Adam(vae.parameters(), lr=config.learning_rate)
        with torch.no_grad():
            reference = vae.encode(drift_sample)[0]
        rows = []
        updates_per_epoch = -(-len(training) // config.batch_size)
        bar = tqdm(total=config.epochs * updates_per_epoch, desc="training VAE", unit="update", disable=not progress_shown(config.progress))
        train_started = time.perf_counter()
        for epoch in range(config.epochs):
            order = torch.randperm(len(training), generator=generator).to(device)
            for start in range(0, len(training), config.batch_size):
                batch = order[start : start + config.batch_size]
                weights = None if training_body is None else 1.0 + (config.body_weight - 1.0) * training_body[batch].float()
                loss, parts = vae.loss(training[batch], generator, weights)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                with torch.no_grad():
                    similarity = latent_cosine_similarity(reference, vae.encode(drift_sample)[0])
                rows.append({"update": len(rows) + 1, "epoch": epoch, "loss": loss.item(), **parts,
                             "cosine_similarity": similarity, "validation_loss": ""})
                bar.update()
                bar.set_postfix(loss=f"{loss.item():.1f}")
            rows[-1]["validation_loss"] = validation_loss(vae, validation, config.batch_size, generator)
            bar.write(f"epoch {epoch + 1}/{config.epochs}: training loss {np.mean([r['loss'] for r in rows[-updates_per_epoch:]]):.1f}, "
                      f"held-out loss {rows[-1]['validation_loss']:.1f} (nats per frame)")
        bar.close()
        train_seconds = time.perf_counter() - train_started
        path, sha256 = save_training(run_dir, vae.cpu(), config.env, rows, validation[:8].cpu())
    frames_seen = config.epochs * len(training)
    print(f"rendered {len(frames)} frames at {len(frames) / render_seconds:.0f} frames/s (with the env steps between them); "
          f"trained {frames_seen} frames at {frames_seen / train_seconds:.0f} frames/s")
    print(f"VAE: {path} (sha256 {sha256[:16]}...); use it with --vision vae:{path}")
    return path


def plot_training(rows: list[dict], path: Path) -> None:
    plt = pyplot()
    figure, (loss_axes, drift_axes) = plt.subplots(1, 2, figsize=(10, 3.5))
    updates = [row["update"] for row in rows]
    loss_axes.plot(updates, [row["loss"] for row in rows], label="training loss (-ELBO)")
    held = [(row["update"], row["validation_loss"]) for row in rows if row["validation_loss"] != ""]
    loss_axes.plot(*zip(*held), "o-", label="held-out loss")
    loss_axes.set(xlabel="update", ylabel="nats per frame", yscale="log", title="VAE loss")
    loss_axes.legend()
    drift_axes.plot(updates, [row["cosine_similarity"] for row in rows])
    drift_axes.set(xlabel="update", ylabel="cosine similarity", title="latent means of 10 fixed frames vs at the start")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


@torch.no_grad()
def plot_reconstructions(vae: VAE, frames: torch.Tensor, path: Path) -> None:
    """Held-out frames (top row) above their reconstructions from the latent mean (bottom row)."""
    plt = pyplot()
    recon = (vae.reconstruct(frames) * 255).round().to(torch.uint8)
    figure, axes = plt.subplots(2, len(frames), figsize=(1.4 * len(frames), 3))
    for column, (original, decoded) in enumerate(zip(frames, recon)):
        for row, image in enumerate((original, decoded)):
            axes[row, column].imshow(image.permute(1, 2, 0).numpy())
            axes[row, column].axis("off")
    axes[0, 0].set_title("frame", fontsize=8, loc="left")
    axes[1, 0].set_title("reconstruction", fontsize=8, loc="left")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def print_probe(figures: dict[str, Any], r2: torch.Tensor, neighbour_r2: torch.Tensor) -> None:
    """``probe_vae``'s figures in three sentences; ``r2`` and ``neighbour_r2`` ``[joints]``: the probes' R^2 per joint."""
    per_joint = ", ".join(f"{value:.2f}" for value in r2.tolist())
    print(f"{figures['env']}, VAE {figures['vae_sha256'][:16]}...: a linear probe from the latent recovers the joint positions with held-out R^2 "
          f"{figures['probe_r2_mean']:.3f} on average (per joint {per_joint}; an untrained VAE's latent: "
          f"{figures['untrained_probe_r2_mean']:.3f}), the limbs' {len(figures['limb_angles'])} joint angles ({', '.join(figures['limb_angles'])}) "
          f"{figures['probe_r2_limb_angles_mean']:.3f} (untrained: {figures['untrained_probe_r2_limb_angles_mean']:.3f})")
    print(f"the {figures['neighbours']} nearest latents' mean: R^2 {figures['knn_probe_r2_mean']:.3f} on average (per joint "
          f"{', '.join(f'{value:.2f}' for value in neighbour_r2.tolist())}), the limbs' joint angles "
          f"{figures['knn_probe_r2_limb_angles_mean']:.3f}")
    print(f"reconstruction error (MSE of intensities in [0, 1]) on the body's pixels ({100 * figures['body_share']:.1f}% of them) "
          f"{figures['body_mse']:.4f}, against {figures['body_mse_of_background']:.4f} for the background drawn there; "
          f"elsewhere {figures['background_mse']:.4f}")


@torch.no_grad()
def probe_vae(config: VAEProbeConfig) -> dict[str, object]:
    """``voidrl vae probe``: render new frames of the VAE's task with their joint positions and measure what its
    latent keeps. A ridge probe from the latent means to the joint positions is fitted on part of the frames and
    scored (R^2 per joint) on the rest, beside the same probe on an untrained VAE's latent (what training added) and
    a k-nearest-neighbour probe (what the latent holds that no linear map reads); each is also averaged over the
    limbs' joint angles alone. The reconstruction error where the body is (MuJoCo's segmentation) and elsewhere,
    beside the body error of drawing the frames' per-pixel median there (what a VAE that leaves the body out would
    score). Prints the figures and, with ``out``, writes them as JSON and the held-out reconstructions beside it
    (``.png``)."""
    config.validate()
    vae, env_id, sha256 = load_vae(config.vision)
    vae.eval()
    policy = None if config.policy is None else load_frame_policy(config.policy, env_id)
    angles = limb_angle_columns(env_id)
    with torch_threads(config.torch_threads or torch.get_num_threads()):
        frames, positions, body = (torch.from_numpy(array) for array in collect_frames(
            env_id, vae.shape.image_size, config.frames, config.keep_probability, config.action_persistence, config.seed,
            config.progress, body_masks=True, policy=policy, policy_share=config.policy_share))
        order = torch.randperm(len(frames), generator=torch.Generator().manual_seed(config.seed))  # held-out frames from the whole run
        frames, positions, body = frames[order], positions[order], body[order]
        with torch.random.fork_rng():
            torch.manual_seed(config.seed)
            untrained = VAE(vae.shape).eval()
        latents = torch.cat([vae.encode(batch)[0] for batch in frames.split(256)])
        untrained_latents = torch.cat([untrained.encode(batch)[0] for batch in frames.split(256)])
        reconstructions = torch.cat([vae.reconstruct(batch) for batch in frames.split(256)])
        fitted = len(frames) - int(len(frames) * config.held_out_fraction)
        r2, untrained_r2 = (linear_probe_r2(inputs[:fitted], positions[:fitted], inputs[fitted:], positions[fitted:], config.ridge)
                            for inputs in (latents, untrained_latents))
        neighbour_r2 = knn_probe_r2(latents[:fitted], positions[:fitted], latents[fitted:], positions[fitted:], config.neighbours)
        background = frames.median(dim=0).values.float().div(255.0).expand_as(frames)
        columns = list(angles.values())
        figures = {
            "env": env_id, "vae_sha256": sha256, "frames": len(frames), "held_out": len(frames) - fitted,
            "policy": config.policy, "policy_share": config.policy_share if config.policy else 0.0,
            "probe_r2_mean": r2.mean().item(), "probe_r2": [round(value, 4) for value in r2.tolist()],
            "untrained_probe_r2_mean": untrained_r2.mean().item(),
            "limb_angles": angles, "probe_r2_limb_angles_mean": r2[columns].mean().item(),
            "untrained_probe_r2_limb_angles_mean": untrained_r2[columns].mean().item(),
            "neighbours": config.neighbours, "knn_probe_r2_mean": neighbour_r2.mean().item(),
            "knn_probe_r2": [round(value, 4) for value in neighbour_r2.tolist()],
            "knn_probe_r2_limb_angles_mean": neighbour_r2[columns].mean().item(),
            "body_share": body.float().mean().item(),
            "body_mse": masked_mean_squared_error(frames, reconstructions, body),
            "body_mse_of_background": masked_mean_squared_error(frames, background, body),
            "background_mse": masked_mean_squared_error(frames, reconstructions, ~body),
        }
    print_probe(figures, r2, neighbour_r2)
    if config.out:
        out = Path(config.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(figures, indent=2) + "\n")
        plot_reconstructions(vae, frames[fitted : fitted + 8], out.with_suffix(".png"))
        print(f"wrote {out} and {out.with_suffix('.png')}")
    return figures
