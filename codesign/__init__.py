"""Co-design of wearable lower-limb exoskeletons: topology, morphology and control.

Stages (see README.md): topologies -> morphology -> screening -> walking evaluation ->
Metamorphic PSO on Dask -> reports and freezing.
"""

__version__ = "0.1.0"
