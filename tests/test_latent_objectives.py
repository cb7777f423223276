"""benchmarks/latent_objectives.py: its arms are the pretrain preset's APT settings with the changes named."""

import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from latent_objectives import arm_changes, preset_config  # noqa: E402

from voidrl.config import algorithm_presets  # noqa: E402


def test_an_arm_is_the_preset_with_its_changes():
    changes = arm_changes("inverse_dynamics_coef=1,encoder_learning_rate=1e-3")
    assert changes == {"inverse_dynamics_coef": 1.0, "encoder_learning_rate": 1e-3}
    config = preset_config(changes)
    preset = algorithm_presets("ppg")["pretrain"]["intrinsic_config"]
    assert config.inverse_dynamics_coef == 1.0 and config.encoder_learning_rate == 1e-3
    assert config.knn_scope == preset["knn_scope"] and config.contrastive_updates_per_step == preset["contrastive_updates_per_step"]
    assert arm_changes("") == {} and preset_config({}).inverse_dynamics_coef == 0.0


@pytest.mark.parametrize("text", ["no_such_option=1", "inverse_dynamics_coef"])
def test_an_arm_naming_no_apt_option_or_no_value_is_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="--arm takes NAME=VALUE"):
        arm_changes(text)
