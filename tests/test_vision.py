"""The VAE vision module: its ELBO, rendered frames, frame stacks, the --vision wrapper and its file."""

import json
import math
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import torch

import voidrl
from voidrl.algos.base import build_policy
from voidrl.cli import main
from voidrl.envs import EnvConfig, make_env
from voidrl.envs.base import Step, VecEnv
from voidrl.envs.vision import VAEVision
from voidrl.envs.wrappers import FrameStack
from voidrl.math.elbo import elbo, kl_to_standard_normal, log_likelihood, reparameterize
from voidrl.nets.vae import VAE, VAEShape, load_vae, save_vae
from voidrl.training.loop import Trainer
from voidrl.training.presets import make_config

SIZE = 32  # small frames keep rendering and the VAE fast in tests
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU"))]


def test_elbo_matches_a_hand_computed_case():
    images = torch.tensor([[[[1.0, 0.25]]]])  # [B=1, C=1, H=1, W=2]
    logits = torch.tensor([[[[0.0, math.log(3.0)]]]])  # p = 1/2 and 3/4
    mean, log_var = torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, math.log(2.0)]])
    bound, reconstruction, kl = elbo(images, logits, mean, log_var, "bernoulli")
    expected_reconstruction = math.log(0.5) + 0.25 * math.log(0.75) + 0.75 * math.log(0.25)
    # KL(N(1, 1) || N(0, 1)) = 1/2; KL(N(0, 2) || N(0, 1)) = (2 - 1 - ln 2) / 2
    expected_kl = 0.5 + (2.0 - 1.0 - math.log(2.0)) / 2
    assert reconstruction.item() == pytest.approx(expected_reconstruction, abs=1e-6)
    assert kl.item() == pytest.approx(expected_kl, abs=1e-6)
    assert bound.item() == pytest.approx(expected_reconstruction - expected_kl, abs=1e-6)
    # a Gaussian pixel: x = 0.5 around 0.3 with std 0.1 is 2 std away
    gaussian = log_likelihood(torch.full((1, 1, 1, 1), 0.5), torch.full((1, 1, 1, 1), 0.3), "gaussian", 0.1)
    assert gaussian.item() == pytest.approx(-2.0 - math.log(0.1) - 0.5 * math.log(2 * math.pi), abs=1e-5)


def test_kl_matches_torch_distributions():
    mean, log_var = torch.randn(5, 8), torch.randn(5, 8)
    posterior = torch.distributions.Normal(mean, (0.5 * log_var).exp())
    prior = torch.distributions.Normal(torch.zeros(8), torch.ones(8))
    reference = torch.distributions.kl_divergence(posterior, prior).sum(-1)
    assert torch.allclose(kl_to_standard_normal(mean, log_var), reference, atol=1e-5)


def test_reparameterized_samples_have_the_posteriors_mean_and_variance_and_pass_gradients():
    mean = torch.tensor([[2.0, -1.0]]).expand(200_000, 2).clone().requires_grad_()
    log_var = torch.tensor([[math.log(4.0), math.log(0.25)]]).expand(200_000, 2).clone().requires_grad_()
    samples = reparameterize(mean, log_var, torch.Generator().manual_seed(0))
    assert torch.allclose(samples.mean(0), torch.tensor([2.0, -1.0]), atol=0.02)
    assert torch.allclose(samples.var(0), torch.tensor([4.0, 0.25]), rtol=0.02)
    samples.sum().backward()
    assert torch.equal(mean.grad, torch.ones_like(mean))  # dz/dmean = 1
    assert log_var.grad.abs().sum() > 0


@pytest.mark.parametrize("kernel", [2, 4])
@pytest.mark.parametrize("size", [32, 64, 96])
def test_the_vae_maps_frames_to_latents_and_back_at_their_size(size, kernel):
    vae = VAE(VAEShape(image_size=size, latent_size=8, encoder_kernel=kernel))
    frames = torch.randint(0, 256, (2, 3, size, size), dtype=torch.uint8)
    mean, log_var = vae.encode(frames)
    assert mean.shape == log_var.shape == (2, 8)
    assert vae.decode(mean).shape == (2, 3, size, size)
    loss, parts = vae.loss(frames)
    assert loss.item() == pytest.approx(parts["reconstruction"] + parts["kl"], rel=1e-4)


def test_a_vae_file_written_before_the_encoder_kernel_was_a_choice_loads_with_the_notebooks_kernel(tmp_path):
    from voidrl.io.checkpoint import load_checkpoint, save_checkpoint

    vae = VAE(VAEShape(image_size=32, latent_size=4))
    save_vae(tmp_path / "vae.pt", vae, "HalfCheetah-v5")
    payload = load_checkpoint(tmp_path / "vae.pt")
    del payload["shape"]["encoder_kernel"]  # what files of earlier versions hold
    save_checkpoint(tmp_path / "old.pt", payload)
    loaded = load_vae(tmp_path / "old.pt")[0]
    assert loaded.shape.encoder_kernel == 2 and loaded.encoder[0].kernel_size == (2, 2)
    frames = torch.randint(0, 256, (2, 3, 32, 32), dtype=torch.uint8)
    assert torch.equal(loaded.encode(frames)[0], vae.encode(frames)[0])


class CountingEnv(VecEnv):
    """Two environments whose observation is the step count in its episode (shape ``[1]``); environment 0's
    episodes last 3 steps, environment 1's never end."""

    num_envs = 2
    single_observation_space = gym.spaces.Box(0, 100, (1,), np.float32)
    single_action_space = gym.spaces.Discrete(2)

    def reset(self, seed):
        self.count = torch.zeros(2)
        return self.count[:, None].clone()

    def step(self, actions):
        self.count += 1
        final = self.count[:, None].clone()
        ended = torch.tensor([self.count[0].item() == 3, False])
        self.count[ended] = 0
        obs = self.count[:, None].clone()
        empty = torch.zeros(0)
        return Step(obs=obs, reward=torch.zeros(2), terminated=ended, truncated=torch.zeros(2, dtype=torch.bool),
                    final_obs=final if ended.any() else obs, episode_returns=empty, episode_lengths=empty.long(),
                    episode_envs=empty.long())


def test_frame_stacks_shift_and_restart_at_episode_boundaries():
    env = FrameStack(CountingEnv(), 3)
    assert env.single_observation_space.shape == (3,)
    assert env.reset(0).tolist() == [[0, 0, 0], [0, 0, 0]]  # the first observation fills the stack
    assert env.step(torch.zeros(2)).obs.tolist() == [[0, 0, 1], [0, 0, 1]]
    step = env.step(torch.zeros(2))
    assert step.obs.tolist() == [[0, 1, 2], [0, 1, 2]] and step.final_obs is step.obs
    step = env.step(torch.zeros(2))  # environment 0's episode ends at count 3
    assert step.final_obs.tolist() == [[1, 2, 3], [1, 2, 3]]
    assert step.obs.tolist() == [[0, 0, 0], [1, 2, 3]]  # a new episode starts its stack afresh
    assert env.step(torch.zeros(2)).obs.tolist() == [[0, 0, 1], [2, 3, 4]]


@pytest.mark.parametrize("size,flat", [(64, 64 * 4 * 4), (96, 64 * 8 * 8)])
def test_the_pixel_presets_cnn_reads_stacks_of_64_and_96_pixel_frames(size, flat):
    """mujoco-pixels' Nature CNN on 3 stacked RGB frames: 64 px leaves 4x4 maps for its fc layer, 96 px 8x8."""
    config = make_config("ppo", "mujoco-pixels", env="HalfCheetah-v5", pixels=size)
    policy = build_policy(config.algo_config, (9, size, size), gym.spaces.Box(-1, 1, (6,)), "cpu")
    body = policy.actor_body
    assert policy.critic_body is None and body.fc[0].in_features == flat
    assert body(torch.zeros(2, 9, size, size, dtype=torch.uint8)).shape == (2, 512)


@pytest.fixture(scope="module")
def vae_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("vision") / "vae.pt"
    torch.manual_seed(0)
    save_vae(path, VAE(VAEShape(image_size=SIZE, latent_size=4)), "HalfCheetah-v5")
    return path


def test_rendered_frames_and_vae_latents_reach_the_agent_with_their_shapes_and_dtypes(vae_file):
    pixels = make_env("HalfCheetah-v5", EnvConfig(num_envs=2, pixels=SIZE, frame_stack=3))
    try:
        obs = pixels.reset(0)
        step = pixels.step(torch.zeros(2, 6))
    finally:
        pixels.close()
    assert obs.dtype == step.obs.dtype == torch.uint8
    assert obs.shape == step.obs.shape == (2, 9, SIZE, SIZE) and pixels.single_observation_space.shape == (9, SIZE, SIZE)
    assert step.obs.float().std() > 0  # a real picture, not a blank frame
    for latent in ("mean", "sample"):
        latents = make_env("HalfCheetah-v5", EnvConfig(num_envs=2, vision=f"vae:{vae_file}", vision_latent=latent, frame_stack=2))
        try:
            first, second = latents.reset(0), latents.step(torch.zeros(2, 6)).obs
        finally:
            latents.close()
        assert first.dtype == second.dtype == torch.float32
        assert first.shape == second.shape == (2, 8) and latents.single_observation_space.shape == (8,)
        assert torch.equal(first[:, :4], first[:, 4:]) and torch.equal(second[:, :4], first[:, 4:])  # stacked latents


def test_frames_stay_right_when_another_rendering_env_is_freed():
    """Freed by the garbage collector, an env's GL objects would be deleted from the context current then."""
    import gc

    def frames(env):
        env.reset(0)
        return torch.stack([env.step(torch.full((1, 6), 0.5)).obs[0] for _ in range(5)])

    first = make_env("HalfCheetah-v5", EnvConfig(num_envs=1, pixels=SIZE))
    reference = frames(first)
    first.close()
    second = make_env("HalfCheetah-v5", EnvConfig(num_envs=1, pixels=SIZE))
    del first
    gc.collect()
    try:
        assert torch.equal(frames(second), reference)
    finally:
        second.close()


def test_the_mean_latent_is_the_encoders_mean(vae_file):
    env = make_env("HalfCheetah-v5", EnvConfig(num_envs=1, vision=f"vae:{vae_file}"))
    frames_env = make_env("HalfCheetah-v5", EnvConfig(num_envs=1, pixels=SIZE))
    try:
        latent, frame = env.reset(3), frames_env.reset(3)
    finally:
        env.close()
        frames_env.close()
    with torch.no_grad():
        assert torch.allclose(latent, load_vae(vae_file)[0].encode(frame)[0])


@pytest.mark.parametrize("device", DEVICES)
def test_the_vae_runs_on_the_runs_device_while_frames_latents_and_noise_stay_on_the_cpu(vae_file, device):
    config = EnvConfig(num_envs=2, vision=f"vae:{vae_file}", vision_latent="sample", vision_finetune_every=1)
    on_device, on_cpu = make_env("HalfCheetah-v5", config, device=device), make_env("HalfCheetah-v5", config)
    try:
        vision, reference = find_vision(on_device), find_vision(on_cpu)
        assert {p.device.type for p in vision.vae.parameters()} == {device}
        first, expected = on_device.reset(0), on_cpu.reset(0)
        assert first.device.type == "cpu" and first.dtype == torch.float32
        assert torch.allclose(first, expected, atol=1e-4)  # the same frames and the same posterior noise
        on_device.step(torch.zeros(2, 6))  # one fine-tuning step on the device
        state = vision.own_state_dict()
        reference.load_own_state_dict(state)  # the state a device run saves loads where there is no GPU
        assert torch.equal(reference.generator.get_state(), vision.generator.get_state())
        assert {value.device.type for value in state["model"].values()} == {device}
    finally:
        on_device.close()
        on_cpu.close()


def find_vision(env):
    while not isinstance(env, VAEVision):
        env = env.env
    return env


def test_a_frozen_vae_gets_no_gradient_from_the_agents_updates(tmp_path, vae_file):
    config = make_config("ppo", env="HalfCheetah-v5", vision=f"vae:{vae_file}", steps=128, num_steps=64,
                         minibatch_size=32, epochs=2, run_dir=str(tmp_path / "run"), progress=False)
    trainer = Trainer(config)
    policy_before = [p.detach().clone() for p in trainer.algo.policy.parameters()]
    trainer.train()
    vae = find_vision(trainer.env).vae
    saved = load_vae(vae_file)[0].state_dict()
    assert all(not p.requires_grad and p.grad is None for p in vae.parameters())
    assert all(torch.equal(value, saved[name]) for name, value in vae.state_dict().items())
    assert any(not torch.equal(a, b) for a, b in zip(policy_before, trainer.algo.policy.parameters()))  # the agent did learn
    state = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=True)["env"]
    assert "model" not in str(state.keys())  # a frozen VAE is referred to by its hash, not copied


@pytest.mark.slow
def test_a_finetuned_vae_learns_and_its_weights_resume_from_the_checkpoint(tmp_path, vae_file):
    run_dir = tmp_path / "run"
    voidrl.train("ppo", env="HalfCheetah-v5", vision=f"vae:{vae_file}", vision_finetune_every=4, steps=64,
                 num_steps=32, minibatch_size=32, epochs=1, run_dir=str(run_dir), progress=False)
    agent = voidrl.load(run_dir / "checkpoint.pt")
    env = agent.make_env(1)
    try:
        vision = find_vision(env)
        tuned, original = vision.vae.state_dict(), load_vae(vae_file)[0].state_dict()
        assert any(not torch.equal(tuned[name], original[name]) for name in original)  # 16 ELBO steps moved it
        assert vision.vector_steps == 64 and not vision.training  # evaluation does not train it
    finally:
        env.close()


def test_a_missing_or_changed_vae_file_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    save_vae(tmp_path / "vae.pt", VAE(VAEShape(image_size=SIZE, latent_size=4)), "HalfCheetah-v5")
    assert main(["train", "ppo", "--env", "HalfCheetah-v5", "--vision", "vae:vae.pt", "--steps", "32", "--num-steps", "32",
                 "--minibatch-size", "32", "--epochs", "1", "--run-dir", "run", "--no-progress"]) == 0
    capsys.readouterr()
    save_vae(tmp_path / "vae.pt", VAE(VAEShape(image_size=SIZE, latent_size=4)), "HalfCheetah-v5")  # other weights
    for command in (["eval", "--checkpoint", "run/checkpoint.pt", "--episodes", "1"],
                    ["train", "ppo", "--resume", "--run-dir", "run", "--steps", "64", "--no-progress"]):
        assert main(command) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "has changed since the run was saved" in err[0], err
    (tmp_path / "vae.pt").unlink()
    assert main(["eval", "--checkpoint", "run/checkpoint.pt", "--episodes", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "vision file 'vae.pt' does not exist" in err[0], err
    save_vae(tmp_path / "big.pt", VAE(VAEShape(image_size=64, latent_size=4)), "HalfCheetah-v5")
    assert main(["train", "ppo", "--env", "HalfCheetah-v5", "--vision", "vae:big.pt", "--pixels", str(SIZE),
                 "--run-dir", "other"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "encodes 64x64 RGB frames" in err[0], err
    assert not (tmp_path / "other").exists()


@pytest.mark.parametrize("device", DEVICES)
def test_vae_train_writes_the_model_its_curves_and_reconstructions(tmp_path, monkeypatch, capsys, device):
    monkeypatch.chdir(tmp_path)
    args = ["vae", "train", "--frames", "40", "--pixels", str(SIZE), "--epochs", "2", "--batch-size", "16",
            "--keep-probability", "0.5", "--run-dir", "vae", "--device", device, "--no-progress"]
    assert main(args) == 0
    written = sorted(path.name for path in (tmp_path / "vae").iterdir())
    assert written == ["config.json", "losses.csv", "reconstructions.png", "training.png", "vae.pt"]
    lines = (tmp_path / "vae" / "losses.csv").read_text().splitlines()
    assert lines[0] == "update,epoch,loss,reconstruction,kl,cosine_similarity,validation_loss"
    assert len(lines) == 1 + 2 * 3  # 38 training frames in batches of 16, two epochs
    vae, env_id, _ = load_vae(tmp_path / "vae" / "vae.pt")
    assert env_id == "HalfCheetah-v5" and vae.shape == VAEShape(image_size=SIZE)
    assert {parameter.device.type for parameter in vae.parameters()} == {"cpu"}  # usable where no GPU is
    capsys.readouterr()
    assert main(args) == 2  # a second run into the same directory would overwrite the VAE
    assert "already holds vae.pt" in capsys.readouterr().err
    assert main(["vae", "train", "--env", "CartPole-v1", "--run-dir", "x"]) == 2
    assert "env must be a MuJoCo task" in capsys.readouterr().err
    assert main(["vae", "train", "--device", "gpu", "--run-dir", "x"]) == 2
    assert "device must be cpu, cuda, cuda:N or auto, got 'gpu'" in capsys.readouterr().err
    assert main(["vae", "train", "--encoder-kernel", "3", "--run-dir", "x"]) == 2
    assert "encoder_kernel must be one of 2, 4, got 3" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_rendering_without_a_headless_gl_backend_is_a_one_line_error(tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, "MUJOCO_GL": "glfw"}  # needs a display, which tests never have
    env.pop("DISPLAY", None)
    result = subprocess.run([sys.executable, "-m", "voidrl", "train", "ppo", "--env", "HalfCheetah-v5", "--preset", "mujoco-pixels",
                             "--run-dir", str(tmp_path / "run")], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    err = [line for line in result.stderr.splitlines() if not line.startswith("WARNING")]
    assert len(err) == 1 and "could not render headless with MUJOCO_GL=glfw" in err[0], result.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_mujoco_gl_mujoco_does_not_know_is_named_by_train_and_eval_alike(tmp_path):
    """Not 'the checkpoint does not match its config', which eval said before."""
    run = tmp_path / "run"
    trained = subprocess.run([sys.executable, "-m", "voidrl", "train", "ppo", "--env", "Hopper-v5", "--steps", "64", "--num-envs", "1",
                              "--num-steps", "64", "--no-progress", "--run-dir", str(run)], capture_output=True, text=True, timeout=120)
    assert trained.returncode == 0, trained.stderr
    env = {**os.environ, "MUJOCO_GL": "bogus"}
    for args in (["eval", "--checkpoint", str(run / "checkpoint.pt"), "--episodes", "1"],
                 ["train", "ppo", "--env", "Hopper-v5", "--run-dir", str(tmp_path / "other")]):
        result = subprocess.run([sys.executable, "-m", "voidrl", *args], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 2
        assert result.stderr.strip() == ("voidrl: error: MuJoCo cannot start: invalid value for environment variable MUJOCO_GL: "
                                         "bogus (egl, osmesa or glfw, or leave MUJOCO_GL unset)"), result.stderr
    assert not (tmp_path / "other").exists()


def test_vae_probe_measures_a_vae_on_new_frames_and_refuses_a_bad_file_in_one_line(tmp_path, capsys, vae_file):
    out = tmp_path / "probe" / "figures.json"
    assert main(["vae", "probe", "--vision", str(vae_file), "--frames", "40", "--keep-probability", "0.5", "--torch-threads", "1",
                 "--no-progress", "--out", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["env"] == "HalfCheetah-v5" and figures["frames"] == 40 and figures["held_out"] == 10
    assert len(figures["probe_r2"]) == 8  # HalfCheetah's observed positions: qpos without the root's x
    assert figures["limb_angles"] == {"bthigh": 2, "bshin": 3, "bfoot": 4, "fthigh": 5, "fshin": 6, "ffoot": 7}
    assert figures["probe_r2_limb_angles_mean"] == pytest.approx(sum(figures["probe_r2"][2:]) / 6, abs=1e-4)
    assert len(figures["knn_probe_r2"]) == 8 and figures["neighbours"] == 10
    assert 0.0 < figures["body_share"] < 0.5 and figures["body_mse"] > 0 and figures["background_mse"] > 0
    assert (tmp_path / "probe" / "figures.png").exists()
    assert "held-out R^2" in capsys.readouterr().out
    assert main(["vae", "probe", "--vision", str(tmp_path / "missing.pt")]) == 2
    error = capsys.readouterr().err.strip()
    assert "does not exist (write one with `voidrl vae train`)" in error and len(error.splitlines()) == 1
    assert main(["vae", "probe", "--vision", str(vae_file), "--held-out-fraction", "0.95"]) == 2
    assert "held_out_fraction must lie in (0, 0.9)" in capsys.readouterr().err
    assert main(["vae", "probe", "--vision", str(vae_file), "--frames", "40", "--neighbours", "31"]) == 2
    assert "neighbours (31) must be at most the 30 frames the probe is fitted on" in capsys.readouterr().err
    for bad_out, message in ((tmp_path, "is a directory; give the JSON file to write"), ("/proc/voidrl/x.json", "cannot be written")):
        assert main(["vae", "probe", "--vision", str(vae_file), "--out", str(bad_out)]) == 2  # refused before the frames
        assert message in capsys.readouterr().err
    assert main(["vae", "probe", "--vision", str(tmp_path)]) == 2
    assert "is a directory; give the VAE file in it" in capsys.readouterr().err


def test_the_limbs_angles_leave_out_the_roots_joints():
    from voidrl.training.vae import limb_angle_columns

    assert limb_angle_columns("InvertedPendulum-v5") == {"hinge": 1}  # the pole's angle; the cart's slider is the root
    assert limb_angle_columns("Hopper-v5") == {"thigh_joint": 2, "leg_joint": 3, "foot_joint": 4}
    ant = limb_angle_columns("Ant-v5")  # the root's x and y left out of its 15 positions
    assert len(ant) == 8 and ant["hip_1"] == 5 and ant["ankle_4"] == 12


def test_the_body_mask_is_the_bodys_pixels_and_follows_it():
    """MuJoCo's segmentation in the frame's own context: the cheetah and nothing of the floor or sky, and it moves
    when the body moves."""
    from voidrl.training.vae import collect_frames

    frames, positions, masks = collect_frames("HalfCheetah-v5", 64, 6, keep_probability=0.3, action_persistence=0.9, seed=0,
                                              progress=False, body_masks=True)
    assert masks.shape == (6, 64, 64) and 0.01 < masks.mean() < 0.2
    assert not masks[:, :20].any()  # the top rows show the sky
    body, elsewhere = frames.transpose(0, 2, 3, 1)[masks], frames.transpose(0, 2, 3, 1)[~masks]
    assert body[:, 0].mean() > body[:, 2].mean() + 30  # the cheetah's tan: red well above blue
    assert abs(elsewhere[:, 0].mean() - elsewhere[:, 2].mean()) < 30  # grey sky, bluish-grey floor
    assert (masks[1:] != masks[:-1]).any() and positions.shape == (6, 8)


def test_pixel_weights_scale_each_pixels_reconstruction_term():
    images, decoded = torch.rand(2, 3, 4, 4), torch.randn(2, 3, 4, 4)
    for likelihood in ("bernoulli", "gaussian"):
        plain = log_likelihood(images, decoded, likelihood)
        assert torch.allclose(log_likelihood(images, decoded, likelihood, pixel_weights=torch.ones(2, 4, 4)), plain)
        weights = torch.ones(2, 4, 4)
        weights[1, 2, 3] = 5.0  # frame 1's pixel (2, 3) counts five times, all three channels
        one_pixel = log_likelihood(images[1:, :, 2:3, 3:4], decoded[1:, :, 2:3, 3:4], likelihood)
        weighted = log_likelihood(images, decoded, likelihood, pixel_weights=weights)
        assert torch.allclose(weighted, plain + torch.tensor([0.0, 4.0]) * one_pixel)


def test_vae_train_weights_the_bodys_pixels_when_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["vae", "train", "--frames", "40", "--pixels", str(SIZE), "--epochs", "1", "--batch-size", "16", "--body-weight", "10",
                 "--keep-probability", "0.5", "--run-dir", "vae", "--torch-threads", "1", "--no-progress"]) == 0
    assert json.loads((tmp_path / "vae" / "config.json").read_text())["body_weight"] == 10.0
    assert main(["vae", "train", "--body-weight", "0", "--run-dir", "other"]) == 2


def test_frames_can_come_from_a_trained_policy_that_plays_a_share_of_the_episodes(tmp_path, monkeypatch, capsys):
    from voidrl.training.vae import collect_frames, load_frame_policy

    monkeypatch.chdir(tmp_path)
    assert main(["train", "ppo", "--env", "HalfCheetah-v5", "--steps", "64", "--num-steps", "32", "--minibatch-size", "32",
                 "--action-repeat", "2", "--run-dir", "agent", "--torch-threads", "1", "--no-progress"]) == 0
    agent = load_frame_policy("agent/checkpoint.pt", "HalfCheetah-v5")
    observations = []
    predict = agent.predict
    monkeypatch.setattr(agent, "predict", lambda obs, **options: observations.append(obs) or predict(obs, **options))
    frames, positions, _ = collect_frames("HalfCheetah-v5", SIZE, 20, keep_probability=1.0, action_persistence=0.9, seed=0,
                                          progress=False, policy=agent, policy_share=1.0)
    assert frames.shape == (20, 3, SIZE, SIZE) and positions.shape == (20, 8)
    assert len(observations) == 10 and all(obs.shape == (17,) for obs in observations)  # one decision per 2 steps
    torch.manual_seed(12345)  # whatever torch's generator holds, the policy's samples follow the collection's seed
    _, again, _ = collect_frames("HalfCheetah-v5", SIZE, 20, keep_probability=1.0, action_persistence=0.9, seed=0,
                                 progress=False, policy=agent, policy_share=1.0)
    assert np.array_equal(positions, again)
    observations.clear()
    _, random_positions, _ = collect_frames("HalfCheetah-v5", SIZE, 20, keep_probability=1.0, action_persistence=0.9, seed=0,
                                            progress=False, policy=agent, policy_share=0.0)
    assert observations == [] and not np.allclose(positions, random_positions)

    # on InvertedPendulum, where an untrained agent's and random actions' episodes last a few steps, half the frames
    # come from the policy's episodes, give or take the last episode: each kept step is one decision (action repeat 1)
    assert main(["train", "ppo", "--env", "InvertedPendulum-v5", "--steps", "64", "--num-steps", "32", "--minibatch-size", "32",
                 "--run-dir", "pendulum", "--torch-threads", "1", "--no-progress"]) == 0
    pendulum = load_frame_policy("pendulum/checkpoint.pt", "InvertedPendulum-v5")
    decisions = []
    pendulum_predict = pendulum.predict
    monkeypatch.setattr(pendulum, "predict", lambda obs, **options: decisions.append(obs) or pendulum_predict(obs, **options))
    collect_frames("InvertedPendulum-v5", SIZE, 200, keep_probability=1.0, action_persistence=0.9, seed=0, progress=False,
                   policy=pendulum, policy_share=0.5)
    assert abs(len(decisions) - 100) < 30, len(decisions)  # within an episode of half

    capsys.readouterr()
    for options, message in ((["--policy", "missing.pt"], "policy must be a checkpoint file of a trained agent, got 'missing.pt'"),
                             (["--policy", "agent/checkpoint.pt", "--policy-share", "1.5"], "policy_share must lie in [0, 1], got 1.5"),
                             (["--policy", "agent/checkpoint.pt", "--env", "Hopper-v5"],
                              "policy must be an agent trained on Hopper-v5's state observations, got one trained on HalfCheetah-v5")):
        assert main(["vae", "train", "--run-dir", "vae", *options]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "vae").exists()


@pytest.mark.parametrize("terminal", [False, True])
def test_vae_frame_rendering_shows_its_bar_only_on_a_terminal_by_default(capsys, monkeypatch, terminal):
    from voidrl.training.vae import collect_frames

    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    collect_frames("InvertedPendulum-v5", SIZE, 8, keep_probability=1.0, action_persistence=0.9, seed=0)
    assert ("rendering frames" in capsys.readouterr().err) == terminal
