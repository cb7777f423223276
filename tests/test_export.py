"""``voidrl export``: the acting policy alone, run through TorchScript and through onnxruntime, gives the checkpoint's
own greedy actions and distribution parameters on random raw observations, for any batch size; bad input is refused in
one line before anything is written."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
import torch

import voidrl
from tests.agents import untrained_agent
from voidrl.cli import main
from voidrl.nets.actor_critic import LSTMState
from voidrl.nets.distributions import Categorical, MixtureOfGaussians

ROOT = Path(__file__).resolve().parents[1]

POLICIES = {
    "discrete": ("ppo", "CartPole-v1", {"normalize_observation": True}),
    "gaussian": ("ppo", "Pendulum-v1", {"normalize_observation": True, "init_log_std": -0.5}),
    "tanh-gaussian": ("a2c", "Pendulum-v1", {"continuous_policy": "tanh_gaussian", "std_parameterization": "softplus"}),
    "mixture": ("a2c", "Pendulum-v1", {"continuous_policy": "mixture"}),
    "frames": ("ppo", "MinAtar/Breakout-v1", {}),
    "multi-input": ("ppo", "tests.user_envs:CameraAndJoints-v0", {}),  # a CNN for the camera, an MLP for the rest
    "recurrent": ("ppo", "voidrl/CartPoleNoVelocity-v1", {"memory": "lstm", "lstm_size": 16, "normalize_observation": True}),
    "recurrent-gaussian": ("a2c", "Pendulum-v1", {"memory": "lstm", "lstm_size": 16, "shared": True, "normalize_observation": True}),
}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """Each policy kind's checkpoint, saved from an untrained agent whose last policy layer is scaled up 300 times from
    its small initial gain and shifted by 1.5, so that greedy actions are clear-cut and Gaussian means leave the action
    bounds (the exported action is clipped to them)."""
    directory = tmp_path_factory.mktemp("checkpoints")
    torch.manual_seed(0)
    for kind, (algo, env, options) in POLICIES.items():
        agent = untrained_agent(algo, env, **options)
        agent.policy.policy_head.weight.data.mul_(300.0)
        agent.policy.policy_head.bias.data.add_(1.5)
        agent.save(directory / f"{kind}.pt")
    return directory


def random_inputs(agent, batch, seed):
    """Raw observations ``[batch, *obs_shape]`` (uint8 frames, or vectors of std 2), and for a recurrent policy a random
    LSTM state and episode starts, by the exported policy's input names."""
    generator = torch.Generator().manual_seed(seed)
    space = agent.interface.observation_space
    if space.dtype == np.uint8:
        obs = torch.randint(0, 256, (batch, *space.shape), dtype=torch.uint8, generator=generator)
    else:
        obs = 2.0 * torch.randn(batch, *space.shape, generator=generator)
    if not agent.carries_state:
        return {"obs": obs}
    shape = agent.policy.initial_state(batch).hidden.shape
    return {"obs": obs, "hidden": 0.5 * torch.randn(shape, generator=generator), "cell": 0.5 * torch.randn(shape, generator=generator),
            "episode_start": torch.rand(batch, generator=generator) < 0.3}


def checkpoint_outputs(agent, inputs):
    """What the checkpoint's own policy gives: ``predict``'s greedy actions, the distribution's parameters and, where
    recurrent, the state after the step."""
    obs = inputs["obs"]
    normalizer = agent.interface.normalizer
    normalized = obs if normalizer is None else normalizer.normalize(obs)
    if agent.carries_state:
        state, episode_start = LSTMState(inputs["hidden"], inputs["cell"]), inputs["episode_start"]
    else:
        state, episode_start = agent.policy.initial_state(len(obs)), torch.ones(len(obs), dtype=torch.bool)
    outputs = {"action": agent.predict(obs.numpy(), state, episode_start.numpy())[0]}
    distribution, _, after = agent.policy(normalized, state, episode_start)
    if isinstance(distribution, Categorical):
        outputs["log_probs"] = distribution.log_probs
    elif isinstance(distribution, MixtureOfGaussians):
        outputs.update(log_weights=distribution.log_weights, means=distribution.means, stds=distribution.stds)
    else:
        outputs.update(mean=distribution.mean, std=distribution.log_std.exp())
    if agent.carries_state:
        outputs.update(next_hidden=after.hidden, next_cell=after.cell)
    return {name: np.asarray(value.detach() if isinstance(value, torch.Tensor) else value) for name, value in outputs.items()}


def run_torchscript(path, inputs):
    return [output.numpy() for output in torch.jit.load(str(path))(*inputs.values())]


def run_onnx(path, inputs):
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [node.name for node in session.get_inputs()] == list(inputs)
    return session.run(None, {name: value.numpy() for name, value in inputs.items()})


@pytest.mark.parametrize("export_format,run", [("torchscript", run_torchscript), ("onnx", run_onnx)], ids=["torchscript", "onnx"])
@pytest.mark.parametrize("kind", list(POLICIES))
def test_the_exported_policy_gives_the_checkpoints_outputs(tmp_path, capsys, checkpoints, kind, export_format, run):
    torch.set_num_threads(1)
    out = tmp_path / "policy" / f"{kind}.{export_format}"
    assert main(["export", "--checkpoint", str(checkpoints / f"{kind}.pt"), "--format", export_format, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"{out} ({export_format}): obs [B, ") and " -> action [B" in printed
    agent = voidrl.load(checkpoints / f"{kind}.pt")
    for batch, seed in ((7, 1), (1, 2)):  # not the batch of 2 it was traced with
        inputs = random_inputs(agent, batch, seed)
        expected = checkpoint_outputs(agent, inputs)
        exported = run(out, inputs)
        assert len(exported) == len(expected)
        for (name, want), got in zip(expected.items(), exported):
            assert got.shape == want.shape, name
            if name == "action" and want.dtype == np.int64:
                np.testing.assert_array_equal(got, want)
            else:
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-5, err_msg=name)


def test_the_docs_run_an_exported_policy_with_onnxruntime_and_numpy(tmp_path, monkeypatch, capsys, checkpoints):
    section = (ROOT / "docs" / "exporting.md").read_text()
    commands = re.findall(r"```bash\n(.+?)\n```", section, re.S)[0].splitlines()
    example = next(code for code in re.findall(r"```python\n(.+?)\n```", section, re.S) if "onnxruntime" in code)
    assert "voidrl" not in example
    export = next(command.split("#")[0].split() for command in commands if "--format onnx" in command)
    monkeypatch.chdir(tmp_path)
    assert main([*export[1:3], str(checkpoints / "discrete.pt"), *export[4:]]) == 0
    capsys.readouterr()
    namespace = {}
    exec(example, namespace)
    assert namespace["action"].shape == (1,) and namespace["action"].dtype == np.int64


ERRORS = [
    (["--format", "tflite", "--out", "policy.tflite"], "argument --format: invalid choice: 'tflite' (choose from 'torchscript', 'onnx', 'weights')"),
    (["--format", "onnx", "--out", "/proc/voidrl-test/policy.onnx"], "--out's folder '/proc/voidrl-test' cannot be written"),
    (["--format", "onnx", "--out", "a_file/policy.onnx"], "--out's folder 'a_file' cannot be created: 'a_file' is a file"),
    (["--format", "torchscript", "--out", "."], "--out '.' is a directory; give the file to write"),
]


@pytest.mark.parametrize("args,fragment", ERRORS, ids=[fragment.split(":")[0] for _, fragment in ERRORS])
def test_bad_export_options_are_refused_in_one_line_before_anything_is_written(tmp_path, monkeypatch, capsys, checkpoints, args, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("not a directory")
    assert main(["export", "--checkpoint", str(checkpoints / "discrete.pt"), *args]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert fragment in line and "Traceback" not in line, line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a_file"]


def test_q_network_agents_and_a_missing_onnx_package_are_refused_in_one_line(tmp_path, monkeypatch, capsys, checkpoints):
    monkeypatch.chdir(tmp_path)
    untrained_agent("r2d2", "CartPole-v1", lstm_size=8, head_size=8).save(tmp_path / "r2d2.pt")
    assert main(["export", "--checkpoint", "r2d2.pt", "--format", "onnx", "--out", "r2d2.onnx"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == ("voidrl: error: export writes the policies of a2c, a3c, npg, ppg, ppo, reinforce, trpo; r2d2 acts greedily "
                    "on a recurrent Q-network that reads its previous action and reward (act with voidrl's Agent.predict)")
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None if name == "onnx" else find_spec(name, *args))
    assert main(["export", "--checkpoint", str(checkpoints / "discrete.pt"), "--format", "onnx", "--out", "policy.onnx"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "format onnx needs the onnx package: install voidrl's export extra (pip install -e '.[export]')" in line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["r2d2.pt"]
