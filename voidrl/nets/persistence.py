"""Action persistence (Leite's (2022) mixture policy): random draws kept across steps, redrawn by chance."""

from __future__ import annotations

import torch


class PersistentUniforms:
    """Uniforms ``[N, A, 2]`` for ``MixtureOfGaussians.sample``, held from one step to the next.

    At every ``draw()`` each environment independently redraws all of its ``A x 2``
    uniforms with probability 1 - ``persistence`` and otherwise keeps them, so the
    chosen mode and Gaussian quantile persist for about 1 / (1 - p) steps.
    p = 1 never redraws after the initial draw; p = 0 redraws at every call.

    Draws come from a CPU generator of its own (``generator``, or one seeded from
    torch's global RNG), so a run is reproducible; move the result to the policy's
    device. The state lives here (not in the policy): save ``state_dict()`` with the
    collector's checkpoint to resume the same stream.
    """

    def __init__(self, num_envs: int, action_dim: int, persistence: float, generator: torch.Generator | None = None):
        if not 0.0 <= persistence <= 1.0:
            raise ValueError(f"persistence must lie in [0, 1], got {persistence}")
        if generator is None:
            generator = torch.Generator().manual_seed(int(torch.randint(2**62, ())))
        self.persistence = float(persistence)
        self.generator = generator
        self.uniforms = torch.rand(num_envs, action_dim, 2, generator=generator)

    def draw(self) -> torch.Tensor:
        """Redraw each environment's uniforms with probability 1 - p; returns the current ``[N, A, 2]``."""
        redraw = torch.rand(self.uniforms.shape[0], generator=self.generator) >= self.persistence
        fresh = torch.rand(self.uniforms.shape, generator=self.generator)
        self.uniforms = torch.where(redraw[:, None, None], fresh, self.uniforms)
        return self.uniforms

    def state_dict(self) -> dict[str, torch.Tensor]:
        return {"uniforms": self.uniforms.clone(), "generator": self.generator.get_state()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        if state["uniforms"].shape != self.uniforms.shape:
            raise ValueError(
                f"persistent uniforms of shape {tuple(state['uniforms'].shape)} do not fit {tuple(self.uniforms.shape)}"
            )
        self.uniforms = state["uniforms"].clone()
        self.generator.set_state(state["generator"])
