"""What the event-driven rollouts (:mod:`codesign.walking.rollout_event`) read off their
contact workspace (``codesign.dynamics.contact_event.ContactWorkspace`` after a solve):
which feet are on the ground, the total normal ground force (or, after an impact, the
total normal impulse), and which loaded feet slide. Compiled; ``m`` the model's arrays,
``cw`` the contact workspace, ``mode`` int64[c] the contact modes, ``contact_foot``
int64[c] each point's foot (0 right, 1 left)."""

from __future__ import annotations

import numpy as np
from numba import njit

from codesign.dynamics import contact_rows as cr
from codesign.dynamics.kinematics import point_kinematics
from codesign.walking import accumulators as ac
from codesign.walking import metrics as mt


@njit(cache=True)
def foot_contacts(mode, contact_foot, out):
    """Hard contact: out[2] = 1 for a foot with an active point, else 0."""
    out[0] = 0.0
    out[1] = 0.0
    for i in range(mode.shape[0]):
        if mode[i] != cr.INACTIVE:
            out[contact_foot[i]] = 1.0


@njit(cache=True)
def soft_foot_contacts(m, cw, contact_foot, out):
    """Soft contact: a foot is on the ground while one of its points carries normal force."""
    nl = 2 * m.loop_body_a.shape[0]
    out[0] = 0.0
    out[1] = 0.0
    for i in range(contact_foot.shape[0]):
        if cw.lam[nl + i] > 0.0:
            out[contact_foot[i]] = 1.0


@njit(cache=True)
def normal_total(m, cw, c):
    """The contact points' total normal ground force (N; flat ground: the vertical ground
    reaction) from the last solve: the soft springs', or the hard contact's multipliers
    (zero on an inactive point); after a hard impact, the same sum of its impulses (N s)."""
    nl = 2 * m.loop_body_a.shape[0]
    total = 0.0
    for i in range(c):
        if cw.lam[nl + i] > 0.0:
            total += cw.lam[nl + i]
    return total


@njit(cache=True)
def foot_slip_now(m, w, cw, s, mode, wm):
    """(feet loaded, feet sliding) (:func:`codesign.walking.accumulators.foot_slip`) at the
    state of the last evaluate (w holds its kinematics): hard contact loads its active
    points (tangential velocities from its contact rows), soft contact the points with a
    normal force (velocities from the points' kinematics, along the ground)."""
    nl = 2 * m.loop_body_a.shape[0]
    c = mode.shape[0]
    if s[cr.CONTACT_MODEL] != cr.SOFT:
        return ac.foot_slip(mode, cw.vel[nl + c:nl + 2 * c], wm.contact_foot, mt.SLIP_SPEED)
    loaded = np.zeros(c, dtype=np.int64)
    ut = np.zeros(c)
    buf = np.empty(6)
    sa = np.sin(s[cr.SLOPE])
    ca = np.cos(s[cr.SLOPE])
    for i in range(c):
        if cw.lam[nl + i] > 0.0:
            loaded[i] = 1
            point_kinematics(w, m.contact_body[i], m.contact_xz[i, 0], m.contact_xz[i, 1], buf)
            ut[i] = ca * buf[2] + sa * buf[3]
    return ac.foot_slip(loaded, ut, wm.contact_foot, mt.SLIP_SPEED)
