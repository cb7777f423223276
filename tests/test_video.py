"""Episode videos: the environments' own screens, step by step."""

import numpy as np
import torch

from voidrl.envs.atari import AtariVecEnv


def test_atari_screens_are_the_emulators_colour_frames_in_lockstep_with_what_the_agent_sees():
    plain, screened = AtariVecEnv("breakout", 2), AtariVecEnv("breakout", 2, screens=True)
    assert torch.equal(plain.reset(3), screened.reset(3))
    generator = torch.Generator().manual_seed(0)
    games = 0
    for _ in range(400):  # several games over, and lives lost, in each environment
        actions = torch.randint(0, plain.single_action_space.n, (2,), generator=generator)
        a, b = plain.step(actions), screened.step(actions)  # the screened env checks its twin's frame numbers
        assert torch.equal(a.obs, b.obs) and torch.equal(a.final_obs, b.final_obs) and torch.equal(a.reward, b.reward)
        assert a.screens is None and b.screens.shape == (2, 210, 160, 3) and b.screens.dtype == np.uint8
        games += len(b.episode_returns)
    assert games >= 2
    assert (b.screens.max(-1) != b.screens.min(-1)).any()  # colour, unlike the agent's grayscale frames
    assert screened.screen_fps == 15  # 60 Hz, 4 frames a step
    plain.close()
    screened.close()
