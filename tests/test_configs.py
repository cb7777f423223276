"""The torch-free configs and their registry say the same as the algorithms, plug-ins and networks they stand for."""

import dataclasses
import json
import re

import pytest
import torch

from voidrl.algos.algorithm import RemoteActors
from voidrl.cli import main
from voidrl.config import algorithm_presets, check_preset
from voidrl.algos.ngu import NGU
from voidrl.configs.choices import NETWORKS
from voidrl.configs.conditions import conditions_of
from voidrl.configs.env import EnvConfig
from voidrl.configs.run import RunConfig
from voidrl.configs.search import check_search_space
from voidrl.nets.bodies import make_body
from voidrl.registry import (ALGORITHM_CLASSES, ALGORITHMS, CONFIGS, REWARD_CONFIGS, REWARD_SOURCE_CLASSES, REWARD_SOURCES, Registry,
                             import_attribute)
from voidrl.training.loop import check_parts
from voidrl.training.presets import make_config


def test_each_name_has_its_class_and_config():
    assert CONFIGS.keys() == ALGORITHM_CLASSES.keys() == ALGORITHMS.keys()
    assert REWARD_CONFIGS.keys() == REWARD_SOURCE_CLASSES.keys() == REWARD_SOURCES.keys()
    for registry, configs in ((ALGORITHMS, CONFIGS), (REWARD_SOURCES, REWARD_CONFIGS)):
        for name in registry:
            assert registry[name].config_class is import_attribute(configs[name]) is registry.config_class(name)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_what_a_config_says_of_its_algorithm_holds(name):
    algorithm = ALGORITHMS[name]
    assert issubclass(algorithm, RemoteActors) == algorithm.config_class.remote_actors  # which has a builder_class
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


@pytest.mark.parametrize("algo", sorted(CONFIGS))
def test_every_built_in_preset_has_a_presets_shape(algo):
    for name, settings in algorithm_presets(algo).items():
        check_preset(settings, algo, f"preset {name}")


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_a_preset_file_gives_the_config_of_the_preset_it_holds(tmp_path, suffix):
    preset = algorithm_presets("ppo")["minigrid-rnd"]
    settings = {**preset, "algo_config": {**preset["algo_config"], "hidden_sizes": [32]}, "intrinsic_config": {"intrinsic_coef": 0.5}}
    path = tmp_path / f"preset{suffix}"
    path.write_text(json.dumps(settings) if suffix == ".json" else "".join(
        f"[{section}]\n" + "".join(f"{name} = {json.dumps(value)}\n" for name, value in values.items())
        for section, values in settings.items()))
    from_file = make_config("ppo", preset_file=str(path), env="MiniGrid-DoorKey-5x5-v0")
    named = make_config("ppo", "minigrid-rnd", env="MiniGrid-DoorKey-5x5-v0", hidden_sizes=(32,), intrinsic_coef=0.5)
    assert from_file.to_dict() == named.to_dict()
    from_file.validate()


@pytest.mark.parametrize("text,fragment", [
    ('{"algo_config": {"learning_rat": 0.1}}', "preset.json': algo_config has no option 'learning_rat' for ppo"),
    ('{"algo_config": {"learning_rate": "fast"}}', "preset.json': algo_config.learning_rate must be a number, 'lin_X' (X falling linearly to 0 over the run) or, from Python, a function; got 'fast'"),
    ('{"algo": {"gamma": 0.9}}', "preset.json': unknown section 'algo'; choose from run, env, algo_config, intrinsic_config"),
    ('{"intrinsic_config": {"intrinsic_coef": 1}}', "preset.json': section 'intrinsic_config' needs the plug-in it configures"),
    ('{"env": {"num_envs": 4}', "preset.json' is not valid JSON"),
    ('[1, 2]', "preset.json' must map sections (run, env, algo_config, intrinsic_config) to options, got list"),
    ('{"env": {"num_envs": 4}}'.encode("utf-16"), "preset.json' is not UTF-8 text (byte 0: invalid start byte)"),
])
def test_a_bad_preset_file_is_refused_in_one_line_naming_the_file_and_key(tmp_path, capsys, text, fragment):
    (tmp_path / "preset.json").write_bytes(text if isinstance(text, bytes) else text.encode())
    assert main(["train", "ppo", "--preset-file", str(tmp_path / "preset.json"), "--run-dir", str(tmp_path / "run")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], lines
    assert not (tmp_path / "run").exists()


def test_a_preset_file_takes_the_place_of_a_named_preset(capsys):
    assert main(["train", "ppo", "--preset", "cartpole", "--preset-file", "p.json"]) == 2
    assert "argument --preset-file: not allowed with argument --preset" in capsys.readouterr().err
    with pytest.raises(ValueError, match="give preset or preset_file, not both"):
        make_config("ppo", "cartpole", preset_file="p.json")


def test_ppo_ppg_and_a2c_declare_a_search_space_and_a3c_inherits_a2cs():
    assert {name for name in CONFIGS if ALGORITHMS.config_class(name).search_space} == {"a2c", "a3c", "ppg", "ppo"}
    assert ALGORITHMS.config_class("a3c").search_space is ALGORITHMS.config_class("a2c").search_space


@pytest.mark.parametrize("algo", ["a2c", "a3c", "ppg", "ppo"])
def test_every_search_space_names_options_of_its_config_with_values_it_accepts(algo):
    check_search_space(ALGORITHMS.config_class(algo))


@pytest.mark.parametrize("space,fragment", [
    ({"learning_rat": ("log_float", 1e-5, 1e-2)}, "'learning_rat' is not one of its options"),
    ({"learning_rate": ("log_float", 0.0, 1e-2)}, "learning_rate needs bounds low < high with low > 0"),
    ({"gamma": ("float", 0.99, 0.9)}, "gamma needs bounds low < high"),
    ({"epochs": ("int", 1, 2.5)}, "epochs needs integer bounds"),
    ({"epochs": ("categorical", [5])}, "epochs must offer a list of at least two distinct scalar choices"),
    ({"hidden_sizes": ("categorical", [(64,), (64, 64)])}, "hidden_sizes must offer a list of at least two distinct scalar"),
    ({"gamma": ("uniform", 0.9, 0.99)}, "gamma has kind 'uniform'; choose one of float, log_float, int, categorical"),
    ({"clip": ("float", 0.1, 1.5)}, "clip = 1.5 is refused (clip must lie in (0, 1)"),
    ({"epochs": ("float", 1.0, 20.0)}, "epochs = 1.0 is refused (epochs must be an int"),
])
def test_a_bad_search_space_is_refused_naming_the_option(space, fragment):
    bad = type("BadConfig", (ALGORITHMS.config_class("ppo"),), {"search_space": space})
    with pytest.raises(ValueError, match=re.escape(fragment)):
        check_search_space(bad)


@pytest.mark.parametrize("config_class", [*map(import_attribute, (*CONFIGS.values(), *REWARD_CONFIGS.values())), RunConfig, EnvConfig],
                         ids=lambda cls: cls.__name__)
def test_every_condition_is_declared_for_a_field_of_its_config(config_class):
    fields = {field.name for field in dataclasses.fields(config_class)}
    assert conditions_of(config_class).keys() <= fields


def test_an_option_that_cannot_act_is_refused_when_given_and_left_alone_when_a_preset_sets_it():
    minigrid = {"env": "MiniGrid-Empty-5x5-v0", "preset": "minigrid"}
    check_parts(make_config("ppo", **minigrid))  # the preset's sequence_length, for --memory lstm, on a feed-forward run
    with pytest.raises(ValueError, match="^sequence_length acts with memory lstm only; this run has memory none: leave it out$"):
        check_parts(make_config("ppo", **minigrid, sequence_length=128))
    check_parts(make_config("ppo", **minigrid, sequence_length=128, memory="lstm"))
