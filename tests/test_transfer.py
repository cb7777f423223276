"""Pre-train -> fine-tune: exactly the requested network parts are carried over."""

import json

import gymnasium as gym
import pytest
import torch

from tests.cli_helpers import SMALL_PPG, pretrain_small_minatar, voidrl
from voidrl.algos import PPG, PPGConfig
from voidrl.io.checkpoint import save_checkpoint
from voidrl.nets.parts import PARTS, load_parts

OBS, ACTIONS = (4, 10, 10), gym.spaces.Discrete(3)


@pytest.mark.parametrize("parts", [("policy_body",), ("policy_body", "critic"), tuple(PARTS)])
def test_only_the_requested_parts_are_loaded(tmp_path, parts):
    torch.manual_seed(0)
    pretrained = PPG(PPGConfig(network="minatar"), OBS, ACTIONS)
    save_checkpoint(tmp_path / "pre.pt", {"algorithm": pretrained.state_dict()})
    torch.manual_seed(1)
    fresh = PPG(PPGConfig(network="minatar"), OBS, ACTIONS)
    initial = {k: v.clone() for k, v in fresh.policy.state_dict().items()}
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


def test_unknown_part_and_mismatched_network_are_refused(tmp_path):
    pretrained = PPG(PPGConfig(network="minatar"), OBS, ACTIONS)
    save_checkpoint(tmp_path / "pre.pt", {"algorithm": pretrained.state_dict()})
    fresh = PPG(PPGConfig(network="minatar"), OBS, gym.spaces.Discrete(5))
    with pytest.raises(ValueError, match="init_parts must name"):
        load_parts(fresh.policy, str(tmp_path / "pre.pt"), ("encoder",))
    with pytest.raises(ValueError, match="does not fit this network"):
        load_parts(fresh.policy, str(tmp_path / "pre.pt"), ("policy_head",))


def test_pretrain_then_finetune_on_the_command_line(tmp_path):
    pretrain_small_minatar(tmp_path, 512)
    config = json.loads((tmp_path / "pre" / "config.json").read_text())
    assert config["run"]["intrinsic"] == "apt" and config["intrinsic_config"]["extrinsic_coef"] == 0.0
    fine = voidrl("finetune", "ppg", "--from", "pre/checkpoint.pt", "--steps", "256",
                  "--init-parts", "policy_body", "critic", "--run-dir", "fine", *SMALL_PPG, cwd=tmp_path)
    assert fine.returncode == 0, fine.stderr
    config = json.loads((tmp_path / "fine" / "config.json").read_text())
    assert config["run"]["env"] == "MinAtar/Breakout-v1" and config["run"]["intrinsic"] is None
    assert config["run"]["init_from"] == "pre/checkpoint.pt" and config["run"]["init_parts"] == ["policy_body", "critic"]
