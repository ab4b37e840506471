"""The augmented human model: anthropometry -> human, morphology -> WR bodies and mass,
assembly -> engine Model.

Public functions: ``human_geometry``, ``build_human`` (anthropometry/human), ``nominal_gait``,
``anatomical_to_engine`` (gait), ``parameter_space``, ``build_morphology``, ``mass_report``
(morphology), ``assemble``, ``assemble_leg`` (assemble).
"""
