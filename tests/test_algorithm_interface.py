"""What every algorithm says it is: the loop's calls are abstract on ``Algorithm``, the optional interfaces are
implemented exactly where the config class declares the capability."""

import inspect

import pytest

from voidrl.algos.algorithm import Algorithm, KeepsReplay, PolicyFamily, RemoteActors
from voidrl.registry import ALGORITHMS


def test_the_loops_calls_are_abstract():
    assert {"make_policy", "acting", "update", "state_dict", "load_state_dict"} <= Algorithm.__abstractmethods__

    class WithoutUpdate(Algorithm):
        make_policy = staticmethod(lambda config, obs_shape, action_space, device: None)

        def acting(self, num_envs, action_noise=None): ...
        def state_dict(self): ...
        def load_state_dict(self, state): ...

    with pytest.raises(TypeError, match="update"):
        WithoutUpdate()


@pytest.mark.parametrize("name", list(ALGORITHMS))
def test_each_algorithm_is_concrete_and_has_the_interfaces_its_config_declares(name):
    algo, config = ALGORITHMS[name], ALGORITHMS.config_class(name)
    assert issubclass(algo, Algorithm) and not inspect.isabstract(algo)
    assert algo.config_class is config
    assert issubclass(algo, RemoteActors) == config.remote_actors
    assert issubclass(algo, PolicyFamily) == (name in ("ngu", "agent57"))
    assert issubclass(algo, KeepsReplay) == (name in ("r2d2", "ngu", "agent57"))
