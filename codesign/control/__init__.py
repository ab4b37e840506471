"""Control of the augmented human: periodic signals, impedance laws, parameter bounds.

- :mod:`codesign.control.signals`: constant / step / monotone-cubic periodic signals.
- :mod:`codesign.control.impedance`: step impedance (thesis eq. 5.9-5.12) and the
  assistive torque on the base pitch (thesis 4.1.1), compiled for the rollout.
- :mod:`codesign.control.bounds`: every control (and design) parameter bound, one place.
- :mod:`codesign.control.reflex`: Geyer & Herr 2010's reflex laws of the 14 leg muscles with
  neural delays exact to the control step, and one compiled muscle + reflex step (not yet
  in the rollout; docs/muscles.md "Reflex control").
- :mod:`codesign.control.phase`: the gait phase from the device's own signals (heel strikes
  from a foot contact, or the hip's flexion peak, and the mean of the last strides), with
  the true phase and the phase error of a recorded walk (not yet in the rollout;
  docs/structure.md).
"""
