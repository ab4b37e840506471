"""Per-phase cycle counters compiled into the rollouts (issue 16: profile, don't guess).

:func:`cycles` reads the processor's cycle counter (LLVM's ``readcyclecounter``: the TSC
on x86-64, a few ns per read) from compiled code; a rollout adds the difference around
each phase to a ``int64[N_PHASES]`` array of its workspace (:func:`add`). The counts are
reference cycles (the TSC ticks at a fixed rate), not seconds. A phase interval longer than
``PREEMPTED`` cycles (~0.4 ms at 2.6 GHz; a phase takes microseconds) held a context
switch: it is left out, so that the profile of a loaded machine reads like a quiet one's
(the share of steps left out is small: a switch lands in one of thousands of steps). On a machine whose LLVM target has no
cycle counter the intrinsic returns 0 and the shares read 0.
"""

from __future__ import annotations

from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

# phases of the stepping walking rollout (codesign.walking.stepping, codesign.dynamics.timestep)
CONTROL = 0        # controller torques and implicit gains
DYNAMICS = 1       # kinematics, mass matrix, bias forces, passive forces
FACTOR = 2         # M~ = M + hD + h^2 K, its Cholesky factor, the free velocity
ROWS = 3           # loop and contact rows, the step's kept points
DELASSUS = 4       # M~^-1 J^T, J M~^-1 J^T, the loop Schur complement, W and r
CONTACT = 5        # the contact problem (active set / Gauss-Seidel)
UPDATE = 6         # impulses into velocities and positions, forces, slip
OBSERVE = 7        # checks and metric samples
N_PHASES = 8
PHASE_NAMES = ("control", "dynamics", "factor", "rows", "delassus", "contact", "update", "observe")


@intrinsic
def cycles(typingctx):
    """int64: the processor's cycle counter (compiled code only)."""
    sig = types.int64()

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter")
        return builder.call(fn, [])

    return sig, codegen


PREEMPTED = 1 << 20


@njit(cache=True, inline="always")
def add(counters, phase, start):
    """Add the cycles since ``start`` to counters[phase] (unless a context switch is in
    them, see the module docstring); returns the counter now, the next phase's start."""
    now = cycles()
    if now - start < PREEMPTED:
        counters[phase] += now - start
    return now
