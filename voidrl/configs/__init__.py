"""The options of every algorithm and reward plug-in, of the run and the environments and of ``voidrl vae train``,
one dataclass each, documented field by field, with each algorithm's presets (``TrainConfig``, which gathers a run's,
is ``voidrl.config``'s). Nothing here imports torch or gymnasium, nor any voidrl module above the configuration, so the
command line lists and documents every option without them (``voidrl train r2d2 --help``); checks that need an
environment or a network run in ``voidrl.training.preflight``.

An algorithm's config class also says what the command line and ``TrainConfig`` must know of its algorithm
(``base.AlgorithmConfig``: presets, Ray actors, its own novelty reward); the registry of names
(``voidrl.registry``: ``ALGORITHMS``, ``REWARD_SOURCES``) imports the config class, and the algorithm or plug-in
only when a run needs it.
"""
