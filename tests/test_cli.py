"""The command line: error cases, train/eval round trip, kill and resume."""

import csv
import importlib.util
import signal
import subprocess
import sys
import time

import pytest
import torch

from tests.learning import assert_majority, mean_of_last, train_seeds
from voidrl.cli import command_preset, main, pretrain_defaults
from voidrl.config import TrainConfig, default_presets_text
from voidrl.io.checkpoint import load_checkpoint
from voidrl.training.presets import make_config

VOIDRL = [sys.executable, "-m", "voidrl"]


def run(*args, cwd=None, timeout=300):
    return subprocess.run([*VOIDRL, *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)


def assert_usage_error(result, fragment):
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("args,fragment", [
    (["train", "ppo", "--steps", "-5"], "steps must be a positive integer"),
    (["train", "nope"], "invalid choice: 'nope'"),
    (["train", "ppo", "--clip", "1.5"], "clip must lie in (0, 1)"),
    (["train", "ppo", "--clip", "0"], "clip must lie in (0, 1)"),
    (["train", "ppo", "--env", "Bogus-v9"], "unknown environment id 'Bogus-v9'; run `voidrl envs`"),
    (["train", "ppo", "--num-envs", "0"], "num_envs must be a positive integer"),
    (["train", "ppo", "--network", "resnet"], "network must be one of"),
    (["train", "ppo", "--preset", "nope"], "invalid choice: 'nope'"),
    (["train", "ppo", "--device", "cuda:7"], "device 'cuda:7' is not available"),
    (["train", "ppo", "--learning-rate", "abc"], "--learning-rate: expected a number or lin_X (X falling linearly to 0 over the run), got 'abc'"),
    (["train", "ppo", "--action-repeat", "0"], "action_repeat must be a positive integer, got 0"),
    (["train", "ppo", "--env", "ALE/Pong-v5", "--action-repeat", "4"], "action_repeat must be 1 on Atari"),
    (["eval", "--checkpoint", "missing.pt"], "does not exist"),
    (["eval", "--checkpoint", "x.pt", "--episodes", "0"], "--episodes must be a positive integer"),
])
def test_bad_input_fails_fast_with_one_line(tmp_path, monkeypatch, capsys, args, fragment):
    monkeypatch.chdir(tmp_path)
    started = time.perf_counter()
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0] and fragment in lines[0], lines
    assert time.perf_counter() - started < 30
    assert not (tmp_path / "runs").exists()


def test_bad_input_from_a_shell_is_one_line_and_exit_status_2(tmp_path):
    assert_usage_error(run("train", "ppo", "--learning-rate", "nan", cwd=tmp_path), "learning_rate must be a finite number")


def test_corrupt_checkpoint_is_a_usage_error(tmp_path):
    (tmp_path / "bad.pt").write_bytes(b"\x00garbage")
    assert_usage_error(run("eval", "--checkpoint", "bad.pt", cwd=tmp_path), "corrupt or not a checkpoint")


@pytest.mark.slow
def test_existing_run_is_not_overwritten(tmp_path):
    """A run that wrote a checkpoint is never overwritten (one that never did is taken over: test_user_envs)."""
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "episodes.csv").write_text("step,return,length\n1,2,3\n")
    (tmp_path / "old" / "checkpoint.pt").write_bytes(b"a checkpoint")
    assert_usage_error(run("train", "ppo", "--run-dir", "old", cwd=tmp_path), "already holds a run")
    assert (tmp_path / "old" / "episodes.csv").read_text() == "step,return,length\n1,2,3\n"
    assert_usage_error(run("train", "ppo", "--resume", cwd=tmp_path), "resume (--resume) needs run_dir")


def test_version_is_the_packages(capsys):
    import voidrl

    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0 and capsys.readouterr().out.strip() == f"voidrl {voidrl.__version__}"


@pytest.mark.parametrize("command", ["train", "pretrain"])
def test_help_names_its_sources_by_author_and_year(capsys, command):
    """"the thesis" or "the notebook" tells a user nothing; Müller (2022) and Leite (2022) are in the README's and the site's sources."""
    from voidrl.registry import ALGORITHMS

    for algo in sorted(ALGORITHMS):
        with pytest.raises(SystemExit):
            main([command, algo, "--help"])
        text = capsys.readouterr().out.lower()
        assert "usage:" in text and "thesis" not in text and "notebook" not in text, algo


def test_help_lists_the_collapse_guard_only_where_a_policy_has_an_entropy(capsys):
    from voidrl.registry import ALGORITHMS

    for algo in sorted(ALGORITHMS):
        with pytest.raises(SystemExit):
            main(["train", algo, "--help"])
        listed = "--collapse-entropy" in capsys.readouterr().out
        assert listed != ALGORITHMS.config_class(algo).acts_greedily, algo


@pytest.mark.parametrize("algo,listed", [("r2d2", True), ("ngu", False), ("agent57", False)])
def test_only_r2d2_takes_the_guide_and_the_prior(capsys, algo, listed):
    """The guide and the prior are parts R2D2's config takes; NGU and Agent57 neither inherit nor list them."""
    with pytest.raises(SystemExit):
        main(["train", algo, "--help"])
    shown = capsys.readouterr().out
    assert all((flag in shown) == listed for flag in ("--guide ", "--guide-steps", "--prior ", "--prior-coef"))
    if not listed:
        assert main(["train", algo, "--guide", "guide.pt", "--steps", "2000"]) == 2
        assert "unrecognized arguments: --guide" in capsys.readouterr().err


@pytest.mark.parametrize("argv,apt,rnd", [
    (["train", "ppo"], False, False),
    (["train", "ppo", "--intrinsic", "apt"], True, False),
    (["train", "ppo", "--intrinsic=rnd"], False, True),
    (["train", "ppo", "--preset", "minigrid-rnd"], False, True),
    (["pretrain", "ppg"], True, False),
])
def test_help_lists_the_options_of_the_chosen_reward_plugin_only(capsys, argv, apt, rnd):
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert ("--knn-k" in text) == apt and ("--embedding-size" in text) == rnd
    assert ("--intrinsic NAME --help lists them" in text) == (not apt and not rnd)


def test_preset_help_is_built_from_the_presets_an_algorithm_has(capsys):
    from voidrl.config import algorithm_presets, default_presets_text
    from voidrl.registry import ALGORITHMS

    assert default_presets_text("train", "a2c") == "cartpole on CartPole-v1; pendulum on voidrl/InvertedPendulumFall-v5"
    assert default_presets_text("pretrain", "ppg").startswith("pretrain on atari tasks; minatar-pretrain on minatar tasks")
    for algo in ALGORITHMS:
        for rule in default_presets_text("train", algo).split("; "):
            assert rule == "none" or rule.split(" on ")[0] in algorithm_presets(algo), (algo, rule)
    with pytest.raises(SystemExit):
        main(["train", "r2d2", "--help"])
    assert "minigrid on minigrid tasks" in " ".join(capsys.readouterr().out.split())


def test_envs_lists_every_suite():
    result = run("envs")
    assert result.returncode == 0
    assert "CartPole-v1" in result.stdout and "ALE/MsPacman-v5" in result.stdout
    assert "MinAtar/Breakout-v1" in result.stdout and "HalfCheetah-v5" in result.stdout


def test_help_documents_every_option():
    result = run("train", "ppo", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    for flag, doc in [("--gae-lambda", "GAE lambda"), ("--target-kl", "approximate KL"),
                      ("--normalize-observation", "Standardise observations"), ("--steps", "Environment steps")]:
        assert flag in text and doc in text


def test_each_command_lists_the_options_its_algorithm_and_its_allowed_plug_ins_take(capsys):
    options = {}
    for algo in ("ngu", "r2d2", "ppo", "reinforce"):
        with pytest.raises(SystemExit):
            main(["train", algo, "--intrinsic", "apt", "--help"])  # the plug-in's options are listed once it is chosen
        options[algo] = set(capsys.readouterr().out.split())
    assert "--num-policies" in options["ngu"] and "--num-policies" not in options["r2d2"]
    assert "--contrastive-batch-size" in options["r2d2"]  # r2d2 takes --intrinsic apt
    assert "--contrastive-batch-size" not in options["ngu"] and "--extrinsic-coef" not in options["ngu"]  # ngu has its own
    assert "--actors" in options["ngu"] and "--actors" not in options["ppo"] and "--ray-address" not in options["ppo"]
    assert {"--memory", "--lstm-size", "--sequence-length"} <= options["ppo"]  # reinforce refuses a recurrent policy
    assert not {"--memory", "--lstm-size", "--sequence-length"} & options["reinforce"]


BUILD_PARSERS = """
import sys
from voidrl.cli import build_parser

build_parser(["train", "r2d2", "--help"])
build_parser(["--help"])
build_parser()
for argv in (["train", "ppo", "--help"], ["tune", "ppo", "--help"]):
    try:
        build_parser(argv).parse_args(argv)
    except SystemExit:
        pass
print(sorted({"torch", "optuna"} & set(sys.modules)))
"""


def test_the_command_line_is_built_without_torch_or_optuna():
    """``voidrl --help``, ``voidrl train ALGO --help`` and ``voidrl tune ALGO --help`` start in a blink: building every
    option imports neither (gymnasium is imported, about 70 ms with NumPy: ``import voidrl`` registers voidrl's variants
    with it)."""
    result = subprocess.run([sys.executable, "-c", BUILD_PARSERS], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "[]"


def read_rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_killed_run_resumes_without_duplicate_or_missing_rows(tmp_path):
    steps, per_update = 40_960, 2048  # 8 envs x 256 steps: a few updates per second, easy to kill between checkpoints
    args = ["train", "ppo", "--env", "CartPole-v1", "--steps", str(steps), "--seed", "3", "--num-steps", "256",
            "--checkpoint-every", "5", "--run-dir", "run", "--no-progress"]
    process = subprocess.Popen([*VOIDRL, *args], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    metrics_path = tmp_path / "run" / "metrics.csv"
    deadline = time.time() + 120
    while time.time() < deadline:
        time.sleep(0.02)
        rows = len(read_rows(metrics_path)) if metrics_path.exists() else 0
        if (tmp_path / "run" / "checkpoint.pt").exists() and rows >= 6 and rows % 5 in (1, 2):
            break
    process.send_signal(signal.SIGKILL)
    process.wait()
    checkpoint_step = load_checkpoint(tmp_path / "run" / "checkpoint.pt")["step"]
    before = [row for row in read_rows(tmp_path / "run" / "episodes.csv") if int(row["step"]) <= checkpoint_step]
    assert len(read_rows(metrics_path)) * per_update > checkpoint_step  # rows beyond the checkpoint existed

    result = run("train", "ppo", "--resume", "--run-dir", "run", "--no-progress", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    metric_steps = [int(row["step"]) for row in read_rows(metrics_path)]
    final = -(-steps // per_update) * per_update
    assert metric_steps == list(range(per_update, final + 1, per_update))
    episodes = read_rows(tmp_path / "run" / "episodes.csv")
    assert episodes[: len(before)] == before
    episode_steps = [int(row["step"]) for row in episodes]
    assert episode_steps == sorted(episode_steps) and episode_steps[-1] <= final
    assert load_checkpoint(tmp_path / "run" / "checkpoint.pt")["step"] == final
    assert (tmp_path / "run" / "config.json").exists()
    assert list((tmp_path / "run" / "tensorboard").glob("events.out.tfevents.*"))


def test_action_repeat_counts_environment_steps_and_resumes_with_the_run(tmp_path, monkeypatch, capsys):
    """16 decisions of 4 environment steps each: 64 steps per update, and episodes end on multiples of 4."""
    monkeypatch.chdir(tmp_path)
    command = ["train", "ppo", "--env", "InvertedPendulum-v5", "--preset", "mujoco", "--action-repeat", "4",
               "--num-steps", "16", "--run-dir", "run", "--torch-threads", "1", "--no-progress"]
    assert main([*command, "--steps", "128"]) == 0
    assert load_checkpoint(tmp_path / "run" / "checkpoint.pt")["config"]["env"]["action_repeat"] == 4
    capsys.readouterr()
    assert main(["train", "ppo", "--resume", "--run-dir", "run", "--action-repeat", "2", "--no-progress"]) == 2
    assert "action_repeat 4 -> 2" in capsys.readouterr().err
    assert main(["train", "ppo", "--resume", "--run-dir", "run", "--steps", "192", "--no-progress"]) == 0
    assert [int(row["step"]) for row in read_rows(tmp_path / "run" / "metrics.csv")] == [64, 128, 192]
    episodes = read_rows(tmp_path / "run" / "episodes.csv")
    assert episodes and all(int(row["step"]) % 4 == 0 for row in episodes)
    assert all(float(row["return"]) <= 4 * int(row["length"]) for row in episodes)  # up to 4 rewards of 1 per decision


@pytest.mark.slow
def test_most_seeds_solve_cartpole_in_60k_steps_with_default_options(tmp_path):
    """Seeds 0-2 first average 475 at 28-35k steps here."""
    run_dirs = train_seeds(tmp_path, "ppo", 60_000)
    assert_majority([mean_of_last(run_dir) for run_dir in run_dirs], 450)
    metrics = read_rows(run_dirs[0] / "metrics.csv")
    for column in ("train/policy_loss", "train/approx_kl", "train/entropy", "train/clip_fraction",
                   "train/explained_variance", "time/sps"):
        assert column in metrics[0]
    evaluation = run("eval", "--checkpoint", str(run_dirs[0] / "checkpoint.pt"), "--episodes", "5")
    assert evaluation.returncode == 0, evaluation.stderr
    assert "mean return" in evaluation.stdout


def test_python_api_trains_acts_and_saves(tmp_path):
    import voidrl

    agent = voidrl.train("ppo", env="CartPole-v1", steps=512, run_dir=str(tmp_path / "api"), progress=False)
    env = agent.make_env(num_envs=2)
    actions = agent.act(env.reset(0))
    assert actions.shape == (2,)
    agent.save(tmp_path / "agent.pt")
    again = voidrl.load(str(tmp_path / "agent.pt"))
    obs = torch.randn(5, 4)
    assert torch.equal(again.act(obs), agent.act(obs))
    assert len(again.evaluate(episodes=3)) == 3


def test_a_sampled_evaluation_prints_the_same_returns_for_the_same_seed(tmp_path, capsys):
    from tests.agents import untrained_agent

    untrained_agent("ppo", "CartPole-v1").save(tmp_path / "agent.pt")
    printed = []
    for global_seed, threads in ((0, []), (1, ["--torch-threads", "1"])):  # whatever torch's generator holds, --seed seeds the sampled actions
        torch.manual_seed(global_seed)
        assert main(["eval", "--checkpoint", str(tmp_path / "agent.pt"), "--episodes", "4", "--num-envs", "2", "--sampled", *threads]) == 0
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1] and "(sampled actions)" in printed[0]
    assert main(["eval", "--checkpoint", str(tmp_path / "agent.pt"), "--torch-threads", "0"]) == 2
    assert "voidrl eval: --torch-threads must be from 1 to" in capsys.readouterr().err


@pytest.mark.parametrize("env,named,chosen,entropy", [
    ("MinAtar/Breakout-v1", None, "minatar-pretrain", 0.05),
    ("MinAtar/Breakout-v1", "minatar", "minatar", 0.01),
    ("ALE/MsPacman-v5", None, "pretrain", 0.01),
    ("ALE/MsPacman-v5", "pretrain-published", "pretrain-published", 0.01),
    ("CartPole-v1", None, None, 0.0),
])
def test_pretrain_applies_its_suites_preset_unless_one_is_named(env, named, chosen, entropy):
    preset, options = pretrain_defaults("ppg", named, {"env": env})
    config = make_config("ppg", preset, **options)
    assert preset == chosen and config.algo_config.entropy_coef == entropy
    assert config.run.intrinsic == "apt" and config.intrinsic_config.extrinsic_coef == 0.0


@pytest.mark.parametrize("algo,env,named,chosen", [
    ("ppg", "ALE/MsPacman-v5", None, "atari-finetune"),
    ("ppg", "ALE/MsPacman-v5", "atari", "atari"),
    ("ppg", "MinAtar/Breakout-v1", None, None),
    ("ppo", "ALE/MsPacman-v5", None, None),
])
def test_finetune_applies_its_suites_preset_unless_one_is_named(algo, env, named, chosen):
    preset = command_preset("finetune", algo, named, {"env": env})
    config = make_config(algo, preset, env=env)
    assert preset == chosen
    if chosen == "atari-finetune":
        assert (config.algo_config.epochs, config.env.reward_clip, config.env.reward_scale, config.algo_config.entropy_coef) == (3, 1.0, 1.0, 0.001)
    else:  # the preset named, or the environment's default
        assert config.to_dict() == make_config(algo, named, env=env).to_dict()
    assert default_presets_text("finetune", "ppg").startswith("atari-finetune on atari tasks; ")


@pytest.mark.skipif(importlib.util.find_spec("wandb") is not None, reason="the refusal is of a missing wandb package")
def test_wandb_without_its_package_is_refused_in_one_line_before_the_run_directory_is_touched(tmp_path, capsys):
    import voidrl

    command = ["train", "ppo", "--wandb", "--steps", "512", "--run-dir", str(tmp_path / "run"), "--no-progress"]
    for _ in range(2):  # the same command, refused the same way: no run directory was left behind
        assert main(command) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line == "voidrl: error: wandb needs the wandb package: pip install 'voidrl[wandb]'"
    with pytest.raises(ValueError, match="wandb needs the wandb package"):
        voidrl.train("ppo", steps=512, wandb=True, run_dir=str(tmp_path / "run"))
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("progress,terminal,shown", [(None, False, False), (None, True, True), (True, False, True),
                                                     (False, True, False)])
def test_the_progress_bar_follows_the_terminal_unless_asked(tmp_path, capsys, monkeypatch, progress, terminal, shown):
    import voidrl

    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    voidrl.train("ppo", steps=256, run_dir=str(tmp_path / "run"), progress=progress, torch_threads=1)
    assert ("256/256" in capsys.readouterr().err) == shown


def test_configs_saved_with_a_boolean_progress_still_load():
    for stored in (True, False):
        data = make_config("ppo").to_dict()
        data["run"]["progress"] = stored
        config = TrainConfig.from_dict(data)
        config.validate()
        assert config.run.progress is stored


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_the_completion_script_knows_every_command_and_algorithm(capsys, shell):
    from voidrl.registry import ALGORITHMS

    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    for word in ("train", "pretrain", "finetune", "compare", "eval", "export", "tune", "plot", "completion", *ALGORITHMS,
                 "--eval-every", "--resume"):
        assert word in script, word


def test_bash_completes_commands_and_options_with_the_script(tmp_path):
    script = tmp_path / "voidrl.bash"
    script.write_text(run("completion", "bash").stdout)
    complete = ('source "$1"; COMP_WORDS=(voidrl "$2" $3); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _shtab_voidrl; '
                'echo "${COMPREPLY[@]}"')
    answers = [subprocess.run(["bash", "-c", complete, "bash", str(script), *words], capture_output=True, text=True).stdout.split()
               for words in (["pre"], ["train", "ppo --eval-e"])]
    assert answers == [["pretrain"], ["--eval-every", "--eval-episodes"]]


def test_voidrl_envs_marks_the_groups_whose_package_is_not_installed(monkeypatch, capsys):
    import importlib.util

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name in ("mujoco", "Box2D") else found(name, *rest))
    assert main(["envs"]) == 0
    lines = {line.split(": ")[0]: line for line in capsys.readouterr().out.splitlines()}
    assert lines["mujoco"].startswith('mujoco: (not installed: pip install "voidrl[mujoco]") Ant-v5 ')
    assert lines["gymnasium/box2d"].startswith('gymnasium/box2d: (not installed: pip install "voidrl[box2d]") ')
    assert "not installed" not in lines["classic"] + lines["minatar"] + lines["gymnasium/toy_text"]


def test_a_missing_extra_is_named_before_the_options_are_judged(tmp_path, monkeypatch, capsys):
    import importlib.util

    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name in ("mujoco", "Box2D") else found(name, *rest))
    monkeypatch.chdir(tmp_path)
    for env, extra in (("HalfCheetah-v5", 'needs MuJoCo: pip install "voidrl[mujoco]"'),
                       ("LunarLander-v3", 'needs Box2D: pip install "voidrl[box2d]"')):
        assert main(["train", "ppo", "--env", env, "--steps", "10"]) == 2  # too few steps for one update, said once installed
        assert capsys.readouterr().err.strip() == f"voidrl: error: {env} {extra}"
    assert list(tmp_path.iterdir()) == []


def test_print_config_shows_each_setting_with_where_it_came_from_and_writes_nothing(tmp_path, tmp_path_factory, monkeypatch, capsys):
    import voidrl

    monkeypatch.chdir(tmp_path)
    assert main(["train", "ppo", "--env", "CartPole-v1", "--gamma", "0.9", "--print-config"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("voidrl train ppo: the settings of this run (nothing written)\n[run]\n")
    settings = {line.split(" = ")[0].strip(): line.split(" = ")[1] for line in out.splitlines() if " = " in line}
    assert settings["gamma"].startswith("0.9 ") and settings["gamma"].endswith("# flag")
    assert settings["num_steps"].startswith("32 ") and settings["num_steps"].endswith("# preset cartpole")
    assert settings["steps"].endswith("# default") and settings["env"].endswith("# flag")
    assert main(["pretrain", "ppg", "--env", "MinAtar/Breakout-v1", "--print-config"]) == 0
    settings = {line.split(" = ")[0].strip(): line for line in capsys.readouterr().out.splitlines() if " = " in line}
    assert settings["intrinsic"].endswith("# command") and settings["entropy_coef"].endswith("# preset minatar-pretrain")
    pre = tmp_path_factory.mktemp("pre") / "run"
    voidrl.train("ppo", env="CartPole-v1", steps=512, num_envs=2, num_steps=128, run_dir=str(pre), progress=False)
    assert main(["finetune", "ppo", "--from", str(pre / "checkpoint.pt"), "--print-config"]) == 0
    settings = {line.split(" = ")[0].strip(): line for line in capsys.readouterr().out.splitlines() if " = " in line}
    assert settings["env"].endswith("# the --from checkpoint") and settings["init_from"].endswith("# flag")
    assert main(["train", "ppo", "--env", "CartPole-v1", "--steps", "10", "--print-config"]) == 2  # refused as the run would be
    assert "less than one update's rollout" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_help_shows_as_defaults_the_values_of_the_preset_the_run_would_apply(capsys):
    def help_of(*argv):
        with pytest.raises(SystemExit):
            main([*argv, "--help"])
        return " ".join(capsys.readouterr().out.split())  # argparse wraps lines

    assert "(default: 32, the cartpole preset's; 256 without it)" in help_of("train", "ppo")  # CartPole-v1 by default
    assert "(default: 0.98, the cartpole preset's; 0.99 without it)" in help_of("train", "ppo", "--env", "CartPole-v1")
    assert "(default: 2048, the mujoco preset's; 256 without it)" in help_of("train", "ppo", "--env", "HalfCheetah-v5")
    assert "Discount factor. (default: 0.99)" in help_of("train", "ppo", "--env", "HalfCheetah-v5")  # the preset's is the default
    assert "(default: 4, the pretrain preset's; 1 without it)" in help_of("pretrain", "ppg", "--env", "ALE/MsPacman-v5")


def test_the_python_api_help_lists_the_options_train_takes():
    import dataclasses

    import voidrl
    from voidrl.configs.env import EnvConfig
    from voidrl.configs.run import RunConfig

    text = " ".join(voidrl.train.__doc__.split())
    for cls in (RunConfig, EnvConfig):
        assert all(f" {field.name}," in text or f" {field.name}." in text for field in dataclasses.fields(cls)), cls
    assert "voidrl.make_config(ALGO).algo_config" in text and "ppo, ppg," in text
