"""The torch-free configs and their registry say the same as the algorithms, plug-ins and networks they stand for."""

import pytest
import torch

from voidrl.algos import ALGORITHMS
from voidrl.algos.ngu import NGU
from voidrl.configs import ALGORITHM_CLASSES, CONFIGS, REWARD_CONFIGS, REWARD_SOURCE_CLASSES
from voidrl.configs.choices import NETWORKS
from voidrl.intrinsic import REWARD_SOURCES
from voidrl.nets.bodies import make_body
from voidrl.registry import Registry


def test_each_name_has_its_class_and_config():
    assert CONFIGS.keys() == ALGORITHM_CLASSES.keys() == ALGORITHMS.keys()
    assert REWARD_CONFIGS.keys() == REWARD_SOURCE_CLASSES.keys() == REWARD_SOURCES.keys()
    for registry, configs in ((ALGORITHMS, CONFIGS), (REWARD_SOURCES, REWARD_CONFIGS)):
        for name in registry:
            assert registry[name].config_class is configs[name] is registry.config_class(name)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_what_a_config_says_of_its_algorithm_holds(name):
    algorithm = ALGORITHMS[name]
    assert (algorithm.builder_class is not None) == algorithm.config_class.remote_actors
    assert issubclass(algorithm, NGU) == algorithm.config_class.own_intrinsic_reward  # NGU's learner computes the reward


def test_a_class_registered_by_hand_brings_its_config_and_goes_again():
    class Options:
        pass

    class Toy:
        config_class = Options

    registry = Registry({"ppo": "voidrl.algos.ppo:PPO"}, {"ppo": CONFIGS["ppo"]})
    registry["toy"] = Toy
    assert list(registry) == ["ppo", "toy"] and registry.config_class("toy") is Options and registry["toy"] is Toy
    del registry["toy"]
    assert "toy" not in registry and registry.get("toy") is None


@pytest.mark.parametrize("network", NETWORKS)
def test_every_network_name_builds_a_body(network):
    obs_shape = (4,) if network == "mlp" else (4, 84, 84)
    body = make_body(network, obs_shape, (8,))
    assert body(torch.zeros(1, *obs_shape)).shape[0] == 1
