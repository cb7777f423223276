"""Gymnasium vector environments (classic control, MuJoCo, MinAtar, MiniGrid) behind ``VecEnv``."""

from __future__ import annotations

import functools
import math
import os
import warnings

import gymnasium as gym
import numpy as np
import torch
from gymnasium.envs.classic_control.cartpole import CartPoleVectorEnv
from gymnasium.vector import AutoresetMode

from voidrl.configs.choices import GENERIC_SUITE
from voidrl.envs.base import EpisodeTracker, Step, VecEnv, actions_to_numpy
from voidrl.envs.failure import EnvironmentFailure
from voidrl.envs.snapshot import NotSaveable, env_state, from_plain, load_env_state, to_plain
from voidrl.envs.suites import registered_spec
from voidrl.extras import require
from voidrl.nets.bodies import KeyedShape, ObservationPart

DEFAULT_SCREEN_FPS = 20
"""Screens per second of an env whose metadata has no ``render_fps`` (MinAtar's: its own display shows each
state for 50 ms)."""
MINATAR_CELL_PIXELS = 16
"""Pixels a side of each MinAtar cell in its screens: 160 x 160 pictures."""


CARTPOLE_FIELDS = ("state", "steps", "prev_done")
"""What changes during the episodes of ``SameStepCartPole`` (its random generator besides)."""


class SameStepCartPole(CartPoleVectorEnv):
    """Gymnasium's native vectorised CartPole, resetting finished poles in the same step.

    The parent resets a finished sub-environment only on the *next* call and
    ignores that call's action ("next-step" autoreset). Here the reset happens at
    once, the true final observation goes to ``info["final_obs"]``, and the
    returned observation is the reset one, as in every other voidrl backend.
    """

    metadata = {**CartPoleVectorEnv.metadata, "autoreset_mode": AutoresetMode.SAME_STEP}

    def step(self, action):
        obs, reward, terminated, truncated, _ = super().step(action)
        done = self.prev_done
        final_obs = obs
        if done.any():
            self.state[:, done] = self.np_random.uniform(low=self.low, high=self.high, size=(4, int(done.sum())))
            self.steps[done] = 0
            self.prev_done = np.zeros_like(done)
            obs = self.state.T.astype(np.float32)
        return obs, reward, terminated, truncated, {"final_obs": final_obs, "_final_obs": done}

    def episodes_state(self) -> dict:
        fields = {name: getattr(self, name) for name in CARTPOLE_FIELDS}
        return to_plain({**fields, "np_random": self.np_random.bit_generator.state}, "CartPole")

    def load_episodes_state(self, state: dict) -> None:
        fields = from_plain(state, "CartPole")
        if not isinstance(fields, dict) or set(fields) != {*CARTPOLE_FIELDS, "np_random"}:
            raise ValueError(f"CartPole: the saved fields are not {sorted(CARTPOLE_FIELDS)} and np_random")
        shapes = {"state": (4, self.num_envs), "steps": (self.num_envs,), "prev_done": (self.num_envs,)}
        for name in CARTPOLE_FIELDS:
            value = fields[name]
            if not (isinstance(value, np.ndarray) and value.shape == shapes[name] and value.dtype.kind in "fib"[CARTPOLE_FIELDS.index(name)]):
                raise ValueError(f"CartPole: the saved {name} is not an array of shape {shapes[name]}")
            setattr(self, name, value)
        try:
            self.np_random.bit_generator.state = fields["np_random"]
        except (TypeError, ValueError, KeyError, IndexError) as error:
            raise ValueError(f"CartPole: a damaged random generator state ({error})") from None


def _as_tensor(array) -> torch.Tensor:
    """Observations as tensors; float64 (MuJoCo) becomes float32."""
    array = np.asarray(array)
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    return torch.from_numpy(array)


WORKER_REPORTS = r".*ERROR: (Received the following error from Worker|Traceback|Raising the last exception back)"
"""The warnings by which gymnasium's AsyncVectorEnv reports a worker's exception (one per worker, its traceback among
them) before raising it again in the main process: some 30 lines ahead of voidrl's own one, so they are silenced."""
warnings.filterwarnings("ignore", message=WORKER_REPORTS, category=UserWarning)


class GymVecEnv(VecEnv):
    """Wraps a gymnasium ``VectorEnv`` running in same-step autoreset mode; with ``screens``, its sub-environments
    are wrapped in ``ScreenAfterStep``, whose screens become ``Step.screens``; ``action_repeat``: the environment
    steps each of its steps takes (its sub-environments wrapped in ``ActionRepeat``)."""

    def __init__(self, env: gym.vector.VectorEnv, screens: bool = False, action_repeat: int = 1, env_id: str | None = None):
        if env.metadata.get("autoreset_mode") != AutoresetMode.SAME_STEP:
            raise ValueError("GymVecEnv needs a vector env in same-step autoreset mode")
        self.env = env
        self.env_id = env_id or (env.spec.id if env.spec else "gymnasium")
        self.num_envs = env.num_envs
        self.single_observation_space = env.single_observation_space
        self.single_action_space = env.single_action_space
        self.tracker = EpisodeTracker(self.num_envs)
        self.action_repeat = action_repeat
        self.draws_screens = screens
        if screens:
            self.screen_fps = (env.metadata.get("render_fps") or DEFAULT_SCREEN_FPS) / action_repeat

    def failure(self, call: str, error: Exception) -> EnvironmentFailure:
        """The failure of one of the environments in ``call``; in a worker process, where its traceback stays (gymnasium's
        report of it is silenced: ``WORKER_REPORTS``), the message says how to see it."""
        if isinstance(self.env, gym.vector.AsyncVectorEnv):
            call = f"{call} (in a --vector async worker; --vector sync shows its traceback)"
        return EnvironmentFailure(self.env_id, call, error)

    def reset(self, seed: int) -> torch.Tensor:
        try:
            obs, _ = self.env.reset(seed=seed)
        except Exception as error:
            raise self.failure("reset()", error) from error
        self.tracker.reset()
        return _as_tensor(obs)

    def step(self, actions: torch.Tensor) -> Step:
        try:
            obs, reward, terminated, truncated, info = self.env.step(actions_to_numpy(actions, self.single_action_space))
        except Exception as error:
            raise self.failure("step()", error) from error
        reward = np.asarray(reward, dtype=np.float64)
        done = terminated | truncated
        obs = _as_tensor(obs)
        final_obs = obs
        if done.any():
            final_obs = obs.clone()
            for i in np.flatnonzero(done):
                final_obs[i] = _as_tensor(info["final_obs"][i])
        episodes = self.tracker.update(reward, done)
        return Step(
            obs=obs,
            reward=torch.from_numpy(reward.astype(np.float32)),
            terminated=torch.from_numpy(np.asarray(terminated, dtype=bool)),
            truncated=torch.from_numpy(np.asarray(truncated, dtype=bool)),
            final_obs=final_obs,
            **episodes,
            screens=np.stack(self.env.get_attr("screen")) if self.draws_screens else None,
        )

    def close(self) -> None:
        self.env.close()

    def episodes_state(self) -> dict:
        if isinstance(self.env, SameStepCartPole):
            envs = self.env.episodes_state()
        elif not hasattr(self.env, "envs"):
            raise NotSaveable("the environments run in subprocesses (--vector async), whose state is not read back")
        else:
            envs = [env_state(env, f"environment {i} ({self.env_id})")
                    for i, env in enumerate(self.env.envs)]
        return {"tracker": self.tracker.state_dict(), "envs": envs}

    def load_episodes_state(self, state: dict) -> None:
        if not isinstance(state, dict) or set(state) != {"tracker", "envs"}:
            raise ValueError("not the state of a gymnasium vector env's episodes")
        if isinstance(self.env, SameStepCartPole):
            self.env.load_episodes_state(state["envs"])
        else:
            if not isinstance(state["envs"], list) or len(state["envs"]) != self.num_envs:
                raise ValueError(f"the saved episodes are not those of {self.num_envs} environments")
            for i, (env, env_saved) in enumerate(zip(self.env.envs, state["envs"])):
                load_env_state(env, env_saved, f"environment {i}")
        self.tracker.load_state_dict(state["tracker"])


class ActionRepeat(gym.Wrapper):
    """Each action applied for ``repeat`` steps of the wrapped env, their rewards summed and the last step's
    observation returned (wrappers outside, such as ``RenderedFrames``, see one step); an episode that ends inside
    the repeat stops it there, with its own terminated and truncated flags."""

    def __init__(self, env: gym.Env, repeat: int):
        super().__init__(env)
        self.repeat = repeat

    def step(self, action):
        total = 0.0
        for _ in range(self.repeat):
            obs, reward, terminated, truncated, info = self.env.step(action)
            total += float(reward)
            if terminated or truncated:
                break
        return obs, total, terminated, truncated, info


class CheckedSteps(gym.Wrapper):
    """What voidrl cannot train on, refused at the step it happens in one line: a step that is not gymnasium's
    ``(obs, reward, terminated, truncated, info)``, a reward that is not a finite number, an observation outside its
    space (a Box's shape and bounds, finite; other spaces by ``contains``). For environments voidrl did not write."""

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.check_observation(obs, "reset")
        return obs, info

    def step(self, action):
        result = self.env.step(action)
        if not (isinstance(result, tuple) and len(result) == 5):
            got = f"a tuple of {len(result)}" if isinstance(result, tuple) else f"a {type(result).__name__}"
            raise ValueError(f"step returned {got}, not (obs, reward, terminated, truncated, info)")
        obs, reward, terminated, truncated, info = result
        if not (isinstance(reward, (int, float, np.integer, np.floating)) and np.isfinite(reward)):
            raise ValueError(f"step returned the reward {reward!r}, not a finite number")
        self.check_observation(obs, "step")
        return result

    def check_observation(self, obs, call: str) -> None:
        space = self.observation_space
        if isinstance(space, gym.spaces.Box):
            obs = np.asarray(obs)
            if obs.shape != space.shape:
                raise ValueError(f"{call} returned an observation of shape {obs.shape}, its space's is {space.shape}")
            if obs.dtype.kind not in "biuf":
                raise ValueError(f"{call} returned an observation of {obs.dtype}, not numbers")
            if obs.dtype.kind == "f" and not np.isfinite(obs).all():
                raise ValueError(f"{call} returned an observation that is not finite: {obs.tolist() if obs.size <= 8 else 'nan or inf'}")
            if not ((obs >= space.low).all() and (obs <= space.high).all()):
                raise ValueError(f"{call} returned an observation outside its space {space}")
        elif not space.contains(obs):
            raise ValueError(f"{call} returned an observation outside its space {space}")


class ChannelsFirst(gym.ObservationWrapper):
    """Images ``[H, W, C]`` as ``[C, H, W]``, the layout of voidrl's convolutional bodies."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        space = env.observation_space
        self.observation_space = gym.spaces.Box(np.moveaxis(space.low, -1, 0), np.moveaxis(space.high, -1, 0), dtype=space.dtype)

    def observation(self, observation):
        return np.ascontiguousarray(np.moveaxis(observation, -1, 0))


def channels_last(shape: tuple[int, ...]) -> bool:
    """An image space's ``shape`` (``is_image_space``) is ``[H, W, C]``, which ``ChannelsFirst`` turns around."""
    return len(shape) == 3 and shape[-1] <= 4 < shape[0]


def channels_first(shape: tuple[int, ...]) -> tuple[int, ...]:
    """An image space's ``shape`` (``is_image_space``) as voidrl's networks take it: ``[C, H, W]``."""
    if len(shape) == 2:
        return (1, *shape)
    return (shape[-1], *shape[:-1]) if channels_last(shape) else tuple(shape)


class KeyedBox(gym.spaces.Box):
    """A Dict observation laid out as one float32 vector (``KeyedFlatten``), whose ``shape`` is a ``KeyedShape``
    naming each key's part: what gives each image key a CNN of its own under ``network auto``."""

    def __init__(self, low: np.ndarray, high: np.ndarray, parts: tuple[ObservationPart, ...]):
        super().__init__(low, high, dtype=np.float32)
        self._shape = KeyedShape(self._shape, parts)

    def __repr__(self) -> str:
        return f"KeyedBox({', '.join(f'{part.key}: {list(part.shape)}' for part in self.shape.parts)})"


class KeyedFlatten(gym.ObservationWrapper):
    """A Dict observation that holds images (a top-level key of ``is_image_space``) as one float32 vector, key after key
    in the space's order: an image channels first with its values 0-255 as they were, any other key as gymnasium
    flattens it (one-hot where discrete). Its space is a ``KeyedBox``."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.keys = list(env.observation_space.spaces.items())
        self.turned = {key for key, space in self.keys if is_image_space(space) and channels_last(space.shape)}
        """The image keys given ``[H, W, C]``, turned channels first."""
        parts, lows, highs, offset = [], [], [], 0
        for key, space in self.keys:
            if is_image_space(space):
                shape = channels_first(space.shape)
                low, high = np.zeros(math.prod(shape), np.float32), np.full(math.prod(shape), 255.0, np.float32)
            else:
                flat = gym.spaces.flatten_space(space)
                shape, low, high = flat.shape, flat.low.astype(np.float32), flat.high.astype(np.float32)
            parts.append(ObservationPart(str(key), tuple(int(size) for size in shape), is_image_space(space), offset))
            lows.append(low)
            highs.append(high)
            offset += math.prod(shape)
        self.observation_space = KeyedBox(np.concatenate(lows), np.concatenate(highs), tuple(parts))

    def observation(self, observation):
        pieces = []
        for (key, space), part in zip(self.keys, self.observation_space.shape.parts):
            value = observation[key]
            if key in self.turned:
                pieces.append(np.moveaxis(np.asarray(value), -1, 0).reshape(-1))
            elif part.image:
                pieces.append(np.asarray(value).reshape(-1))
            else:
                pieces.append(np.asarray(gym.spaces.flatten(space, value)).reshape(-1))
        return np.concatenate(pieces).astype(np.float32)


def holds_images(space: gym.Space) -> bool:
    """A Dict space with an image (``is_image_space``) among its top-level keys: ``KeyedFlatten`` lays it out."""
    return isinstance(space, gym.spaces.Dict) and any(is_image_space(part) for part in space.spaces.values())


class DrawnMultiDiscrete(gym.spaces.MultiDiscrete):
    """``MultiDiscrete(nvec)`` counted from 0, as voidrl's policies draw from it, that names in messages the space the
    user's environment declared (a ``MultiBinary``, or a ``MultiDiscrete`` with a start)."""

    def __init__(self, nvec: np.ndarray, declared: gym.Space):
        super().__init__(nvec)
        self.declared = declared

    def __repr__(self) -> str:
        return f"{self.declared} (drawn as MultiDiscrete({self.nvec}))"


class ZeroBasedDiscrete(gym.ActionWrapper):
    """Discrete choices counted from 0, as voidrl's policies draw them: ``Discrete(n, start)`` as ``Discrete(n)``, a
    ``MultiDiscrete(nvec, start)`` as ``MultiDiscrete(nvec)`` (action a is the env's ``start + a``), and a
    ``MultiBinary(n)`` as ``MultiDiscrete([2] * n)``."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        space = env.action_space
        if isinstance(space, gym.spaces.Discrete):
            self.start, self.action_space = int(space.start), gym.spaces.Discrete(int(space.n))
        elif isinstance(space, gym.spaces.MultiDiscrete):
            self.start, self.action_space = space.start, DrawnMultiDiscrete(space.nvec, space)
        else:
            self.start, self.action_space = 0, DrawnMultiDiscrete(np.full(space.n, 2), space)
        self.dtype = space.dtype

    def action(self, action):
        return (np.asarray(action) + self.start).astype(self.dtype)


class UnsupportedSpace(ValueError):
    """An environment's observation or action space voidrl cannot train on."""


FLATTENED_SPACES = (gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary, gym.spaces.Dict, gym.spaces.Tuple)
"""Observation spaces voidrl flattens into one vector (gymnasium's ``flatten_space``: one-hot for discrete parts)."""
SUPPORTED_SPACES = ("observations: Box (vectors, images, any shape), Discrete, MultiDiscrete, MultiBinary, and Dict or "
                    "Tuple of these; actions: Discrete, 1-d MultiDiscrete, 1-d MultiBinary and 1-d Box")


def is_image_space(space: gym.Space) -> bool:
    """uint8 ``[H, W]`` or ``[H, W, C]`` / ``[C, H, W]`` with at most 4 channels: what goes to a convolutional body."""
    return (isinstance(space, gym.spaces.Box) and space.dtype == np.uint8
            and (len(space.shape) == 2 or (len(space.shape) == 3 and min(space.shape[0], space.shape[-1]) <= 4)))


def for_the_agent(env: gym.Env) -> gym.Env:
    """A Gymnasium environment as voidrl's networks take it: uint8 images channels first (``[1, H, W]`` for
    ``[H, W]``), other Box observations of more than one axis flattened, a Dict holding images laid out key by key
    (``KeyedFlatten``: each image key gets a CNN of its own), other discrete, Dict and Tuple observations flattened to
    one vector (one-hot where discrete), discrete actions counted from 0 (``ZeroBasedDiscrete``), finite Box action bounds
    rescaled to [-1, 1] (gymnasium's ``RescaleAction``: a Gaussian policy's unit-scale noise then covers the
    range); an ``UnsupportedSpace`` naming the space for anything else."""
    obs_space, action_space = env.observation_space, env.action_space
    if is_image_space(obs_space):
        if len(obs_space.shape) == 2:
            env = gym.wrappers.ReshapeObservation(env, (1, *obs_space.shape))
        elif channels_last(obs_space.shape):
            env = ChannelsFirst(env)
    elif isinstance(obs_space, gym.spaces.Box):
        if len(obs_space.shape) != 1:
            env = gym.wrappers.FlattenObservation(env)
    elif holds_images(obs_space):
        env = KeyedFlatten(env)
    elif isinstance(obs_space, FLATTENED_SPACES):
        try:
            env = gym.wrappers.FlattenObservation(env)
        except NotImplementedError:
            raise UnsupportedSpace(f"observation space {obs_space} is not supported; voidrl takes {SUPPORTED_SPACES}") from None
    else:
        raise UnsupportedSpace(f"observation space {obs_space} is not supported; voidrl takes {SUPPORTED_SPACES}")
    one_axis = len(action_space.shape) == 1
    if isinstance(action_space, gym.spaces.Discrete) or isinstance(action_space, (gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)) and one_axis:
        if isinstance(action_space, gym.spaces.MultiBinary) or np.any(action_space.start != 0):
            env = ZeroBasedDiscrete(env)
    elif isinstance(action_space, gym.spaces.Box) and one_axis:
        bounded = np.isfinite(action_space.low).all() and np.isfinite(action_space.high).all()
        if bounded and not ((action_space.low == -1).all() and (action_space.high == 1).all()):
            env = gym.wrappers.RescaleAction(env, np.full(action_space.shape, -1, action_space.dtype), np.full(action_space.shape, 1, action_space.dtype))
    else:
        raise UnsupportedSpace(f"action space {action_space} is not supported; voidrl takes {SUPPORTED_SPACES}")
    return env


class UserSpaces:
    """How voidrl's agent sees one environment of the generic suite (``for_the_agent``'s wrappers), to act on its own
    observations: ``observation_space`` and ``action_space`` are the environment's own, ``observations`` turns its
    observations, one (a dict for a Dict space) or a batch (a list, or an array with one more axis), into the agent's
    ``[B, ...]``, and ``action`` one of the agent's actions into the environment's."""

    def __init__(self, env_id: str):
        raw = gym.make(registered_spec(env_id) or env_id, disable_env_checker=True)
        self.observation_space, self.action_space = raw.observation_space, raw.action_space
        env, self.observation_wrappers, self.action_wrappers = for_the_agent(raw), [], []
        while env is not raw:
            if isinstance(env, gym.ObservationWrapper):
                self.observation_wrappers.insert(0, env)  # innermost first
            if isinstance(env, gym.ActionWrapper):
                self.action_wrappers.append(env)  # outermost first
            env = env.env
        raw.close()

    def observations(self, obs) -> tuple[np.ndarray, bool]:
        """``obs`` as the agent's ``[B, ...]`` batch, and whether it was one observation."""
        one_axis_more = isinstance(self.observation_space, (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiDiscrete,
                                                             gym.spaces.MultiBinary)) and np.ndim(obs) == len(self.observation_space.shape) + 1
        single = not (isinstance(obs, list) or one_axis_more)
        return np.stack([self.observation(one) for one in ([obs] if single else obs)]), single

    def observation(self, obs) -> np.ndarray:
        for wrapper in self.observation_wrappers:
            obs = wrapper.observation(obs)
        return np.asarray(obs)

    def action(self, action: np.ndarray):
        for wrapper in self.action_wrappers:
            action = wrapper.action(action)
        return action


class MinAtarPixels(gym.ObservationWrapper):
    """MinAtar's ``[10, 10, C]`` bool grid as ``[C, 10, 10]`` uint8 in {0, 255}."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        height, width, channels = env.observation_space.shape
        self.observation_space = gym.spaces.Box(0, 255, (channels, height, width), np.uint8)

    def observation(self, observation):
        return np.ascontiguousarray(np.moveaxis(observation, -1, 0)).astype(np.uint8) * 255


class MiniGridPlanes(gym.ObservationWrapper):
    """MiniGrid's egocentric ``[7, 7, 3]`` view (object, colour and state index per cell) as one-hot planes
    ``[11 + 6 + 3, 7, 7]`` uint8 in {0, 255}, so it reads like MinAtar's grid (the agent's heading and the
    mission text are left out: the view is already turned to the heading)."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX, STATE_TO_IDX

        height, width, _ = env.observation_space["image"].shape
        sizes = (len(OBJECT_TO_IDX), len(COLOR_TO_IDX), len(STATE_TO_IDX))
        self.observation_space = gym.spaces.Box(0, 255, (sum(sizes), height, width), np.uint8)
        self.first_planes = np.cumsum((0, *sizes[:-1]))  # each index's first plane: 0, 11, 17
        self.rows, self.columns = np.indices((height, width))

    def observation(self, observation):
        planes = np.zeros(self.observation_space.shape, np.uint8)
        # one assignment sets the three planes of every cell (a fifth of the time of one-hot rows per index)
        planes[(observation["image"] + self.first_planes).transpose(2, 0, 1), self.rows, self.columns] = 255
        return planes


class FrameRenderer:
    """Headless ``[3, S, S]`` uint8 frames of one gymnasium MuJoCo env made with ``render_mode="rgb_array"``.

    The model's tracking camera (``track``, where it has one) follows the body, so a running cheetah stays
    in view (gymnasium's default free camera stays where the episode began). Shadows are mapped at 512
    instead of 4096 texels and frames are not multisampled: on a CPU (Mesa's llvmpipe) that renders a
    96x96 half-cheetah about 6x faster, at the cost of softer shadow edges.

    Each env has a GL context of its own, but gymnasium makes it current only when it is created. So every
    frame is drawn with this env's context made current first, and ``close`` frees MuJoCo's GL objects in
    it: freed later by the garbage collector, they would be deleted from whichever context is current then,
    whose objects have the same ids (another env's frames would come out stale).
    """

    def __init__(self, env: gym.Env, purpose: str = "pixels"):
        import mujoco

        self.env = env
        unwrapped = env.unwrapped
        unwrapped.model.vis.quality.shadowsize = 512
        unwrapped.model.vis.quality.offsamples = 0
        track = mujoco.mj_name2id(unwrapped.model, mujoco.mjtObj.mjOBJ_CAMERA, "track")
        if track >= 0:
            unwrapped.mujoco_renderer.camera_id = track
        try:
            with warnings.catch_warnings():  # a failing backend warns as well as raising; the error below says it all
                warnings.simplefilter("ignore")
                first = unwrapped.render()  # before reset: the wrapper chain's order check would refuse
        except Exception as error:  # EGL and OSMesa fail with import, attribute and runtime errors alike
            backend = os.environ.get("MUJOCO_GL")
            raise ValueError(
                f"{purpose}: MuJoCo could not render headless with MUJOCO_GL={backend} ({type(error).__name__}: "
                f"{str(error).splitlines()[0] if str(error) else 'no message'}); install EGL (Debian: libegl1 "
                "libgl1-mesa-dri) or set MUJOCO_GL=osmesa with libosmesa6") from None
        self.viewer = unwrapped.mujoco_renderer.viewer
        self.shape = (3, *first.shape[:2])

    def frame(self) -> np.ndarray:
        """``[3, S, S]`` uint8."""
        return np.ascontiguousarray(np.moveaxis(self.screen(), -1, 0))

    def screen(self) -> np.ndarray:
        """``[S, S, 3]`` uint8, as gymnasium renders it."""
        self.viewer.make_context_current()
        return self.env.unwrapped.render()

    def body_mask(self) -> np.ndarray:
        """``[S, S]`` bool: the pixels of the last ``screen`` (same camera) that show a geom of a body other than the
        world's (the floor is the world's), drawn with MuJoCo's segmentation rendering in this env's context
        (gymnasium's own segmentation path overflows uint8 arithmetic under NumPy 2)."""
        import mujoco

        viewer, unwrapped = self.viewer, self.env.unwrapped
        viewer.make_context_current()
        mujoco.mjv_updateScene(unwrapped.model, unwrapped.data, viewer.vopt, viewer.pert, viewer.cam, mujoco.mjtCatBit.mjCAT_ALL, viewer.scn)
        flags = (mujoco.mjtRndFlag.mjRND_SEGMENT, mujoco.mjtRndFlag.mjRND_IDCOLOR)
        for flag in flags:
            viewer.scn.flags[flag] = 1
        try:
            mujoco.mjr_render(viewer.viewport, viewer.scn, viewer.con)
        finally:
            for flag in flags:
                viewer.scn.flags[flag] = 0
        colours = np.zeros((viewer.viewport.height, viewer.viewport.width, 3), dtype=np.uint8)
        mujoco.mjr_readPixels(colours, None, viewer.viewport, viewer.con)
        segment = colours[::-1].astype(np.int64) @ np.array([1, 1 << 8, 1 << 16])  # segid + 1, 0 where no geom
        body_of_segment = np.zeros(viewer.scn.ngeom + 1, dtype=bool)
        for geom in viewer.scn.geoms[: viewer.scn.ngeom]:
            if geom.segid >= 0 and geom.objtype == mujoco.mjtObj.mjOBJ_GEOM:
                body_of_segment[geom.segid + 1] = unwrapped.model.geom_bodyid[geom.objid] != 0
        return body_of_segment[segment.clip(0, viewer.scn.ngeom)]

    def close(self) -> None:
        if self.viewer is not None:
            self.viewer.make_context_current()
            self.viewer.con.free()
            self.viewer = None


class RenderedFrames(gym.ObservationWrapper):
    """A MuJoCo task seen through gymnasium's ``rgb_array`` rendering: ``[3, S, S]`` uint8 frames instead
    of the joint state (see ``FrameRenderer``)."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.renderer = FrameRenderer(env)
        self.observation_space = gym.spaces.Box(0, 255, self.renderer.shape, np.uint8)

    def observation(self, observation):
        return self.renderer.frame()

    def close(self):
        self.renderer.close()
        super().close()


class ScreenAfterStep(gym.Wrapper):
    """Keeps ``screen``: the env's own ``rgb_array`` rendering ``[H, W, 3]`` uint8 of the state its last step led
    to, drawn inside ``step``, so that a same-step autoreset does not replace the screen an episode ended on.

    MuJoCo draws through a ``FrameRenderer`` (the tracking camera; the one of ``RenderedFrames`` where the
    agent observes frames too). MinAtar draws its 10 x 10 grid as 10 x 10 colours in [0, 1]; each becomes a
    block of ``MINATAR_CELL_PIXELS`` squared uint8 pixels.
    """

    def __init__(self, env: gym.Env, suite: str):
        super().__init__(env)
        self.own_renderer = suite == "mujoco" and not isinstance(env, RenderedFrames)
        if self.own_renderer:
            self.renderer = FrameRenderer(env, "videos")
        else:
            self.renderer = env.renderer if isinstance(env, RenderedFrames) else None
        self.cell_pixels = MINATAR_CELL_PIXELS if suite == "minatar" else None
        self.screen: np.ndarray | None = None

    def draw(self) -> np.ndarray:
        if self.renderer is not None:
            return self.renderer.screen()
        screen = self.env.unwrapped.render()  # past gymnasium's checker, which would warn of MinAtar's float colours
        if self.cell_pixels is not None:
            screen = (screen * 255).round().astype(np.uint8).repeat(self.cell_pixels, 0).repeat(self.cell_pixels, 1)
        return screen

    def step(self, action):
        result = self.env.step(action)
        self.screen = self.draw()
        return result

    def close(self):
        if self.own_renderer:
            self.renderer.close()
        super().close()


def make_rendering_env(env_id: str, size: int, max_episode_steps: int | None = None) -> tuple[gym.Env, FrameRenderer]:
    """One gymnasium MuJoCo env (not yet reset) and its renderer of ``size`` x ``size`` frames; close the
    renderer before the env."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    env = gym.make(env_id, render_mode="rgb_array", width=size, height=size,
                   **({"max_episode_steps": max_episode_steps} if max_episode_steps else {}))
    return env, FrameRenderer(env)


def make_gym_vec_env(env_id: str, num_envs: int, suite: str, max_episode_steps: int | None = None,
                     pixels: int | None = None, screens: bool = False, action_repeat: int = 1, vector: str = "sync") -> GymVecEnv:
    """Build a same-step vector env for a registered gymnasium id of ``suite``; MuJoCo tasks observed as
    ``pixels`` x ``pixels`` frames when given (rendered headless, through EGL unless MUJOCO_GL says otherwise).
    With ``screens`` each step also returns every sub-environment's own rendering (``ScreenAfterStep``; MuJoCo's
    at ``pixels`` where given, else at gymnasium's default size). Each action is applied for ``action_repeat``
    steps inside the time limit (``ActionRepeat``), before frames are rendered. ``vector``: gymnasium's ``sync`` (one
    process) or ``async`` vector env (each environment in a subprocess). An environment of the generic suite is checked
    at every step (``CheckedSteps``) and adapted to voidrl's networks (``for_the_agent``)."""
    if env_id == "CartPole-v1" and max_episode_steps is None and not screens and action_repeat == 1 and vector == "sync":
        return GymVecEnv(SameStepCartPole(num_envs=num_envs, max_episode_steps=500))
    wrappers = {"minatar": [MinAtarPixels], "minigrid": [MiniGridPlanes], GENERIC_SUITE: [for_the_agent]}.get(suite, [])
    rendering = {}
    if pixels is not None:
        wrappers = [RenderedFrames]
        rendering = {"width": pixels, "height": pixels}
    if action_repeat > 1:
        wrappers = [functools.partial(ActionRepeat, repeat=action_repeat), *wrappers]
    if suite == GENERIC_SUITE:
        wrappers = [CheckedSteps, *wrappers]
    if pixels is not None or screens:
        os.environ.setdefault("MUJOCO_GL", "egl")
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame draws classic control's pictures without a display
        rendering["render_mode"] = "rgb_array"
    if screens:
        wrappers = [*wrappers, functools.partial(ScreenAfterStep, suite=suite)]
    try:
        env = gym.make_vec(
            registered_spec(env_id) or env_id,  # a class or function given from Python is registered by its id
            num_envs=num_envs,
            vectorization_mode=vector,
            vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
            wrappers=wrappers,
            **({"max_episode_steps": max_episode_steps} if max_episode_steps else {}),
            **rendering,
        )
    except gym.error.DependencyNotInstalled as error:
        if str(registered_spec(env_id).entry_point).startswith("gymnasium.envs.box2d"):
            require("Box2D", "box2d", env_id)
        raise ValueError(f"environment {env_id}: {str(error).splitlines()[0]}") from None
    except Exception as error:
        if suite != GENERIC_SUITE or isinstance(error, UnsupportedSpace):
            raise
        raise EnvironmentFailure(env_id, "its constructor", error) from error
    return GymVecEnv(env, screens, action_repeat, env_id)
