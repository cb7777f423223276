"""Episode videos: ``voidrl eval --video`` writes each episode as an MP4 of the environment's own screens, and
``--eval-video`` shows one episode of each periodic evaluation in TensorBoard."""

import io
import os
import subprocess
import sys

import imageio.v3 as iio
import numpy as np
import pytest
import torch

import voidrl
from voidrl.cli import main
from voidrl.envs import make_env
from voidrl.envs.atari import AtariVecEnv
from voidrl.io.video import EpisodeFiles, check_video_packages, episode_file_name
from voidrl.training import Agent
from voidrl.training.agent import build_policy_for
from voidrl.training.presets import make_config


def untrained_agent(algo: str, env_id: str, **options) -> Agent:
    """A freshly initialised agent of ``algo`` on ``env_id``, with the state of a fresh environment chain."""
    config = make_config(algo, env=env_id, **options)
    probe = make_env(env_id, config.env)
    state = probe.state_dict()
    probe.close()
    return Agent(config, build_policy_for(config, torch.device("cpu")), state)


def read_video(path) -> np.ndarray:
    """``[T, H, W, 3]`` uint8: every frame the file decodes to."""
    return iio.imread(path, plugin="FFMPEG")


def skip_unless_mujoco_renders() -> None:
    """Skip, naming what is missing, where MuJoCo cannot render headless (EGL, or OSMesa with MUJOCO_GL=osmesa)."""
    try:
        make_env("HalfCheetah-v5", make_config("ppo", env="HalfCheetah-v5", num_envs=1).env, screens=True).close()
    except ValueError as error:
        pytest.skip(str(error))


# Episode lengths the untrained greedy policy cannot change: a limit below the quickest ending (Breakout's five lives,
# the 8x8 room's goal ten moves away, Freeway's clock) or none (HalfCheetah); CartPole's length is its return.
@pytest.mark.parametrize("env_id,limit,size", [
    ("ALE/Breakout-v5", 20, (210, 160)),
    ("HalfCheetah-v5", 20, (480, 480)),
    ("MiniGrid-Empty-8x8-v0", 10, (256, 256)),
    ("MinAtar/Freeway-v1", 20, (160, 160)),
    ("CartPole-v1", None, (400, 600)),
])
def test_each_episode_is_a_video_of_its_length_at_the_renderers_size(tmp_path, env_id, limit, size):
    if env_id == "HalfCheetah-v5":
        skip_unless_mujoco_renders()
    agent = untrained_agent("ppo", env_id, num_envs=1, max_episode_steps=limit)
    recorder = EpisodeFiles(tmp_path / "videos")
    returns = agent.evaluate(2, recorder=recorder)
    assert [path.name for path in recorder.paths] == [episode_file_name(i, r) for i, r in enumerate(returns)]
    assert sorted(path.name for path in (tmp_path / "videos").iterdir()) == [path.name for path in recorder.paths]
    for path, episode_return in zip(recorder.paths, returns):
        frames = read_video(path)
        assert frames.shape == (limit or episode_return, *size, 3), path.name  # one frame per step


def test_atari_screens_are_the_emulators_colour_frames_in_lockstep_with_what_the_agent_sees():
    plain, screened = AtariVecEnv("breakout", 2), AtariVecEnv("breakout", 2, screens=True)
    assert torch.equal(plain.reset(3), screened.reset(3))
    generator = torch.Generator().manual_seed(0)
    games = 0
    for _ in range(400):  # several games over, and lives lost, in each environment
        actions = torch.randint(0, plain.single_action_space.n, (2,), generator=generator)
        a, b = plain.step(actions), screened.step(actions)  # the screened env checks its twin's frame numbers
        assert torch.equal(a.obs, b.obs) and torch.equal(a.final_obs, b.final_obs) and torch.equal(a.reward, b.reward)
        assert a.screens is None and b.screens.shape == (2, 210, 160, 3) and b.screens.dtype == np.uint8
        games += len(b.episode_returns)
    assert games >= 2
    assert (b.screens.max(-1) != b.screens.min(-1)).any()  # colour, unlike the agent's grayscale frames
    assert screened.screen_fps == 15  # 60 Hz, 4 frames a step
    plain.close()
    screened.close()


def test_eval_video_names_the_member_played_and_prints_the_files(tmp_path, capsys):
    agent = untrained_agent("ngu", "MiniGrid-Empty-8x8-v0", num_envs=1, max_episode_steps=10)
    agent.save(tmp_path / "ngu.pt")
    videos = tmp_path / "new" / "videos"
    assert main(["eval", "--checkpoint", str(tmp_path / "ngu.pt"), "--episodes", "2", "--member", "1", "--video", str(videos)]) == 0
    names = ["episode-000-return-0.0-member-1.mp4", "episode-001-return-0.0-member-1.mp4"]
    assert sorted(path.name for path in videos.iterdir()) == names
    assert capsys.readouterr().out.splitlines()[1:] == [str(videos / name) for name in names]
    assert read_video(videos / names[0]).shape == (10, 256, 256, 3)


def test_file_names_carry_the_return_and_the_member():
    assert episode_file_name(3, 21.0) == "episode-003-return-21.0.mp4"
    assert episode_file_name(12, -3.5, member=2) == "episode-012-return--3.5-member-2.mp4"
    assert episode_file_name(0, float(np.float32(0.955))) == "episode-000-return-0.955.mp4"


@pytest.fixture
def cartpole_checkpoint(tmp_path):
    path = tmp_path / "cartpole.pt"
    untrained_agent("ppo", "CartPole-v1").save(path)
    return path


@pytest.mark.parametrize("args,fragment", [
    (["--video", "file/videos"], "--video 'file/videos' cannot be created: 'file' is a file"),
    (["--video", "videos", "--num-envs", "2"], "--video plays the episodes in one environment; give --num-envs 1 or leave it out, got 2"),
])
def test_bad_video_options_fail_fast_with_one_line(tmp_path, monkeypatch, capsys, cartpole_checkpoint, args, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("")
    assert main(["eval", "--checkpoint", str(cartpole_checkpoint), *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], lines
    assert not (tmp_path / "videos").exists()


def test_missing_video_packages_are_named(monkeypatch):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "imageio_ffmpeg" else find_spec(name))
    with pytest.raises(ValueError, match=r"^--video needs imageio_ffmpeg: pip install 'voidrl\[video\]'$"):
        check_video_packages("--video", mp4=True)
    check_video_packages("eval_video", mp4=False)  # a GIF needs imageio alone


def test_a_suite_that_cannot_render_here_is_a_one_line_error(tmp_path):
    untrained_agent("ppo", "HalfCheetah-v5", num_envs=1).save(tmp_path / "cheetah.pt")
    env = {**os.environ, "MUJOCO_GL": "glfw"}  # needs a display, which tests never have
    env.pop("DISPLAY", None)
    result = subprocess.run([sys.executable, "-m", "voidrl", "eval", "--checkpoint", "cheetah.pt", "--video", "videos"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    err = [line for line in result.stderr.splitlines() if not line.startswith("WARNING")]
    assert len(err) == 1 and "videos: MuJoCo could not render headless with MUJOCO_GL=glfw" in err[0], result.stderr
    assert not (tmp_path / "videos").exists()


def test_eval_video_needs_eval_every(capsys):
    assert main(["train", "ppo", "--eval-video", "--steps", "256"]) == 2
    assert "eval_video needs eval_every" in capsys.readouterr().err


def test_periodic_evaluations_show_an_episode_in_tensorboard(tmp_path):
    from PIL import Image, ImageSequence
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    voidrl.train("ppo", env="CartPole-v1", steps=512, eval_every=256, eval_episodes=2, eval_video=True, progress=False,
                 run_dir=str(tmp_path))
    events = EventAccumulator(str(tmp_path / "tensorboard"), size_guidance={"images": 0, "scalars": 0})
    events.Reload()
    images = events.Images("eval/video")
    returns = [scalar.value for scalar in events.Scalars("eval/video_return")]
    assert [image.step for image in images] == [256, 512] and len(returns) == 2
    for image, episode_return in zip(images, returns):
        gif = Image.open(io.BytesIO(image.encoded_image_string))
        # CartPole's 400 x 600 screens, every third pixel kept; one frame per step, as many as the return, shown
        # 20 ms each (50 per second), where the GIF writer merges a run of equal frames into one frame shown longer.
        assert gif.size == (200, 134) and (image.height, image.width) == (134, 200)
        assert sum(frame.info["duration"] for frame in ImageSequence.Iterator(gif)) == 20 * episode_return
