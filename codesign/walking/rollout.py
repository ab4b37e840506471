"""The one rollout interface: build the parameters, the initial contact modes and run a
walking rollout under any contact model (``RolloutSettings.contact_model``).

``"hard"`` (the default) is the time-stepping rollout (:mod:`codesign.walking.stepping`),
``"soft_step"`` the same rollout with the soft penalty law solved in each step;
``"hard_event"`` (exact event-driven contact switching, the thesis's simulator) and
``"soft"`` (penalty contacts) are the event-driven peers
(:mod:`codesign.walking.rollout_event`). All four take the same
:class:`~codesign.walking.rollout_base.RolloutSettings`, run the same controller and the
same fall / drift / airborne checks, and return the same
:class:`~codesign.walking.rollout_base.Rollout` with the same status names::

    p = make_params(model, ctrl, settings, standing_hip_height, sites)
    mode0, code = initial_modes(x0, p, lowest_point)
    rollout = run(x0, mode0, p, settings, record_times)

``p`` is a pair (``p.model``: the fixed numbers of the set-up; ``p.data``: what a run
writes), as MuJoCo's MjModel and MjData: :func:`run` resets the data first, so running
a set-up again replays it, and each :class:`Rollout` owns copies of its arrays.
"""

from __future__ import annotations

import numpy as np

from codesign.control.impedance import ControllerArrays
from codesign.control.wearer import DriveArrays
from codesign.dynamics.model import Model
from codesign.interrupts import deferred_signals
from codesign.walking import rollout_event, stepping
from codesign.walking.muscle_wearer import MuscleModel
from codesign.walking.rollout_base import CONTACT_MODELS, CONTACT_SOLVERS, STEPPING_MODELS, Rollout, RolloutSettings

__all__ = ["CONTACT_MODELS", "CONTACT_SOLVERS", "Params", "Rollout", "RolloutSettings", "initial_modes", "make_params",
           "run", "with_muscles"]

Params = stepping.StepParams | rollout_event.EventParams


def make_params(model: Model, ctrl: ControllerArrays, settings: RolloutSettings,
                standing_hip_height: float, site_bodies: tuple[str, ...] = (),
                upright_pitch: float = 0.0, drive: DriveArrays | None = None,
                active_wearer: bool = False) -> Params:
    """The compiled rollout's parameter record for ``settings.contact_model``.

    standing_hip_height: m (the fall and thrown-up checks are relative to it);
    site_bodies: bodies whose joint force is an interaction site (the human hips and
    knees); upright_pitch: rad, the torso pitch the fall check measures from; drive: the
    wearer-space law's (:mod:`codesign.control.wearer`; None: the thesis's law);
    active_wearer: the wearer's own effort is measured (issue 32)."""
    build = stepping.make_params if settings.contact_model in STEPPING_MODELS else rollout_event.make_params
    return build(model, ctrl, settings, standing_hip_height, site_bodies, upright_pitch, drive, active_wearer)


def with_muscles(p: Params, model: Model, muscle: MuscleModel, standing_w: float) -> Params:
    """``p`` with the muscle wearer ``muscle`` (standing rate ``standing_w``, W): the
    stepping rollout steps it once per step, the event-driven ones on its clock."""
    add = stepping.with_muscles if isinstance(p, stepping.StepParams) else rollout_event.with_muscles
    return add(p, model, muscle, standing_w)


def initial_modes(x0: np.ndarray, p: Params, strike: int) -> tuple[np.ndarray, int]:
    """(contact modes int64[c], code): all inactive for time stepping (the first step
    settles the contacts); the event-driven models' plastic impact of the point ``strike``
    and mode search otherwise (x0 is updated in place). code 0: consistent modes."""
    if isinstance(p, stepping.StepParams):
        return np.zeros(p.model.arrays.contact_body.shape[0], dtype=np.int64), 0
    return rollout_event.initial_modes(x0, p, strike)


def run(x0: np.ndarray, mode0: np.ndarray, p: Params, settings: RolloutSettings,
        record_times: np.ndarray | None = None, t0: float = 0.0) -> Rollout:
    """Simulate from (x0, mode0) to settings.max_time (compiled); never raises for a
    failing design (the status says what happened). record_times: float64[k] (s) at which
    the state, contact modes and forces are recorded. ``t0`` (s, stepping model only): the
    time of x0 on the controller's clock; max_time stays the end time. The run starts from
    a reset data record (``stepping.reset_data``, ``rollout_event.reset_data``); the
    result owns its arrays. A Ctrl-C or SIGTERM
    during the (uninterruptible) compiled rollout acts once it has returned
    (:func:`~codesign.interrupts.deferred_signals`)."""
    if not isinstance(p, stepping.StepParams) and t0 != 0.0:
        raise ValueError(f"t0 = {t0}: a start time needs the stepping model (contact_model 'hard' or 'soft_step')")
    with deferred_signals():
        if isinstance(p, stepping.StepParams):
            return stepping.run(x0, p, settings, record_times, t0)
        return rollout_event.run(x0, mode0, p, settings, record_times)
