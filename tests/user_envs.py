"""Environments as a user writes them, outside voidrl: what tests/test_user_envs.py trains on, finds by import and
breaks on purpose. Defined at module level, so a later process finds them by name (``tests.user_envs:Corridor``)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

CORRIDOR_LENGTH = 6


class Corridor(gym.Env):
    """Walk right along a corridor to its end: observation the position in [0, 1], actions left / right, reward 1 at the
    end (the episode then terminates), time limit 40 steps. Offers its episode for exact resume
    (``episode_state`` / ``load_episode_state``)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self):
        self.position = 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.position = int(self.np_random.integers(0, 2))
        return self._obs(), {}

    def step(self, action):
        self.position = max(0, self.position + (1 if int(action) == 1 else -1))
        at_end = self.position == CORRIDOR_LENGTH
        return self._obs(), float(at_end), at_end, False, {}

    def _obs(self):
        return np.array([self.position / CORRIDOR_LENGTH], np.float32)

    def episode_state(self):
        return {"position": self.position}

    def load_episode_state(self, state):
        self.position = state["position"]


def make_corridor() -> gym.Env:
    """A function returning an environment, with gymnasium's time limit."""
    return gym.wrappers.TimeLimit(Corridor(), 40)


class Lights(gym.Env):
    """Switch on the lights the observation names: Dict observation (``target`` MultiBinary(4), ``step`` Discrete(3)),
    MultiBinary(4) actions (or ``MultiDiscrete([2] * 4, start=1)`` with ``start_at_one``); reward the fraction of lights
    set right, 3 steps an episode (best return 3)."""

    def __init__(self, start_at_one: bool = False):
        self.observation_space = gym.spaces.Dict({"target": gym.spaces.MultiBinary(4), "step": gym.spaces.Discrete(3)})
        self.action_space = gym.spaces.MultiDiscrete([2] * 4, start=[1] * 4) if start_at_one else gym.spaces.MultiBinary(4)
        self.offset = 1 if start_at_one else 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.target = self.np_random.integers(0, 2, 4).astype(np.int8)
        return {"target": self.target, "step": 0}, {}

    def step(self, action):
        reward = float((np.asarray(action) - self.offset == self.target).mean())
        self.t += 1
        self.target = self.np_random.integers(0, 2, 4).astype(np.int8)
        return {"target": self.target, "step": min(self.t, 2)}, reward, False, self.t >= 3, {}


class Thermostat(gym.Env):
    """Hold a temperature at 20 with a heater whose power is a Box action in [0, 50] (not [-1, 1]); reward minus the
    distance, 20 steps an episode."""

    observation_space = gym.spaces.Box(-100.0, 100.0, (1,), np.float32)
    action_space = gym.spaces.Box(0.0, 50.0, (1,), np.float32)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.temperature = 0, float(self.np_random.uniform(0, 10))
        return np.array([self.temperature], np.float32), {}

    def step(self, action):
        self.last_action = float(np.asarray(action)[0])
        self.temperature = float(np.clip(0.8 * self.temperature + 0.1 * self.last_action, -100, 100))
        self.t += 1
        return np.array([self.temperature], np.float32), -abs(self.temperature - 20.0), False, self.t >= 20, {}


class Picture(gym.Env):
    """An 8 x 12 RGB picture ``[H, W, 3]`` uint8 as observation (channels last, as gymnasium renders)."""

    observation_space = gym.spaces.Box(0, 255, (8, 12, 3), np.uint8)
    action_space = gym.spaces.Discrete(3, start=-1)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        assert action in (-1, 0, 1)
        return self.observation_space.sample(), float(action), False, False, {}


class CameraAndJoints(gym.Env):
    """A robot's view: a 40 x 40 RGB camera ``[H, W, 3]`` uint8, three joint angles and a mode switch, in one Dict; the
    reward is 1 when the action matches the mode. Episodes of 20 steps."""

    observation_space = gym.spaces.Dict({
        "camera": gym.spaces.Box(0, 255, (40, 40, 3), np.uint8),
        "joints": gym.spaces.Box(-1.0, 1.0, (3,), np.float32),
        "mode": gym.spaces.Discrete(2),
    })
    action_space = gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self.observe(), {}

    def observe(self) -> dict:
        self.mode = int(self.np_random.integers(2))
        camera = self.np_random.integers(0, 256, (40, 40, 3), dtype=np.uint8)
        joints = self.np_random.uniform(-1, 1, 3).astype(np.float32)
        return {"camera": camera, "joints": joints, "mode": self.mode}

    def step(self, action):
        reward = float(action == self.mode)
        self.t += 1
        return self.observe(), reward, False, self.t >= 20, {}


class Broken(gym.Env):
    """Fails as told after ``at`` steps: ``raise`` in step, ``reset`` raises in reset, ``nan`` reward, ``outside`` its
    observation space, ``tuple`` the old four-value step, ``init`` in its constructor."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, fault: str = "raise", at: int = 40):
        if fault == "init":
            raise RuntimeError("cannot open the simulator")
        self.fault, self.at, self.count = fault, at, 0

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        if self.fault == "reset" and self.count >= self.at:
            raise OSError("the simulator crashed on reset")
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.count += 1
        obs, reward = np.zeros(2, np.float32), 1.0
        if self.count >= self.at:
            if self.fault == "raise":
                raise ZeroDivisionError("division by zero in my physics")
            if self.fault == "nan":
                reward = float("nan")
            if self.fault == "outside":
                obs = np.full(2, 5.0, np.float32)
            if self.fault == "tuple":
                return obs, reward, False, {}
        return obs, reward, self.count % 10 == 0, False, {}


class Words(gym.Env):
    """A Text observation space, which voidrl cannot encode."""

    observation_space = gym.spaces.Text(8)
    action_space = gym.spaces.Discrete(2)


FAULTS = ("raise", "reset", "nan", "outside", "tuple", "init")
for fault in FAULTS:
    gym.register(f"Broken{fault.title()}-v0", entry_point=Broken, kwargs={"fault": fault})
gym.register("UserCorridor-v0", entry_point=make_corridor)
gym.register("CameraAndJoints-v0", entry_point=CameraAndJoints)
