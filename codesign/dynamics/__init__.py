"""Planar multibody engine: model, compiled algorithms, loop closures, contacts, integrator.

Public API (see each module's docstring for shapes and units):

- model: Model, ModelBuilder, ModelArrays, Workspace, make_workspace, REVOLUTE, PRISMATIC_X,
  PRISMATIC_Z, WORLD
- examples: serial_chain, four_bar, closed_three_link, pantograph_leg, falling_rod,
  sliding_block, random_tree (+ *_q0 initial configurations)
"""

from codesign.dynamics.model import (  # noqa: F401
    PRISMATIC_X, PRISMATIC_Z, REVOLUTE, WORLD, Model, ModelArrays, ModelBuilder, Workspace,
    make_workspace,
)
