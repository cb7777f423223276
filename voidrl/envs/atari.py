"""Atari through ALE's multithreaded C++ vector environment.

The preset is Müller's (2022): grayscale 84x84, 4 stacked frames, frame skip 4
(max-pooled over the last two frames), no sticky actions, the full 18-action
space, up to 30 no-ops at reset, raw (unclipped) rewards. Observations are
uint8 ``[N, 4, 84, 84]`` end to end.

Episodic life: ALE's own ``episodic_life`` flag restarts the *whole game* on a
life loss (checked on ale-py 0.12.1), which would make the reported return
that of a single life. Instead we ask ALE for ``life_loss_info``: a life loss
is reported as ``terminated`` while the game goes on, and the episode statistics
follow the game until it is over (all lives lost, or the frame limit).
"""

from __future__ import annotations

import numpy as np
import torch

from voidrl.envs.base import EpisodeTracker, Step, VecEnv, actions_to_numpy
from voidrl.envs.snapshot import NotSaveable

ATARI_FRAME_SKIP = 4
ATARI_SCREEN = (210, 160)
"""Height and width of the emulator's screen."""
ATARI_FRAME_RATE = 60
"""Frames per second of the Atari 2600 (NTSC)."""
ATARI_RAM_SIZE = 128
PLAYER_POSITION_RAM: dict[str, tuple[int, ...]] = {
    # Ms. Pac-Man's x and y (Anand et al. 2019's AtariARI annotations): screen x + 8, screen y - 5, checked against
    # her sprite on the screen by tests/test_exploration.py.
    "ms_pacman": (10, 16),
    # H.E.R.O.'s x, y and room (AtariARI's): screen x - 3.5 and 145 - screen y within the room, checked the same way
    "hero": (27, 31, 28),
}
"""The RAM addresses of the player's x and y, per game, and of the room where a game has rooms: what ``Step.ram`` is
read for. A position is the tuple of their values, so the same (x, y) in two rooms counts twice."""


class AtariVecEnv(VecEnv):
    """``num_envs`` ALE games; ``episodic_life`` ends training episodes at each life loss.

    With ``screens``, ``Step.screens`` holds the emulator's RGB screen ``[N, 210, 160, 3]`` (the last frame of
    each frame skip, as the game shows it). ALE's vector env returns only its processed observations, so a
    twin of it, made with the same settings and seeds and given the same actions, is kept in lockstep and
    asked for full-size colour frames (neither max-pooled nor stacked); every step checks that both are at
    the same frame of the same game. With ``ram``, ``Step.ram`` holds each game's RAM ``[N, 128]``, from a
    twin of single emulators (``AtariRamTwin``).
    """

    def __init__(self, game: str, num_envs: int, episodic_life: bool = True, max_episode_steps: int = 27_000,
                 screens: bool = False, ram: bool = False):
        from ale_py.vector_env import AtariVectorEnv

        settings = dict(
            autoreset_mode="SameStep",
            frameskip=ATARI_FRAME_SKIP,
            repeat_action_probability=0.0,
            full_action_space=True,
            noop_max=30,
            episodic_life=False,
            life_loss_info=episodic_life,
            reward_clipping=False,
            max_num_frames_per_episode=max_episode_steps * ATARI_FRAME_SKIP,
        )
        self.env = AtariVectorEnv(game, num_envs, stack_num=4, img_height=84, img_width=84, grayscale=True, **settings)
        self.screen_env = None
        if screens:
            self.screen_env = AtariVectorEnv(game, num_envs, stack_num=1, img_height=ATARI_SCREEN[0], img_width=ATARI_SCREEN[1],
                                             grayscale=False, maxpool=False, **settings)
            self.screen_fps = ATARI_FRAME_RATE / ATARI_FRAME_SKIP
        self.ram_twin = AtariRamTwin(game, num_envs, settings["max_num_frames_per_episode"]) if ram else None
        self.num_envs = num_envs
        self.single_observation_space = self.env.single_observation_space
        self.single_action_space = self.env.single_action_space
        self.tracker = EpisodeTracker(num_envs)
        self.frame_numbers = np.zeros(num_envs, dtype=np.int64)

    def reset(self, seed: int) -> torch.Tensor:
        obs, info = self.env.reset(seed=seed)
        if self.screen_env is not None:
            self.screen_env.reset(seed=seed)
        self.frame_numbers = np.asarray(info["episode_frame_number"], dtype=np.int64)
        if self.ram_twin is not None:
            self.ram_twin.reset(self.frame_numbers)
        self.tracker.reset()
        return torch.from_numpy(obs)

    def step(self, actions: torch.Tensor) -> Step:
        actions = actions_to_numpy(actions, self.single_action_space)
        obs, reward, terminated, truncated, info = self.env.step(actions)
        frame_numbers = np.asarray(info["episode_frame_number"], dtype=np.int64)
        # A life loss keeps the game's frame counter running; a new game restarts it.
        game_over = truncated | (terminated & (frame_numbers <= self.frame_numbers))
        self.frame_numbers = frame_numbers
        episodes = self.tracker.update(np.asarray(reward, dtype=np.float64), game_over)
        obs = torch.from_numpy(obs)
        # Only a new game resets an env; after a life loss the game goes on and ``obs`` is the true
        # successor (ALE's ``final_obs`` holds a stale frame there).
        final_obs = torch.from_numpy(_successors(obs.numpy(), info, game_over)) if game_over.any() else obs
        return Step(
            obs=obs,
            reward=torch.from_numpy(np.asarray(reward, dtype=np.float32)),
            terminated=torch.from_numpy(np.asarray(terminated, dtype=bool)),
            truncated=torch.from_numpy(np.asarray(truncated, dtype=bool)),
            final_obs=final_obs,
            **episodes,
            screens=None if self.screen_env is None else self._screens(actions, frame_numbers, game_over),
            ram=None if self.ram_twin is None else self.ram_twin.step(actions, frame_numbers, game_over),
        )

    def _screens(self, actions: np.ndarray, frame_numbers: np.ndarray, game_over: np.ndarray) -> np.ndarray:
        """The twin's ``[N, 210, 160, 3]`` screens after the same ``actions``."""
        screens, _, _, _, info = self.screen_env.step(actions)
        if not np.array_equal(info["episode_frame_number"], frame_numbers):
            raise RuntimeError(f"the Atari screen twin left lockstep: at frames {info['episode_frame_number'].tolist()} "
                               f"of its games, the agent's at {frame_numbers.tolist()}")
        return (_successors(screens, info, game_over) if game_over.any() else screens)[:, 0]

    def close(self) -> None:
        self.env.close()
        if self.screen_env is not None:
            self.screen_env.close()

    def episodes_state(self) -> dict:
        raise NotSaveable("Atari: ale_py's vector env (AtariVectorEnv, threads in C++) can neither read nor set its games' states")


class AtariRamTwin:
    """Single emulators kept in lockstep with ``AtariVectorEnv``'s games, read for their RAM.

    The vector env starts a game with ``reset_game``, then no-op frames (one, plus its random no-ops) up to the
    episode frame number it reports; a twin replays that, then plays every action for the frame skip's frames.
    Without sticky actions the games are deterministic, so the twin's emulator is at the vector env's state
    (its screens are equal, tested); each step checks that both are at the same frame of the same game.
    """

    def __init__(self, game: str, num_envs: int, max_frames: int):
        from ale_py import ALEInterface, LoggerMode, roms

        ALEInterface.setLoggerMode(LoggerMode.Error)
        self.emulators = []
        for _ in range(num_envs):
            emulator = ALEInterface()
            emulator.setFloat("repeat_action_probability", 0.0)
            emulator.setInt("frame_skip", 1)
            emulator.setInt("max_num_frames_per_episode", max_frames)
            emulator.loadROM(roms.get_rom_path(game))
            self.emulators.append(emulator)
        self.action_set = self.emulators[0].getLegalActionSet()  # the full 18 actions, in ALE's order

    def start_game(self, index: int, frame_number: int) -> None:
        emulator = self.emulators[index]
        emulator.reset_game()
        while emulator.getEpisodeFrameNumber() < frame_number:
            emulator.act(self.action_set[0])
        if emulator.getEpisodeFrameNumber() != frame_number:
            raise RuntimeError(f"the Atari RAM twin cannot start game {index} at frame {frame_number}")

    def reset(self, frame_numbers: np.ndarray) -> None:
        for index, frame_number in enumerate(frame_numbers.tolist()):
            self.start_game(index, frame_number)

    def step(self, actions: np.ndarray, frame_numbers: np.ndarray, game_over: np.ndarray) -> np.ndarray:
        """Play ``actions`` ``[N]``; the RAM ``[N, 128]`` uint8 of the states the step reached (where a game ended, its
        last state), then start the new games at the vector env's ``frame_numbers``."""
        ram = np.empty((len(self.emulators), ATARI_RAM_SIZE), dtype=np.uint8)
        for index, (emulator, action) in enumerate(zip(self.emulators, actions.tolist())):
            for _ in range(ATARI_FRAME_SKIP):
                if emulator.game_over():
                    break
                emulator.act(self.action_set[action])
            ram[index] = emulator.getRAM()
            if game_over[index]:
                self.start_game(index, int(frame_numbers[index]))
            elif emulator.getEpisodeFrameNumber() != frame_numbers[index]:
                raise RuntimeError(f"the Atari RAM twin left lockstep: game {index} at frame {emulator.getEpisodeFrameNumber()}, "
                                   f"the agent's at {frame_numbers[index]}")
        return ram


def _successors(obs: np.ndarray, info: dict, game_over: np.ndarray) -> np.ndarray:
    """``obs`` ``[N, ...]`` with the finished game's last observation (ALE's ``final_obs``) where ``game_over``."""
    return np.where(game_over.reshape(-1, *[1] * (obs.ndim - 1)), info["final_obs"], obs)
