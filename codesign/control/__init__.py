"""Control of the augmented human: periodic signals, impedance laws, parameter bounds.

- :mod:`codesign.control.signals`: constant / step / monotone-cubic periodic signals.
- :mod:`codesign.control.impedance`: step impedance (thesis eq. 5.9-5.12) and the
  assistive torque on the base pitch (thesis 4.1.1), compiled for the rollout.
- :mod:`codesign.control.bounds`: every control (and design) parameter bound, one place.
"""
