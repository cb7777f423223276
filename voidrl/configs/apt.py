"""APT's options (the reward plug-in: ``voidrl.intrinsic.apt``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from voidrl.configs.choices import HEAD_NORMS
from voidrl.configs.conditions import AllOf, Choice, Condition, Positive
from voidrl.validation import require_choice, require_non_negative, require_positive, require_positive_integers

REWARD_OBSERVATIONS = ("next", "current")
KNN_SCOPES = ("rollout", "environment")
CONTRASTIVE_LOSSES = ("nt-xent", "curl")


@dataclass
class APTConfig:
    """APT plug-in settings (used with ``--intrinsic apt``).

    The particle reward's defaults are Müller's (2022). The representation's are not: Müller's (2022)
    (nt-xent, learning rate 1e-3, a shift on every view, brightness 0.2, spectral norm) collapse on
    Ms. Pac-Man within a few dozen updates; these (CURL with a momentum target, 1e-4, a shift on one
    view in ten, brightness 0.05, no spectral norm) keep learning (benchmarks/RESULTS.md, representation
    probe). ``--preset pretrain-nt-xent`` restores the published attempt's."""

    extrinsic_coef: float = 0.0
    """Weight of the task reward in the training reward (0 = reward-free pre-training; the task
    score is still logged)."""
    intrinsic_coef: float = 1.0
    """Weight of the plug-in's reward (here the particle reward)."""
    knn_k: int = 5
    """Neighbours per particle (self excluded)."""
    reward_offset: float = 1.0
    """c in r = log(c + mean k-NN distance / running mean)."""
    knn_clip: float = 0.0
    """Floor on each normalised k-NN distance: r = log(c + mean_j max(d_j / running mean - clip, 0)). 0 is
    Müller's (2022) reward; the reference APT code on DeepMind Control offers a positive clip."""
    knn_scope: str = "rollout"
    """Where each particle's neighbours are sought: rollout (Müller 2022: among all the rollout's particles, every
    environment's) or environment (among its own environment's particles of the rollout only, the last num_steps of
    its game: novelty within the game, as NGU's episodic memory rewards, rather than within the population)."""
    reward_observation: str = "next"
    """Particles of the reward: next (Müller 2022: s' of every transition, the true final observation at
    episode ends) or current (the reference DeepMind Control code: s)."""
    representation_buffer: int = 10_000
    """Observations kept (uint8) for contrastive training."""
    contrastive_start: int = 1_600
    """Environment steps before the first contrastive update."""
    contrastive_updates_per_step: float = 1.0
    """Contrastive updates per vector step once started; a fraction spaces them out (0.25 = one
    update every 4 vector steps), 0 turns contrastive training off."""
    contrastive_batch_size: int = 512
    """Observations per contrastive update (two views each)."""
    contrastive_chunk_size: int | None = None
    """Back-propagate the contrastive loss one chunk of this many observations (of one view) at a time
    (gradient caching, Gao et al. 2021): the loss's gradient w.r.t. the projections comes first, then
    each chunk is re-encoded and back-propagated alone. Same gradient, a fraction of the activation
    memory, one more forward pass; the batch size keeps one view at a time; None back-propagates
    both views at once."""
    contrastive_loss: str = "curl"
    """nt-xent (SimCLR, as Müller 2022: both views through one encoder, cosine similarity, symmetric) or curl
    (CURL: anchors through the encoder, positives through a momentum target encoder without gradient,
    learned bilinear similarity)."""
    target_tau: float = 0.01
    """curl: the target encoder and head move this fraction of the way to the online ones after every
    update (an exponential moving average)."""
    temperature: float = 0.1
    """NT-Xent temperature (nt-xent only)."""
    encoder_learning_rate: float = 1e-4
    """Adam learning rate of the encoder and projection head."""
    warmup_updates: int = 0
    """Raise the encoder's learning rate linearly from 0 over this many contrastive updates."""
    encoder_max_grad_norm: float = 10.0
    """Clip the encoder's gradient norm to this."""
    spectral_norm: bool = False
    """Spectral normalisation on the encoder's convolutions (Müller's (2022) encoder has it)."""
    head_norm: str = "none"
    """Normalisation after the projection head's hidden layer: none (Müller 2022), batch or layer."""
    shift_probability: float = 0.1
    """Chance that a view of a sample is shifted (replicate padding, then a random crop); 1 is DrQ's and
    Müller's (2022), 0.1 ATC's on Atari."""
    brightness: float = 0.05
    """Each view's brightness changes by a delta drawn from [-brightness, brightness] (pixels in [0, 1]);
    Müller's (2022) is 0.2."""
    representation_stride: int = 1
    """Store one vector step in this many in the representation buffer: the buffer then spans this many
    times more of the run, so contrastive batches hold fewer near-identical states (the same memory)."""
    inverse_dynamics_coef: float = 0.0
    """Weight of an inverse-dynamics term in every representation update (a discrete action space): the latents f(s_t)
    and f(s_t+1) of a batch of stored transitions classify the action a_t (NGU's embedding, ICM), so the latent keeps
    what the agent's actions change, not only what tells frames apart. 0 (Müller 2022) trains by the contrastive loss
    alone."""

    acts_only: ClassVar[dict[str, Condition]] = {
        **{name: Positive("contrastive_updates_per_step") for name in (
            "representation_buffer", "contrastive_start", "contrastive_batch_size", "contrastive_chunk_size", "contrastive_loss",
            "encoder_learning_rate", "warmup_updates", "encoder_max_grad_norm", "head_norm", "shift_probability", "brightness",
            "representation_stride", "inverse_dynamics_coef")},
        "target_tau": AllOf(Positive("contrastive_updates_per_step"), Choice("contrastive_loss", "curl")),
        "temperature": AllOf(Positive("contrastive_updates_per_step"), Choice("contrastive_loss", "nt-xent")),
    }
    """The options of contrastive training (the reward reads the encoder alone)."""

    def validate(self) -> None:
        require_positive_integers(self, ("knn_k", "representation_buffer", "contrastive_batch_size", "representation_stride"))
        if self.contrastive_chunk_size is not None:
            require_positive_integers(self, ("contrastive_chunk_size",))
        require_non_negative(self, ("contrastive_start", "contrastive_updates_per_step", "knn_clip", "extrinsic_coef",
                                    "intrinsic_coef", "warmup_updates", "brightness", "inverse_dynamics_coef"))
        require_positive(self, ("temperature", "encoder_learning_rate", "encoder_max_grad_norm", "reward_offset"))
        require_choice(self, "reward_observation", REWARD_OBSERVATIONS)
        require_choice(self, "knn_scope", KNN_SCOPES)
        require_choice(self, "contrastive_loss", CONTRASTIVE_LOSSES)
        require_choice(self, "head_norm", HEAD_NORMS)
        if not 0.0 < self.target_tau <= 1.0:
            raise ValueError(f"target_tau must be in (0, 1], got {self.target_tau}")
        if self.head_norm == "batch" and self.contrastive_chunk_size is not None:
            raise ValueError("head_norm batch needs contrastive_chunk_size unset: BatchNorm's statistics would differ chunk by chunk")
        if not 0.0 <= self.shift_probability <= 1.0:
            raise ValueError(f"shift_probability must be in [0, 1], got {self.shift_probability}")
        if self.inverse_dynamics_coef > 0 and self.representation_stride != 1:
            raise ValueError(f"inverse_dynamics_coef needs representation_stride 1 (a transition is two consecutive stored "
                             f"steps), got representation_stride {self.representation_stride}")
