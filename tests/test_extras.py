"""The light install: the training loop imports no package of an extra, a missing extra is one line that names it,
pyproject.toml's extras are the ones the errors name, and constraints/cpu.txt pins versions within pyproject's ranges.
A package is made missing by ``sys.modules[name] = None``, which ``importlib.util.find_spec`` reads as not installed."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from voidrl.cli import main
from voidrl.envs.roms import rom_name
from voidrl.extras import EXTRAS, MissingExtra, require
from voidrl.io.report import pyplot
from voidrl.math.intervals import t_quantile

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRA_PACKAGES = ("ale_py", "minatar", "minigrid", "mujoco", "Box2D", "matplotlib", "scipy", "rliable", "pandas")
"""The top-level modules the extras of EXTRAS install."""
ANALYSIS = 'needs the analysis packages (matplotlib, SciPy, rliable): pip install "voidrl[analysis]"'


def test_require_imports_an_installed_module():
    assert require("numpy.linalg", "analysis", "a test").__name__ == "numpy.linalg"


def test_an_atari_id_without_ale_py_is_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ale_py", None)
    for env_id in ("ALE/MsPacman-v5", "MsPacmanNoFrameskip-v4"):
        with pytest.raises(MissingExtra) as error:
            rom_name(env_id)
        assert str(error.value) == f'{env_id} needs the Atari emulator: pip install "voidrl[atari]"'
    assert rom_name("Pong-v5") is None  # without ale-py, an id that is not of an Atari-only form is not taken for one


def test_plots_and_intervals_without_the_analysis_extra_name_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "scipy", None)
    for call, purpose in ((pyplot, "a plot"), (lambda: t_quantile(0.975, 2), "a Student-t interval")):
        with pytest.raises(MissingExtra) as error:
            call()
        assert str(error.value) == f"{purpose} {ANALYSIS}"


def test_compare_without_the_analysis_extra_stops_before_training(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "rliable", None)
    status = main(["compare", "ppo", "--env", "CartPole-v1", "--pretrain-steps", "2048", "--steps", "2048", "--seeds", "1",
                   "--run-dir", str(tmp_path / "runs")])
    assert status == 2 and capsys.readouterr().err == f"voidrl: error: voidrl compare {ANALYSIS}\n"
    assert not (tmp_path / "runs").exists()


def test_the_training_loop_imports_no_package_of_an_extra():
    code = f"import sys, voidrl.training.loop; print(*sorted({set(EXTRA_PACKAGES)!r} & set(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == []


def test_the_extras_the_errors_name_are_pyprojects_and_all_has_every_suite():
    extras = PROJECT["optional-dependencies"]
    assert set(EXTRAS) <= set(extras)
    assert Requirement(*extras["all"]).extras == set(EXTRAS) - {"analysis"}
    assert {"all", "analysis"} <= Requirement(extras["test"][0]).extras  # the test suite runs every suite and plots


def test_the_constraints_pin_versions_within_pyprojects_ranges():
    lines = (ROOT / "constraints" / "cpu.txt").read_text().splitlines()
    pins = [Requirement(line) for line in lines if line and not line.startswith("#")]
    assert all(len(pin.specifier) == 1 and next(iter(pin.specifier)).operator == "==" for pin in pins)
    versions = {canonicalize_name(pin.name): next(iter(pin.specifier)).version for pin in pins}
    assert versions["torch"] == "2.13.0"
    extras = PROJECT["optional-dependencies"]
    for requirement in map(Requirement, PROJECT["dependencies"] + sum(extras.values(), [])):
        version = versions.get(canonicalize_name(requirement.name))
        assert version is None or requirement.specifier.contains(version), (requirement, version)
    suites = {canonicalize_name(Requirement(text).name) for extra in set(EXTRAS) - {"analysis"} for text in extras[extra]}
    assert suites <= set(versions)  # every suite CI runs is installed at one version
