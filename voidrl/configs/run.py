"""The run's own options: what to train on, for how long, where results go, and how the run is executed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from voidrl.configs.conditions import Condition, IsSet, Positive, Unless


@dataclass
class RunConfig:
    """What to train on, for how long, and where results go."""

    env: str = "CartPole-v1"
    """Environment id (``voidrl envs`` lists them)."""
    steps: int = 100_000
    """Environment steps to train for, counted over all parallel environments (with --action-repeat N, N per
    agent decision)."""
    seed: int = 0
    """Seed for torch, numpy, python and the environments."""
    device: str = "cpu"
    """Torch device for networks and rollouts: cpu, cuda, cuda:N, or auto (cuda when available)."""
    deterministic_kernels: bool = True
    """On cuda, have torch choose deterministic GPU kernels (torch.use_deterministic_algorithms, cuDNN's deterministic
    convolutions, cuBLAS with a fixed workspace) so the same seed gives the same run; an operation that has none
    warns once and runs as before. False lets torch pick faster kernels that add atomically. No effect on the CPU."""
    run_dir: str | None = None
    """Directory for logs and checkpoints; default runs/<algo>-<env>-seed<seed>-<start time>."""
    checkpoint_every: int = 20
    """Write a checkpoint every this many updates (and always at the end)."""
    keep_weights: bool = False
    """At every checkpoint also keep the networks that runs start from (what ``voidrl export --format weights``
    writes) in weights/step-<step>.pt, so each stage of the run can be played (voidrl eval, explore) and fine-tuned
    from; the checkpoint itself is overwritten. A PPG Atari network is about 10 MB a file."""
    torch_threads: int = 0
    """Torch intra-op CPU threads for the whole run; 0 chooses once from the network and the CPUs this process may
    use (1 for an MLP, every CPU for a CNN, 1 in a process started with nice), and config.json records the count
    (it changes floating-point sums)."""
    progress: bool | None = None
    """Show a progress bar with steps/s and ETA (True or False); None shows it when stderr is a terminal, and where it
    goes to a file, a pipe, a scheduler's log or a Jupyter cell writes a line of the same every minute instead
    (``--quiet`` is False)."""
    wandb: bool = False
    """Also log to Weights & Biases (needs the wandb package)."""
    intrinsic: str | None = None
    """Intrinsic-reward plug-in whose rewards join the task's in training: apt, or none."""
    collapse_entropy: float | None = None
    """Policy-collapse guard: warn when train/entropy stays below this for collapse_patience updates;
    None disables."""
    collapse_patience: int = 5
    """Consecutive low-entropy updates that count as a collapse."""
    collapse_restore: bool = False
    """On a collapse, reload the last checkpoint written while the entropy was healthy (healthy.pt)
    and go on from the current step."""
    init_from: str | None = None
    """Checkpoint whose networks start this run (fine-tuning); none = fresh initialisation. One saved from another
    environment id than this run's loads where the shapes fit, with a warning naming both."""
    init_parts: tuple[str, ...] | None = None
    """With init_from: which parts to load (policy_body, policy_head, aux_head, critic from the saved
    policy; policy_convs: the policy body's convolutions alone; apt_encoder: the saved run's APT encoder into
    an apt policy body; a Q-network (r2d2) takes policy_body or policy_convs into its torso); the rest is freshly
    initialised, so leaving out the heads re-initialises them. None = every part of the saved policy
    this run's network has (PPG's aux_head only for PPG), but not critic and aux_head when the saved run
    was reward-free pre-training (they learned intrinsic values)."""
    init_temperature: float = 1.0
    """With init_from: divide the loaded policy head's action logits by this temperature (its weights and bias), so the
    fine-tuned policy starts sharper (below 1) or broader (above 1) than the saved one; 1 keeps them. For a reward-free
    pre-training's broad policy, whose greedy play scores more than its sampled play. Discrete actions only. The
    atari-finetune preset sets 0.25; a preset's temperature is set back to 1 where no policy head is loaded (no init_from,
    or init_parts without policy_head), where one the user gives is refused."""
    eval_every: int | None = None
    """Greedy evaluation every this many environment steps, checked after each update, and once at the
    end; scores go to evaluations.csv, the best agent to best.pt; None disables. Counted in environment
    steps, not training episodes: the unit of --steps, the same for every algorithm."""
    eval_episodes: int = 10
    """Whole episodes per evaluation, split evenly over the parallel environments."""
    eval_video: bool = False
    """With eval_every: each evaluation also plays one greedy episode in one environment and shows it in
    TensorBoard's Images tab (eval/video: an animated GIF of the environment's own rendering, one frame per
    step, at most 256 pixels a side; its return is eval/video_return). The episode's frames are held in memory
    until it ends (an Atari game: 100 kB a step)."""
    actors: int = 0
    """Ray actors that act, each with num_envs environments, and feed the learner in this process: r2d2's
    write sequences into its replay, a3c's send gradients of their own rollouts; 0 acts in this
    process, without Ray. With actors the run is not reproducible: the learner takes their deliveries in the
    order they arrive."""
    ray_address: str | None = None
    """With actors > 0: the Ray cluster to join (the address `ray start --head` prints); None starts Ray on
    this machine."""

    acts_only: ClassVar[dict[str, Condition]] = {
        "deterministic_kernels": Unless("device", "cpu"),
        **{name: IsSet("collapse_entropy") for name in ("collapse_patience", "collapse_restore")},
        **{name: IsSet("eval_every") for name in ("eval_episodes", "eval_video")},
        "ray_address": Positive("actors"),
    }
