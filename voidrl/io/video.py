"""Episode videos from the screens ``Agent.evaluate`` hands a recorder: MP4 files (H.264 through imageio's ffmpeg
plugin, whose ffmpeg binary comes in the imageio-ffmpeg wheel), or screens kept in memory for TensorBoard, where
they go as an animated GIF."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np


def check_video_packages(option: str, mp4: bool) -> None:
    """ValueError naming ``option`` unless imageio is installed, and with ``mp4`` its ffmpeg plugin (the ``video``
    extra has both)."""
    missing = [name for name in ("imageio", "imageio_ffmpeg")[:2 if mp4 else 1] if importlib.util.find_spec(name) is None]
    if missing:
        raise ValueError(f"{option} needs {' and '.join(missing)}: pip install 'voidrl[video]'")


class EpisodeRecorder(Protocol):
    """Takes the screens of the episodes that one environment plays, in order."""

    def start(self, fps: float) -> None:
        """Before the first screen: how many screens make a second of the game."""

    def add(self, screen: np.ndarray) -> None:
        """The ``[H, W, 3]`` uint8 screen after the next step of the episode being played."""

    def end(self, episode_return: float) -> None:
        """The episode whose screens came since the last ``end`` is over, with this return."""


def return_text(episode_return: float) -> str:
    """A return as its shortest float32 decimal, without an exponent: ``21.0``, ``0.955``, ``-3.5``."""
    return np.format_float_positional(np.float32(episode_return), trim="0")


def episode_file_name(index: int, episode_return: float, member: int | None = None) -> str:
    """``episode-003-return-21.0.mp4``; ``episode-003-return-21.0-member-2.mp4`` where member j = 2 of a policy
    family (NGU, Agent57) played."""
    return f"episode-{index:03d}-return-{return_text(episode_return)}{'' if member is None else f'-member-{member}'}.mp4"


class EpisodeFiles:
    """Writes each episode to ``directory`` as ``episode_file_name`` says, numbered from 000, at the screens' own
    rate; an episode being played is ``episode-NNN.incomplete.mp4`` until it ends. ``paths``: the files written."""

    def __init__(self, directory: str | Path, member: int | None = None):
        self.directory = Path(directory)
        self.member = member
        self.paths: list[Path] = []
        self.fps = 0.0
        self.writer = None

    def start(self, fps: float) -> None:
        self.fps = fps

    def add(self, screen: np.ndarray) -> None:
        if self.writer is None:
            import imageio.v2 as imageio

            self.directory.mkdir(parents=True, exist_ok=True)
            # macro_block_size=2: yuv420p needs an even width and height; every suite's screens have them as they are
            self.writer = imageio.get_writer(self._incomplete(), format="FFMPEG", fps=self.fps, macro_block_size=2,
                                             ffmpeg_log_level="error")
        self.writer.append_data(screen)

    def end(self, episode_return: float) -> None:
        self.writer.close()
        self.writer = None
        path = self.directory / episode_file_name(len(self.paths), episode_return, self.member)
        self._incomplete().replace(path)
        self.paths.append(path)

    def _incomplete(self) -> Path:
        return self.directory / f"episode-{len(self.paths):03d}.incomplete.mp4"


@dataclass
class Video:
    """One episode: its screens ``[T, H, W, 3]`` uint8 (one after each of its T steps), their rate, its return."""

    screens: np.ndarray
    fps: float
    episode_return: float


class EpisodeScreens:
    """Keeps each episode in memory, as a ``Video`` in ``videos``."""

    def __init__(self):
        self.videos: list[Video] = []
        self.fps = 0.0
        self.screens: list[np.ndarray] = []

    def start(self, fps: float) -> None:
        self.fps = fps

    def add(self, screen: np.ndarray) -> None:
        self.screens.append(screen)

    def end(self, episode_return: float) -> None:
        self.videos.append(Video(np.stack(self.screens), self.fps, episode_return))
        self.screens = []


def gif_bytes(video: Video) -> bytes:
    """``video`` as an animated GIF that loops (a GIF's delays are whole hundredths of a second)."""
    import imageio.v3 as iio

    return iio.imwrite("<bytes>", video.screens, extension=".gif", duration=1000 / video.fps, loop=0)
