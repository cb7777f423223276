"""Beyond one process: actors on Ray feeding one learner (``--actors N``, engine.py; its loop is ``voidrl.train.ray_loop``), and the collectives of
data-parallel runs launched by ``torchrun`` (collective.py)."""
