"""Bad input, table by table: every option against wrong types, non-finite numbers, its range, and the
combinations that cannot work. Each is refused with one line naming the option, exit status 2, before any
work, and nothing is written."""

import dataclasses
import math
import typing
from pathlib import Path

import pytest
import torch

import voidrl
from voidrl.cli import main
from voidrl.configs.run import RunConfig
from voidrl.envs.factory import EnvConfig
from voidrl.registry import ALGORITHMS, REWARD_SOURCES
from voidrl.schedule import Schedule
from voidrl.training.loop import Trainer
from voidrl.training.preflight import preflight
from voidrl.training.presets import make_config
from voidrl.validation import field_type

SHARED_SECTIONS = (RunConfig, EnvConfig, *(source.config_class for source in REWARD_SOURCES.values()))


def with_plugin(name, options):
    """``options`` plus the reward plug-in whose option ``name`` is, if it is one."""
    plugin = next((plugin for plugin, source in REWARD_SOURCES.items() if hasattr(source.config_class, name)), None)
    return options if plugin is None else {"intrinsic": plugin, **options}

WRONG_VALUES = {
    float: ["0.1x", True, math.nan, math.inf, -math.inf],
    int: [1.5, "3", True],
    bool: ["yes", 1],
    str: [3, None],
    tuple: ["64", (1.5,)],
    Schedule: ["0.1x", "lin_", True, None, (0.1,), math.nan, math.inf],
}
"""Values of the wrong type (or non-finite) for a field of each type."""


def owners():
    """(algo, field name, base type, optional) for every field of every config the command line exposes."""
    for cls in SHARED_SECTIONS:
        for field in dataclasses.fields(cls):
            yield ("ppo", field.name, *field_type(cls, field.name))
    for algo, algorithm in ALGORITHMS.items():
        for field in dataclasses.fields(algorithm.config_class):
            yield (algo, field.name, *field_type(algorithm.config_class, field.name))


@pytest.mark.parametrize("algo,name,base,optional", list(owners()), ids=lambda v: getattr(v, "__name__", str(v)))
def test_every_field_refuses_wrong_types_and_non_finite_numbers(algo, name, base, optional):
    kind = tuple if typing.get_origin(base) is tuple else base
    for value in WRONG_VALUES[kind]:
        if value is None and optional:
            continue
        with pytest.raises(ValueError, match=name):
            make_config(algo, **with_plugin(name, {name: value})).validate()


RANGES = {
    # (algo, field): values outside the field's range
    ("ppo", "steps"): [0, -5], ("ppo", "checkpoint_every"): [0], ("ppo", "collapse_patience"): [0],
    ("ppo", "eval_every"): [0], ("ppo", "eval_episodes"): [0], ("ppo", "torch_threads"): [-1], ("ppo", "actors"): [-1],
    ("ppo", "intrinsic"): ["bogus"], ("ppo", "env"): ["Bogus-v9"], ("ppo", "init_parts"): [("encoder",), ()],
    ("ppo", "init_temperature"): [0.0, -1.0, float("nan")],
    ("ppo", "num_envs"): [0], ("ppo", "max_episode_steps"): [0], ("ppo", "reward_scale"): [0.0, -1.0],
    ("ppo", "reward_clip"): [0.0, -1.0], ("ppo", "pixels"): [0, 8], ("ppo", "frame_stack"): [0], ("ppo", "action_repeat"): [0],
    ("ppo", "vision"): ["vae", "cnn:model.pt", "vae:"], ("ppo", "vision_latent"): ["median"], ("ppo", "vector"): ["threads"],
    ("ppo", "vision_finetune_every"): [0],
    ("ppo", "num_steps"): [0], ("ppo", "epochs"): [0], ("ppo", "minibatch_size"): [0], ("ppo", "learning_rate"): [0.0],
    ("ppo", "adam_eps"): [0.0], ("ppo", "max_grad_norm"): [0.0], ("ppo", "target_kl"): [0.0], ("ppo", "clip_value"): [-0.1],
    ("ppo", "clip"): [0.0, 1.0], ("ppo", "entropy_coef"): [-0.01], ("ppo", "value_coef"): [-0.5],
    ("ppo", "gamma"): [0.0, 1.5], ("ppo", "gae_lambda"): [-0.1, 1.1], ("ppo", "network"): ["resnet"],
    ("ppo", "continuous_policy"): ["beta"], ("ppo", "std_parameterization"): ["exp"], ("ppo", "mixture_modes"): [0],
    ("ppo", "action_persistence"): [-0.1, 1.0], ("ppo", "hidden_sizes"): [(64, 0)],
    ("ppg", "value_epochs"): [0], ("ppg", "policy_iterations"): [0], ("ppg", "aux_epochs"): [0],
    ("ppg", "aux_minibatch_size"): [0], ("ppg", "chunk_size"): [0], ("ppg", "critic_learning_rate"): [0.0],
    ("ppg", "critic_max_grad_norm"): [0.0], ("ppg", "aux_kl_stop"): [0.0], ("ppg", "clone_coef"): [-1.0],
    ("ppg", "critic_network"): ["resnet"], ("ppg", "hidden_sizes"): [(0,)], ("ppg", "adam_eps"): [0.0],
    ("ppg", "entropy_coef"): [-0.01], ("ppg", "critic_warmup_rollouts"): [-1],
    ("reinforce", "episodes_per_env"): [0], ("reinforce", "value_coef"): [-1.0], ("reinforce", "max_grad_norm"): [0.0],
    ("a2c", "optimizer"): ["sgd"], ("a2c", "rmsprop_alpha"): [0.0, 1.0], ("a2c", "optimizer_eps"): [0.0],
    ("npg", "cg_iterations"): [0], ("npg", "cg_damping"): [-0.1], ("npg", "value_learning_rate"): [0.0],
    ("npg", "value_epochs"): [0], ("npg", "value_minibatch_size"): [0], ("npg", "value_max_grad_norm"): [0.0],
    ("npg", "step_size"): [0.0], ("npg", "shared"): [True],
    ("trpo", "max_kl"): [0.0], ("trpo", "backtrack_ratio"): [0.0, 1.0], ("trpo", "max_backtracks"): [0],
    ("ppo", "knn_k"): [0], ("ppo", "representation_buffer"): [0], ("ppo", "contrastive_batch_size"): [0],
    ("ppo", "contrastive_chunk_size"): [0], ("ppo", "contrastive_start"): [-1], ("ppo", "contrastive_updates_per_step"): [-0.5],
    ("ppo", "knn_clip"): [-1.0], ("ppo", "extrinsic_coef"): [-1.0], ("ppo", "intrinsic_coef"): [-1.0],
    ("ppo", "temperature"): [0.0], ("ppo", "encoder_learning_rate"): [0.0], ("ppo", "encoder_max_grad_norm"): [0.0],
    ("ppo", "reward_offset"): [0.0], ("ppo", "reward_observation"): ["previous"], ("ppo", "knn_scope"): ["game"],
    ("ppo", "contrastive_loss"): ["byol"], ("ppo", "target_tau"): [0.0, 1.5], ("ppo", "warmup_updates"): [-1],
    ("ppo", "head_norm"): ["group"], ("ppo", "shift_probability"): [-0.1, 1.1], ("ppo", "brightness"): [-0.1],
    ("ppo", "representation_stride"): [0], ("ppo", "intrinsic_gamma"): [0.0, 1.0], ("ppo", "inverse_dynamics_coef"): [-0.1],
    ("ppo", "seed"): [-1, 2**31, 2**64],
    ("ppo", "embedding_size"): [0], ("ppo", "vector_hidden_size"): [0], ("ppo", "predictor_learning_rate"): [0.0],
    ("ppo", "predictor_epochs"): [0], ("ppo", "predictor_minibatch_size"): [0], ("ppo", "predictor_update_proportion"): [0.0, 1.1],
    ("ppo", "return_gamma"): [0.0, 1.0], ("ppo", "observation_clip"): [0.0], ("ppo", "observation_warmup_steps"): [-1],
    ("r2d2", "sequence_length"): [0], ("r2d2", "burn_in"): [-1, 41], ("r2d2", "sequence_period"): [0, 81],
    ("r2d2", "n_step"): [0], ("r2d2", "batch_size"): [0], ("r2d2", "target_update_period"): [0],
    ("r2d2", "replay_capacity"): [0], ("r2d2", "min_replay"): [0, 5000], ("r2d2", "samples_per_insert"): [0.0],
    ("r2d2", "priority_exponent"): [-0.1, 1.1], ("r2d2", "importance_exponent"): [-0.1, 1.1],
    ("r2d2", "priority_eta"): [0.0, 1.1], ("r2d2", "epsilon_base"): [0.0, 1.1], ("r2d2", "epsilon_alpha"): [0.0],
    ("r2d2", "lstm_size"): [0], ("r2d2", "head_size"): [0], ("r2d2", "memory"): ["gru"], ("r2d2", "td_target"): ["vtrace"], ("r2d2", "trace_lambda"): [-0.1, 1.1],
    ("r2d2", "shift_pixels"): [-1], ("r2d2", "guide_steps"): [0], ("r2d2", "guide_decay_steps"): [0],
    ("r2d2", "guide_margin_coef"): [-1.0], ("r2d2", "guide_margin"): [0.0], ("r2d2", "prior_coef"): [0.0],
    ("ppg", "intrinsic_gamma"): [0.0, 1.0],
    ("ngu", "num_policies"): [0], ("ngu", "intrinsic_coef"): [-0.1], ("ngu", "gamma_min"): [0.0, 0.999],
    ("ngu", "controllable_embedding_size"): [0], ("ngu", "episodic_neighbours"): [0], ("ngu", "kernel_eps"): [0.0],
    ("ngu", "pseudo_count"): [0.0], ("ngu", "cluster_distance"): [-0.1], ("ngu", "max_similarity"): [0.0],
    ("ngu", "max_modulation"): [0.5], ("ngu", "episodic_memory"): [0], ("ngu", "rnd_embedding_size"): [0],
    ("ngu", "novelty_learning_rate"): [0.0], ("ngu", "meta_controller"): ["ucb"], ("ngu", "bandit_window"): [0],
    ("ngu", "bandit_beta"): [-1.0], ("ngu", "bandit_epsilon"): [-0.1, 1.1],
}
ANY_VALUE = {
    "init_log_std", "collapse_entropy", "run_dir", "init_from", "progress", "wandb", "collapse_restore",
    "deterministic_kernels", "normalize_observation", "normalize_reward", "episodic_life", "previous_action_reward", "normalize_advantages", "shared",
    "baseline", "reward_to_go", "spectral_norm", "value_rescaling", "save_replay", "ray_address", "split_values",
    "intrinsic_terminates", "eval_video", "refresh_states", "compile", "bfloat16", "keep_weights", "guide",
    "prior",
}
"""Fields with no range of their own: any value of the right type is valid (device, the run directory and the guide's
and the prior's files are checked when the run is built; booleans have no range)."""


@pytest.mark.parametrize("algo,name", list(RANGES))
def test_values_outside_a_fields_range_are_refused_by_name(algo, name):
    for value in RANGES[algo, name]:
        options = with_plugin(name, {name: value})
        if name in ("init_parts", "init_temperature"):
            options["init_from"] = "pre.pt"
        if name in ("guide_steps", "guide_decay_steps", "guide_margin_coef", "guide_margin"):
            options["guide"] = "guide.pt"
        if name == "guide_margin":
            options["guide_margin_coef"] = 1.0
        if name == "prior_coef":
            options["prior"] = "prior.pt"
        with pytest.raises(ValueError, match=name if name != "env" else "unknown environment id"):
            preflight(make_config(algo, **options))


def test_the_range_table_covers_every_field():
    """A new option must get a range check (and a row above) or be declared free of one."""
    covered = {name for _, name in RANGES} | ANY_VALUE | {"device"}
    assert {name for _, name, _, _ in owners()} - covered == set()


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    path = tmp_path_factory.mktemp("pre") / "run"
    voidrl.train("ppo", env="CartPole-v1", steps=256, num_envs=2, num_steps=128, run_dir=str(path), progress=False)
    return str(path / "checkpoint.pt")


COMBINATIONS = [
    (["finetune", "ppo", "--from", "{pre}", "--init-parts", "aux_head"], "init_parts: this network has no aux_head"),
    (["finetune", "ppo", "--from", "missing.pt"], "'missing.pt' does not exist"),
    (["train", "ppg", "--env", "HalfCheetah-v5"], "ppg supports discrete action spaces only"),
    (["train", "ppo", "--env", "ALE/Pong-v5", "--vector", "async"], "vector acts outside Atari only; ALE/Pong-v5 is an atari environment"),
    (["train", "ppo", "--env", "CartPole-v1", "--intrinsic", "apt"], "apt needs pixel observations"),
    (["train", "ppo", "--env", "CartPole-v1", "--preset", "atari"], "network 'nature' needs [C, H, W] observations"),
    (["train", "ppo", "--env", "MinAtar/Breakout-v1", "--network", "nature"], "too small for this network's convolutions"),
    (["train", "ppo", "--continuous-policy", "mixture"], "need a Box action space"),
    (["train", "trpo", "--env", "HalfCheetah-v5", "--continuous-policy", "mixture"], "'mixture' has no closed-form KL"),
    (["train", "a2c", "--env", "HalfCheetah-v5", "--action-persistence", "0.5"], "action_persistence needs continuous_policy mixture"),
    (["train", "ppg", "--shared"], "unrecognized arguments: --shared"),
    (["train", "ppo", "--refresh-states"], "refresh_states recomputes an LSTM's states: it needs memory lstm"),
    (["train", "a2c", "--memory", "lstm", "--refresh-states"], "refresh_states is for ppo, ppg (several gradient steps per rollout); a2c takes one gradient step"),
    (["train", "ppo", "--knn-k", "3"], "knn_k: apt option, used only with intrinsic apt"),
    (["train", "ppo", "--collapse-restore"], "collapse_restore needs collapse_entropy"),
    (["train", "r2d2", "--collapse-entropy", "0.5"], "collapse_entropy: r2d2 acts greedily on Q-values and has no policy entropy"),
    (["train", "agent57", "--collapse-entropy", "0.5"], "the collapse guard applies to ppo, ppg, reinforce, a2c, a3c, npg, trpo"),
    (["train", "ppo", "--init-parts", "critic"], "init_parts needs init_from"),
    (["train", "ppo", "--init-temperature", "0.5"], "init_temperature needs init_from (finetune --from CHECKPOINT, train --init-from"),
    (["train", "ppo", "--seed", "4294967296"], "seed must be from 0 to 2147483647 (each value its own run), got 4294967296"),
    (["train", "ppo", "--torch-threads", "100000"], "torch_threads must be from 1 to"),
    (["compare", "ppo", "--from", "{pre}", "--seed", "2147483647", "--seeds", "2"], "the last seed (--seed + --seeds - 1) must be"),
    (["eval", "--checkpoint", "{pre}", "--seed", "-1"], "argument --seed: the seed must be from 0 to 2147483647"),
    (["eval", "--checkpoint", "{pre}", "--torch-threads", "1000"], "--torch-threads must be from 1 to"),
    (["finetune", "ppo", "--from", "{pre}", "--init-parts", "policy_body", "--init-temperature", "0.5"],
     "init_parts leaves it out: name policy_head, or leave init_temperature at 1"),
    (["finetune", "ppo", "--from", "{pre}", "--init-parts", "apt_encoder"], "init_parts apt_encoder needs the apt policy body"),
    (["train", "ppg", "--env", "MinAtar/Breakout-v1", "--intrinsic", "apt", "--head-norm", "batch", "--contrastive-chunk-size", "8"],
     "head_norm batch needs contrastive_chunk_size unset"),
    (["train", "ppo", "--learning-rate", "nan"], "learning_rate must be a finite number, got nan"),
    (["train", "ppo", "--gamma", "inf"], "gamma must be a finite number, got inf"),
    (["train", "ppo", "--steps", "1e5"], "invalid int value: '1e5'"),
    (["train", "ppo", "--run-dir", "a_file/run"], "'a_file' is a file"),
    (["train", "ppo", "--run-dir", "/proc/voidrl-test/run"], "cannot be written"),
    (["train", "ppo", "--device", "tpu"], "device must be cpu, cuda, cuda:N or auto"),
    (["compare", "ppo", "--from", "{pre}", "--seeds", "0"], "--seeds must be a positive integer"),
    (["compare", "ppo", "--from", "{pre}", "--parallel", "0"], "--parallel must be a positive integer"),
    (["compare", "ppo", "--steps", "512"], "exactly one of --from CHECKPOINT and --pretrain-steps N"),
    (["compare", "ppo", "--pretrain-steps", "0", "--run-dir", "cmp"], "--pretrain-steps must be a positive integer"),
    (["compare", "ppo", "--from", "{pre}", "--init-parts", "aux_head"], "init_parts: this network has no aux_head"),
    (["train", "ppo", "--pixels", "96"], "pixels and vision render MuJoCo tasks; CartPole-v1 is a classic task"),
    (["train", "ppo", "--env", "HalfCheetah-v5", "--pixels", "96"], "or use ppo's --preset mujoco-pixels"),
    (["train", "ppo", "--env", "HalfCheetah-v5", "--vision", "vae:missing.pt"], "vision file 'missing.pt' does not exist"),
    (["train", "ppo", "--env", "HalfCheetah-v5", "--vision", "vae:{pre}"], "is a voidrl checkpoint but not a VAE"),
    (["train", "ppo", "--env", "HalfCheetah-v5", "--vision-latent", "sample"], "need --vision vae:PATH"),
    (["eval", "--checkpoint", "{pre}", "--episodes", "0"], "--episodes must be a positive integer"),
    (["eval", "--checkpoint", "{pre}", "--device", "cuda:7"], "device 'cuda:7' is not available"),
    (["eval", "--checkpoint", "{pre}", "--member", "1"], "--member applies to ngu and agent57, not to ppo"),
    (["train", "ngu", "--intrinsic", "rnd"], "ngu computes its own novelty reward; a reward plug-in (rnd) would add a second"),
    (["train", "agent57", "--intrinsic", "apt", "--env", "MinAtar/Breakout-v1"], "agent57 computes its own novelty reward"),
    (["vae", "train", "--run-dir", "/proc/x"], "run_dir '/proc/x' cannot be written"),
    (["vae", "train", "--run-dir", "a_file/sub"], "run_dir 'a_file/sub' cannot be created: 'a_file' is a file"),
    (["vae", "train", "--run-dir", "/dev/full"], "run_dir '/dev/full' cannot be created: '/dev/full' is a file"),
    (["vae", "train", "--frames", "1", "--epochs", "1", "--pixels", "32", "--run-dir", "v"], "frames must leave at least one training frame"),
    (["train", "ppo", "--sequence-length", "8"], "sequence_length acts with memory lstm only; this run has memory none: leave it out"),
    (["train", "ppg", "--preset", "minatar", "--env", "MinAtar/Breakout-v1", "--lstm-size", "8"], "lstm_size acts with memory lstm only"),
    (["compare", "ppo", "--from", "{pre}", "--lstm-size", "8", "--sequence-length", "8"],
     "lstm_size and sequence_length act with memory lstm only; this run has memory none: leave them out"),
    # options given where they cannot act (the acts_only tables of voidrl.configs), refused; a preset's are left alone
    (["train", "ppo", "--env", "MinAtar/Breakout-v1", "--no-episodic-life"],
     "episodic_life acts on Atari games only; MinAtar/Breakout-v1 is a minatar environment: leave it out"),
    (["train", "ppo", "--mixture-modes", "3"], "mixture_modes acts with continuous_policy mixture only; this run has continuous_policy gaussian"),
    (["train", "ppo", "--init-log-std", "-1"], "init_log_std acts with Box (continuous) actions only; CartPole-v1's actions are Discrete(2)"),
    (["train", "ppo", "--env", "MinAtar/Breakout-v1", "--hidden-sizes", "32"], "hidden_sizes acts on an mlp body only; this run has network minatar"),
    (["train", "a2c", "--memory", "lstm", "--sequence-length", "8"], "sequence_length acts on ppo and ppg only; a2c and a3c unroll"),
    (["train", "a2c", "--rmsprop-alpha", "0.9", "--optimizer", "adam"], "rmsprop_alpha acts with optimizer rmsprop only"),
    (["train", "reinforce", "--no-baseline", "--value-coef", "1"], "value_coef acts with baseline True only"),
    (["train", "r2d2", "--collapse-patience", "3"], "collapse_patience acts with collapse_entropy set only"),
    (["train", "r2d2", "--trace-lambda", "0.9"], "trace_lambda acts with td_target retrace only; this run has td_target n-step"),
    (["train", "ngu", "--bandit-window", "50"], "bandit_window acts with meta_controller bandit only; this run has meta_controller fixed"),
    (["train", "ppg", "--intrinsic-gamma", "0.99"], "intrinsic_gamma acts with intrinsic set only; this run leaves intrinsic unset"),
    (["train", "ppo", "--eval-episodes", "5"], "eval_episodes acts with eval_every set only"),
    (["train", "ppo", "--deterministic-kernels"], "deterministic_kernels acts with device other than cpu only; this run has device cpu"),
    (["train", "ppo", "--env", "ALE/Pong-v5", "--action-repeat", "1"], "action_repeat acts outside Atari only; ALE/Pong-v5 is an atari environment"),
    (["train", "ppo", "--env", "HalfCheetah-v5", "--vision-latent", "mean"], "vision_latent acts with vision set only"),
    (["train", "ppo", "--env", "MinAtar/Breakout-v1", "--no-previous-action-reward"], "previous_action_reward acts on vector observations only"),
    (["train", "ppo", "--env", "MinAtar/Breakout-v1", "--intrinsic", "rnd", "--vector-hidden-size", "64"],
     "vector_hidden_size acts on vector observations only; MinAtar/Breakout-v1's observations are frames"),
    (["train", "ppg", "--env", "MinAtar/Breakout-v1", "--intrinsic", "apt", "--contrastive-updates-per-step", "0", "--temperature", "0.5",
      "--brightness", "0.1"], "brightness and temperature act with contrastive_updates_per_step above 0 only"),
    (["train", "ppo", "--env", "MinAtar/Breakout-v1", "--mixture-modes", "2", "--no-episodic-life"],
     "episodic_life acts on Atari games only; MinAtar/Breakout-v1 is a minatar environment: leave it out; mixture_modes acts with"),
    (["explore", "--checkpoint", "{pre}"], "exploration is measured on Atari games"),
    (["export", "--checkpoint", "{pre}", "--format", "weights", "--out", "{pre}"], "is the checkpoint it reads"),
    (["eval", "--checkpoint", "."], "is a directory; give the checkpoint file in it"),
]


@pytest.mark.parametrize("args,fragment", COMBINATIONS, ids=[" ".join(a) for a, _ in COMBINATIONS])
def test_combinations_that_do_not_fit_fail_before_any_work(tmp_path, monkeypatch, capsys, pretrained, args, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("not a directory")
    assert main([arg.format(pre=pretrained) for arg in args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert fragment in err[0], err[0]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a_file"]  # nothing written


BUILT_RUN_REFUSALS = [
    (["--init-log-std", "-1"], "init_log_std acts with Box (continuous) actions only"),
    (["--intrinsic", "apt"], "apt needs pixel observations"),
    (["--env", "HalfCheetah-v5", "--vision", "vae:missing.pt"], "vision file 'missing.pt' does not exist"),
]
"""Refusals that need the built environment: its spaces, the networks' fit to them, the ``vision`` VAE file."""


@pytest.mark.parametrize("args,fragment", BUILT_RUN_REFUSALS, ids=[" ".join(a) for a, _ in BUILT_RUN_REFUSALS])
def test_what_needs_the_built_environment_is_refused_before_the_run_directory_is_checked(tmp_path, monkeypatch, capsys, args, fragment):
    """The run directory here cannot be created (its parent is a file), yet the refusal is the environment's."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("not a directory")
    assert main(["train", "ppo", *args, "--run-dir", "a_file/run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a_file"]  # nothing written


def test_finetuning_ppo_with_the_default_parts_loads_every_part_it_has(tmp_path, monkeypatch, pretrained):
    config = make_config("ppo", init_from=pretrained, run_dir=str(tmp_path / "fine"))
    trainer = Trainer(config)
    saved = voidrl.load(pretrained).policy.state_dict()
    assert all(torch.equal(value, saved[key]) for key, value in trainer.algo.policy.state_dict().items())
    trainer.close()
    monkeypatch.chdir(tmp_path)
    assert main(["finetune", "ppo", "--from", pretrained, "--steps", "256", "--num-envs", "2", "--num-steps", "128",
                 "--run-dir", "fine", "--no-progress"]) == 0


def test_a_file_that_is_not_a_runs_checkpoint_is_refused_where_a_run_is_expected(tmp_path, monkeypatch, capsys):
    from voidrl.nets.vae import VAE, VAEShape, save_vae

    save_vae(tmp_path / "vae.pt", VAE(VAEShape(image_size=32)), "HalfCheetah-v5")
    monkeypatch.chdir(tmp_path)
    for args in (["finetune", "r2d2", "--from", "vae.pt"], ["finetune", "ppo", "--env", "CartPole-v1", "--from", "vae.pt"],
                 ["eval", "--checkpoint", "vae.pt"]):
        assert main(args) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert "'vae.pt' holds no training run (a voidrl file of kind 'voidrl-vae'" in line
    assert sorted(path.name for path in tmp_path.iterdir()) == ["vae.pt"]


def test_plot_refuses_an_out_it_cannot_write_before_plotting(tmp_path, monkeypatch, capsys, pretrained):
    monkeypatch.chdir(tmp_path)
    assert main(["plot", str(Path(pretrained).parent), "--out", "/proc/x/p"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--out's folder '/proc/x' cannot be written" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("algo,old,new,value", [("ppg", "beta_clone", "clone_coef", 0.5), ("r2d2", "prior_weight", "prior_coef", 0.3),
                                               ("r2d2", "guide_margin_weight", "guide_margin_coef", 0.2)])
def test_loss_weights_take_one_word_and_their_old_names_still_load_and_parse(algo, old, new, value):
    from voidrl.cli import build_parser
    from voidrl.config import TrainConfig

    stored = make_config(algo).to_dict()
    stored["algo_config"].pop(new)
    stored["algo_config"][old] = value  # a config.json written before the rename
    assert getattr(TrainConfig.from_dict(stored).algo_config, new) == value
    args = build_parser(["train", algo]).parse_args(["train", algo, "--" + old.replace("_", "-"), str(value)])
    assert getattr(args, new) == value


@pytest.mark.parametrize("algo", ["ngu", "agent57"])
def test_a_family_config_written_while_it_inherited_r2d2s_guide_and_prior_still_loads(algo):
    from voidrl.config import TrainConfig

    stored = make_config(algo).to_dict()
    assert not {"guide", "prior"} & set(stored["algo_config"])  # the guide and the prior are R2D2's parts alone
    stored["algo_config"] |= {"guide": None, "guide_steps": 1000, "guide_decay_steps": 50000, "guide_margin_weight": 0.0,
                              "guide_margin": 0.8, "prior": None, "prior_weight": 1.0}  # as config.json held them before
    assert TrainConfig.from_dict(stored).algo_config == make_config(algo).algo_config
    stored["algo_config"]["gude"] = None  # a stored name that never was an option is still refused
    with pytest.raises(ValueError, match="unknown .* fields: gude"):
        TrainConfig.from_dict(stored)
