"""Pre-train -> fine-tune: exactly the requested network parts are carried over."""

import json
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
import torch

from tests.cli_helpers import SMALL_PPG, pretrain_small_minatar
from voidrl.algos import PPG, PPO, PPGConfig, PPOConfig
from voidrl.cli import main
from voidrl.intrinsic.apt import APTConfig, APTReward
from voidrl.io.checkpoint import CheckpointError, save_checkpoint
from voidrl.nets.encoders import APTEncoder, plain_encoder_state
from voidrl.nets.parts import PARTS, load_parts, rescale_policy_logits

OBS, ACTIONS = (4, 10, 10), gym.spaces.Discrete(3)


def saved_and_fresh(tmp_path: Path) -> tuple[PPG, PPG, dict[str, torch.Tensor]]:
    """A PPG saved to ``tmp_path / "pre.pt"``, another initialised from other bits, and the other's initial state."""
    torch.manual_seed(0)
    pretrained = PPG(PPGConfig(network="minatar"), OBS, ACTIONS)
    save_checkpoint(tmp_path / "pre.pt", {"algorithm": pretrained.state_dict()})
    torch.manual_seed(1)
    fresh = PPG(PPGConfig(network="minatar"), OBS, ACTIONS)
    return pretrained, fresh, {key: value.clone() for key, value in fresh.policy.state_dict().items()}


@pytest.mark.parametrize("parts", [("policy_body",), ("policy_body", "critic"), tuple(PARTS)])
def test_only_the_requested_parts_are_loaded(tmp_path, parts):
    pretrained, fresh, initial = saved_and_fresh(tmp_path)
    copied = load_parts(fresh.policy, str(tmp_path / "pre.pt"), parts)
    prefixes = tuple(p for part in parts for p in PARTS[part])
    saved = pretrained.policy.state_dict()
    kept_fresh = []
    for key, value in fresh.policy.state_dict().items():
        if key.startswith(prefixes):
            assert key in copied and torch.equal(value, saved[key]), key
        else:
            assert torch.equal(value, initial[key]), key
            kept_fresh.append(not torch.equal(value, saved[key]))
    assert all(key.startswith(prefixes) for key in copied)
    assert not kept_fresh or any(kept_fresh)  # the parts left out really differ from the pre-trained ones


@pytest.mark.parametrize("extrinsic_coef,expected", [(0.0, ("policy_body", "policy_head")), (1.0, tuple(PARTS))])
def test_by_default_a_reward_free_runs_value_parts_are_left_out(tmp_path, extrinsic_coef, expected):
    pretrained = PPG(PPGConfig(network="minatar"), OBS, ACTIONS)
    config = {"algo": "ppg", "run": {"intrinsic": "apt"}, "intrinsic_config": {"extrinsic_coef": extrinsic_coef}}
    save_checkpoint(tmp_path / "pre.pt", {"config": config, "algorithm": pretrained.state_dict()})
    fresh = PPG(PPGConfig(network="minatar"), OBS, ACTIONS)
    copied = load_parts(fresh.policy, str(tmp_path / "pre.pt"))
    assert {part for part, prefixes in PARTS.items() if any(key.startswith(prefixes) for key in copied)} == set(expected)


def test_unknown_part_and_mismatched_network_are_refused(tmp_path):
    pretrained = PPG(PPGConfig(network="minatar"), OBS, ACTIONS)
    save_checkpoint(tmp_path / "pre.pt", {"algorithm": pretrained.state_dict()})
    fresh = PPG(PPGConfig(network="minatar"), OBS, gym.spaces.Discrete(5))
    with pytest.raises(ValueError, match="init_parts must name"):
        load_parts(fresh.policy, str(tmp_path / "pre.pt"), ("encoder",))
    with pytest.raises(ValueError, match="does not fit this network"):
        load_parts(fresh.policy, str(tmp_path / "pre.pt"), ("policy_head",))


@pytest.mark.slow
def test_pretrain_then_finetune_on_the_command_line_reads_the_pretrained_checkpoint_once(tmp_path, monkeypatch):
    pretrain_small_minatar(tmp_path, 512)
    config = json.loads((tmp_path / "pre" / "config.json").read_text())
    assert config["run"]["intrinsic"] == "apt" and config["intrinsic_config"]["extrinsic_coef"] == 0.0
    source, real_load, loads = (tmp_path / "pre" / "checkpoint.pt").resolve(), torch.load, []
    monkeypatch.setattr(torch, "load", lambda path, *args, **kwargs: loads.append(Path(path).resolve()) or real_load(path, *args, **kwargs))
    monkeypatch.chdir(tmp_path)
    assert main(["finetune", "ppg", "--from", "pre/checkpoint.pt", "--steps", "256", "--init-parts", "policy_body", "critic",
                 "--run-dir", "fine", *SMALL_PPG]) == 0
    assert loads.count(source) == 1  # for its environment and its parts
    config = json.loads((tmp_path / "fine" / "config.json").read_text())
    assert config["run"]["env"] == "MinAtar/Breakout-v1" and config["run"]["intrinsic"] is None
    assert config["run"]["init_from"] == "pre/checkpoint.pt" and config["run"]["init_parts"] == ["policy_body", "critic"]


def test_folding_spectral_norm_into_plain_weights_keeps_the_encoder_function():
    torch.manual_seed(0)
    encoder = APTEncoder((4, 84, 84), spectral=True)
    frames = torch.rand(8, 4, 84, 84)
    encoder.train()
    for _ in range(3):  # power iterations move the stored spectral-norm estimate away from its start
        encoder(frames)
    encoder.eval()
    plain = APTEncoder((4, 84, 84), spectral=False)
    plain.load_state_dict(plain_encoder_state(encoder.state_dict(), (4, 84, 84)))
    with torch.no_grad():
        torch.testing.assert_close(plain(frames), encoder(frames), rtol=1e-5, atol=1e-6)


def test_apt_encoder_part_loads_the_contrastive_encoder_into_the_policy_body_and_nothing_else(tmp_path):
    torch.manual_seed(0)
    plugin = APTReward(APTConfig(contrastive_start=0, contrastive_batch_size=8), OBS)
    with torch.no_grad():
        for _ in range(3):  # trained a little: the weights differ from any fresh initialisation
            plugin.observe(torch.randint(0, 256, (4, *OBS), dtype=torch.uint8))
    pretrained = PPG(PPGConfig(network="apt"), OBS, ACTIONS)
    save_checkpoint(tmp_path / "pre.pt", {"algorithm": pretrained.state_dict(), "intrinsic": plugin.state_dict()})
    torch.manual_seed(1)
    fresh = PPG(PPGConfig(network="apt"), OBS, ACTIONS)
    initial = {k: v.clone() for k, v in fresh.policy.state_dict().items()}
    copied = load_parts(fresh.policy, str(tmp_path / "pre.pt"), ("apt_encoder", "policy_head"))
    expected = plain_encoder_state(plugin.encoder.state_dict(), OBS)
    saved_policy = pretrained.policy.state_dict()
    for key, value in fresh.policy.state_dict().items():
        if key.startswith("actor_body.encoder."):
            assert key in copied and torch.equal(value, expected[key.removeprefix("actor_body.encoder.")]), key
        elif key.startswith(PARTS["policy_head"]):
            assert key in copied and torch.equal(value, saved_policy[key]), key
        else:
            assert key not in copied and torch.equal(value, initial[key]), key
    frames = torch.randint(0, 256, (5, *OBS), dtype=torch.uint8)
    plugin.encoder.eval()
    with torch.no_grad():  # the policy's encoder computes the plug-in's latents
        torch.testing.assert_close(fresh.policy.actor_body.encoder(frames.float() / 255), plugin.encoder(frames.float() / 255))


def test_apt_encoder_part_needs_the_apt_body_and_an_apt_checkpoint(tmp_path):
    plugin = APTReward(APTConfig(), OBS)
    save_checkpoint(tmp_path / "pre.pt", {"algorithm": PPG(PPGConfig(network="apt"), OBS, ACTIONS).state_dict(),
                                          "intrinsic": plugin.state_dict()})
    save_checkpoint(tmp_path / "no_apt.pt", {"algorithm": PPG(PPGConfig(network="apt"), OBS, ACTIONS).state_dict()})
    with pytest.raises(ValueError, match="needs the apt policy body"):
        load_parts(PPG(PPGConfig(network="minatar"), OBS, ACTIONS).policy, str(tmp_path / "pre.pt"), ("apt_encoder",))
    with pytest.raises(CheckpointError, match="holds no APT encoder"):
        load_parts(PPG(PPGConfig(network="apt"), OBS, ACTIONS).policy, str(tmp_path / "no_apt.pt"), ("apt_encoder",))
    with pytest.raises(ValueError, match="policy_body and apt_encoder each set the policy body's first layers; name one"):
        load_parts(PPG(PPGConfig(network="apt"), OBS, ACTIONS).policy, str(tmp_path / "pre.pt"), ("apt_encoder", "policy_body"))


def test_policy_convs_loads_the_convolutions_alone_and_needs_a_pixel_body(tmp_path):
    pretrained, fresh, initial = saved_and_fresh(tmp_path)
    copied = load_parts(fresh.policy, str(tmp_path / "pre.pt"), ("policy_convs",))
    saved = pretrained.policy.state_dict()
    assert copied and all(key.startswith("actor_body.convs.") for key in copied)
    for key, value in fresh.policy.state_dict().items():
        assert torch.equal(value, saved[key] if key in copied else initial[key]), key
    assert not torch.equal(fresh.policy.state_dict()["actor_body.fc.0.weight"], saved["actor_body.fc.0.weight"])
    with pytest.raises(ValueError, match="policy_body and policy_convs each set"):
        load_parts(fresh.policy, str(tmp_path / "pre.pt"), ("policy_body", "policy_convs"))
    vectors = PPG(PPGConfig(), (4,), ACTIONS)
    save_checkpoint(tmp_path / "mlp.pt", {"algorithm": vectors.state_dict()})
    with pytest.raises(ValueError, match="policy body has no convolutions"):
        load_parts(PPG(PPGConfig(), (4,), ACTIONS).policy, str(tmp_path / "mlp.pt"), ("policy_convs",))


@pytest.mark.parametrize("temperature", [0.5, 2.0])
def test_init_temperature_divides_the_loaded_logits_and_keeps_the_greedy_action(tmp_path, temperature):
    torch.manual_seed(0)
    pretrained = PPG(PPGConfig(network="minatar"), OBS, ACTIONS)
    torch.nn.init.normal_(pretrained.policy.policy_head.weight)  # logits far from uniform (the fresh head's are near 0)
    save_checkpoint(tmp_path / "pre.pt", {"algorithm": pretrained.state_dict()})
    fresh = PPG(PPGConfig(network="minatar"), OBS, ACTIONS)
    copied = load_parts(fresh.policy, str(tmp_path / "pre.pt"), tuple(PARTS))
    rescale_policy_logits(fresh.policy, temperature, copied)
    obs = torch.rand(5, *OBS)
    features = pretrained.policy.actor_body(obs)
    expected = pretrained.policy.policy_head(features) / temperature
    logits = fresh.policy.policy_head(fresh.policy.actor_body(obs))
    torch.testing.assert_close(logits, expected)
    assert torch.equal(logits.argmax(-1), expected.argmax(-1))
    entropy = torch.distributions.Categorical(logits=logits).entropy()
    saved_entropy = torch.distributions.Categorical(logits=expected * temperature).entropy()
    assert bool(((entropy < saved_entropy) if temperature < 1 else (entropy > saved_entropy)).all())


def test_init_temperature_is_refused_for_a_continuous_policy(tmp_path):
    box = gym.spaces.Box(-1.0, 1.0, (2,))
    pretrained = PPO(PPOConfig(), (3,), box)
    save_checkpoint(tmp_path / "pre.pt", {"algorithm": pretrained.state_dict()})
    fresh = PPO(PPOConfig(), (3,), box)
    copied = load_parts(fresh.policy, str(tmp_path / "pre.pt"))
    with pytest.raises(ValueError, match="discrete policy; this run's policy is gaussian"):
        rescale_policy_logits(fresh.policy, 0.5, copied)
    rescale_policy_logits(fresh.policy, 1.0, copied)  # 1 keeps the logits, for any policy


@pytest.mark.parametrize("options,temperature", [
    ({"init_from": "pre.pt"}, 0.25),
    ({"init_from": "pre.pt", "init_parts": ("policy_body", "policy_head")}, 0.25),
    ({"init_from": "pre.pt", "init_parts": ("policy_body",)}, 1.0),  # a fresh head: nothing to sharpen
    ({}, 1.0),  # train from scratch with the fine-tuning preset's settings
])
def test_the_presets_temperature_acts_only_on_a_loaded_policy_head(options, temperature):
    from voidrl.training.presets import make_config

    config = make_config("ppg", "atari-finetune", env="ALE/MsPacman-v5", **options)
    config.validate()
    assert config.run.init_temperature == temperature
    assert config.algo_config.entropy_coef == 0.001


def test_a_temperature_the_user_gives_is_refused_where_it_cannot_act():
    from voidrl.training.presets import make_config

    with pytest.raises(ValueError, match="init_temperature needs init_from"):
        make_config("ppg", "atari-finetune", env="ALE/MsPacman-v5", init_temperature=0.25).validate()


@pytest.mark.parametrize("env,warned", [(None, False), ("CartPole-v0", True)])
def test_fine_tuning_from_another_environment_id_warns_naming_both(tmp_path, env, warned):
    assert main(["train", "ppo", "--env", "CartPole-v1", "--steps", "256", "--num-envs", "2", "--num-steps", "64", "--torch-threads", "1",
                 "--no-progress", "--run-dir", str(tmp_path / "pre")]) == 0
    source = str(tmp_path / "pre" / "checkpoint.pt")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["finetune", "ppo", "--from", source, *(["--env", env] if env else []), "--steps", "128", "--num-envs", "2",
                     "--num-steps", "64", "--torch-threads", "1", "--no-progress", "--run-dir", str(tmp_path / "fine")]) == 0
    messages = [str(w.message) for w in caught if "was trained on" in str(w.message)]
    expected = [f"init_from: {source!r} was trained on CartPole-v1, and this run's environment is CartPole-v0; "
                "its networks are used where their shapes fit"]
    assert messages == (expected if warned else [])
