"""The names an option chooses among where torch code builds from the name too: the configs check values against
these, and the networks, losses and encoders import them from here."""

GENERIC_SUITE = "gymnasium"
"""The suite of every Gymnasium environment the other suites do not ship (a user's own, a third-party package's)."""
SUITES = ("classic", "mujoco", "minatar", "minigrid", "atari", GENERIC_SUITE)
"""Environment suites (``voidrl.envs.suites.suite_of``); a suite's name is also the preset an algorithm applies there by
default, where it has one."""
NETWORKS = ("auto", "mlp", "nature", "dqn2013", "minatar", "apt")
"""Bodies ``voidrl.nets.bodies.make_body`` builds."""
CONTINUOUS_POLICIES = ("gaussian", "tanh_gaussian", "mixture")
"""Policies of Box actions (``voidrl.nets.actor_critic``)."""
STD_PARAMETERIZATIONS = ("log_std", "softplus")
"""How a Gaussian policy's standard deviation is computed."""
MEMORIES = ("none", "lstm")
"""Memories of the acting network: none (feed-forward) or an LSTM between body and heads."""
HEAD_NORMS = ("none", "batch", "layer")
"""Normalisations of APT's projection head (``voidrl.nets.encoders.ProjectionHead``)."""
LIKELIHOODS = ("bernoulli", "gaussian")
"""Pixel models of the VAE (``voidrl.math.elbo``)."""
ENCODER_KERNELS = (2, 4)
"""Kernel sizes of the VAE encoder's stride-2 convolutions (``voidrl.nets.vae``)."""
EXPORT_FORMATS = ("torchscript", "onnx")
"""Files ``voidrl export`` writes a policy to (``voidrl.training.export``)."""
WEIGHTS_FORMAT = "weights"
"""``voidrl export --format weights``: the networks a run starts from (``voidrl.nets.parts.fine_tuning_weights``)."""
