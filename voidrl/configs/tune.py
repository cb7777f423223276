"""The options of ``voidrl tune`` (the search: ``voidrl.training.tune``)."""

from __future__ import annotations

from dataclasses import dataclass

from voidrl.registry import ALGORITHMS
from voidrl.validation import require_non_negative, require_positive_integers

STUDY_SETTINGS = ("algo", "env", "preset", "steps", "seed", "eval_every", "eval_episodes")
"""What a study's trials are measured under: a study directory resumes only with the same (the number of trials, the
trials run at once, their threads and the random start may change)."""


@dataclass
class TuneConfig:
    """A hyperparameter search: trials of one algorithm on one environment, each an ordinary run."""

    algo: str = "ppo"
    """The algorithm whose search space is sampled (ppo, ppg, a2c, a3c)."""
    env: str = "CartPole-v1"
    """Environment id of every trial (``voidrl envs`` lists them)."""
    trials: int = 20
    """Trials the study runs in all, finished or pruned; run the command again to finish a study that was stopped, or
    with a larger number to extend it."""
    steps: int = 100_000
    """Environment steps of each trial."""
    study_dir: str | None = None
    """Where the study (study.db), the trials' run directories (trial-NNNN/), trials.csv and best-preset.json go;
    default runs/tune-<algo>-<env>."""
    parallel: int = 1
    """Trials run at once, each in a process of its own."""
    preset: str | None = None
    """The preset the sampled options go on top of; default the environment's own (as voidrl train's)."""
    seed: int = 0
    """Seed of every trial's run (all trials see the same seed) and of the sampler."""
    eval_every: int | None = None
    """Greedy evaluation of each trial every this many environment steps: the values the pruner compares; default a
    tenth of the steps."""
    eval_episodes: int = 10
    """Whole episodes per evaluation."""
    startup_trials: int = 5
    """Trials sampled at random before TPE models the results; the median pruner prunes nothing before as many
    trials have finished."""
    torch_threads: int = 0
    """Torch threads of each trial; 0 shares the CPUs among the trials run at once."""

    @property
    def study_path(self) -> str:
        return self.study_dir or f"runs/tune-{self.algo}-{self.env.replace('/', '_')}"

    @property
    def evaluation_interval(self) -> int:
        return self.eval_every or max(1, self.steps // 10)

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field; an algorithm without a search space is refused, naming
        those with one."""
        tuned = sorted(name for name in ALGORITHMS if ALGORITHMS.config_class(name).search_space)
        if self.algo not in tuned:
            raise ValueError(f"{self.algo} has no search space; tune one of {', '.join(tuned)}")
        require_positive_integers(self, ("trials", "steps", "parallel", "eval_every", "eval_episodes"))
        require_non_negative(self, ("startup_trials", "torch_threads"))

    def settings(self) -> dict[str, object]:
        """The study's ``STUDY_SETTINGS``, the evaluation interval resolved."""
        return {name: getattr(self, name) for name in STUDY_SETTINGS} | {"eval_every": self.evaluation_interval}
