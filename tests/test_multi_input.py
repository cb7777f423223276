"""One encoder per key for a Dict observation holding images (Stable-Baselines3's ``MultiInputPolicy``): the
environment lays the Dict out key by key in one vector whose shape names the parts, ``network auto`` gives each image
key a CNN and the rest one MLP, and the run, ``check-env``, ``predict`` on raw observations, loading and R2D2 take it."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
import torch

import voidrl
from tests.user_envs import CameraAndJoints
from voidrl.envs.gym_backend import KeyedFlatten, for_the_agent
from voidrl.nets.bodies import MLP, KeyedShape, MultiInputBody, ObservationPart, auto_network, make_body
from voidrl.training.check import check_environment

ENV_ID = "tests.user_envs:CameraAndJoints-v0"


def test_the_layout_by_hand():
    env = for_the_agent(CameraAndJoints())
    assert isinstance(env, KeyedFlatten)
    shape = env.observation_space.shape
    assert shape == (3 * 40 * 40 + 3 + 2,)
    assert shape.parts == (ObservationPart("camera", (3, 40, 40), True, 0), ObservationPart("joints", (3,), False, 4800),
                           ObservationPart("mode", (2,), False, 4803))
    raw = {"camera": np.arange(40 * 40 * 3, dtype=np.int64).reshape(40, 40, 3).astype(np.uint8),
           "joints": np.array([0.5, -0.25, 1.0], np.float32), "mode": 1}
    vector = env.observation(raw)
    assert vector.dtype == np.float32 and vector.shape == shape
    camera = vector[:4800].reshape(3, 40, 40)
    assert camera[2, 1, 0] == raw["camera"][1, 0, 2] and camera[0, 39, 39] == raw["camera"][39, 39, 0]  # channels first
    assert vector[4800:4803].tolist() == [0.5, -0.25, 1.0] and vector[4803:].tolist() == [0.0, 1.0]  # mode one-hot
    assert env.observation_space.contains(vector)


def test_a_dict_without_images_is_flattened_as_before():
    class Plain(CameraAndJoints):
        observation_space = gym.spaces.Dict({"a": gym.spaces.Box(-1, 1, (2,)), "b": gym.spaces.Discrete(3)})

    env = for_the_agent(Plain())
    assert isinstance(env, gym.wrappers.FlattenObservation) and not isinstance(env.observation_space.shape, KeyedShape)


def test_the_keyed_shape_survives_pickling_and_refuses_parts_that_do_not_fill_it():
    shape = for_the_agent(CameraAndJoints()).observation_space.shape
    again = pickle.loads(pickle.dumps(shape))
    assert again == shape and again.parts == shape.parts
    with pytest.raises(ValueError, match="fill 3 entries, not the 4"):
        KeyedShape((4,), (ObservationPart("x", (3,), False, 0),))


def test_each_key_reaches_its_own_body_only():
    shape = for_the_agent(CameraAndJoints()).observation_space.shape
    assert auto_network(shape) == "multi-input"
    torch.manual_seed(0)
    body = make_body("auto", shape, (64, 64))
    assert isinstance(body, MultiInputBody) and isinstance(body.vector_body, MLP) and body.out_features == 512 + 64
    obs = torch.rand(4, *shape) * 255
    features = body(obs)
    moved_camera, moved_joints = obs.clone(), obs.clone()
    moved_camera[:, :4800] = torch.rand(4, 4800) * 255
    moved_joints[:, 4800:] = torch.rand(4, 5)
    camera_features, joint_features = body(moved_camera), body(moved_joints)
    assert torch.equal(camera_features[:, 512:], features[:, 512:]) and not torch.equal(camera_features[:, :512], features[:, :512])
    assert torch.equal(joint_features[:, :512], features[:, :512]) and not torch.equal(joint_features[:, 512:], features[:, 512:])
    # the same as each body run on its part alone
    camera_alone = body.image_bodies[0](obs[:, :4800].reshape(4, 3, 40, 40))
    joints_alone = body.vector_body(obs[:, 4800:])
    torch.testing.assert_close(features, torch.cat([camera_alone, joints_alone], 1), rtol=0, atol=0)
    assert make_body("mlp", shape, (64, 64)).out_features == 64  # a named network still takes the whole vector


def test_check_env_shows_the_encoders():
    report = check_environment(ENV_ID, steps=30)
    text = "\n".join(report.lines)
    assert "--network auto: multi-input: nature CNN for 'camera' [3, 40, 40], one MLP for 'joints' [3], 'mode' [2]" in text
    assert "ppo" in report.applicable and "r2d2" in report.applicable


@pytest.mark.parametrize("algo,options", [
    ("ppo", {"num_steps": 32}),
    ("r2d2", {"min_replay": 8, "batch_size": 4, "lstm_size": 16, "head_size": 16}),
])
def test_a_run_acts_on_raw_dict_observations_and_loads_again(tmp_path, algo, options):
    agent = voidrl.train(algo, ENV_ID, steps=256, num_envs=2, seed=0, run_dir=str(tmp_path), progress=False, torch_threads=1, **options)
    body = agent.policy.actor_body if algo == "ppo" else agent.policy.torso
    assert isinstance(body, MultiInputBody)
    observation, _ = CameraAndJoints().reset(seed=1)
    action = agent.predict(observation)[0]
    assert agent.predict([observation, observation])[0].tolist() == [action, action]
    loaded = voidrl.load(tmp_path / "checkpoint.pt")
    assert loaded.predict(observation)[0] == action


def test_observation_normalisation_leaves_the_images_to_their_cnn(tmp_path):
    agent = voidrl.train("ppo", ENV_ID, steps=128, num_envs=2, num_steps=32, seed=0, run_dir=str(tmp_path), progress=False,
                         torch_threads=1, normalize_observation=True)
    normalizer = agent.interface.normalizer
    obs = torch.rand(3, 4805) * 255
    normalized = normalizer.normalize(obs)
    assert torch.equal(normalized[:, :4800], obs[:, :4800])  # the camera's pixels as they were
    assert normalized[:, 4800:].abs().max() <= 10.0 and not torch.equal(normalized[:, 4800:], obs[:, 4800:])
