"""The human alone on Geyer & Herr 2010's reflex-controlled muscles, its reflexes searched
(issue 45, item 4): the walking problem with ``device = "none"`` and ``wearer_model =
"muscles"``.

The space is the reflex parameters (``reflex.<name>``, each within its physical range,
:data:`codesign.control.reflex.REFLEX_RANGES`); particles start within +-15 % of the
published values (:data:`codesign.control.reflex.PARAMETER_SOURCES`), where the model is
meant to walk, not anywhere in the ranges. The muscles replace the impedance law's torque
at every hip, knee and ankle row, so the law a human design names is not searched: the
decode sets it to its bounds' midpoints (it only fills the controller's slots; a design
file stays complete and replays as any other). The stages are the human gait's
(:func:`codesign.problems.objectives.human_stages`) with the gait lab's stance knee
(:data:`KNEE_STANCE_PEAK_MIN_DEG` to :data:`KNEE_STANCE_PEAK_MAX_DEG`) before the last,
which prices effort as people pay it: ``metabolic_cost`` (J/(kg m)) instead of the torque
RMS.
"""

from __future__ import annotations

from typing import Mapping

from codesign.control.reflex import PARAMETER_SOURCES, REFLEX_PREFIX, REFLEX_RANGES
from codesign.errors import UserError
from codesign.objectives import Objective
from codesign.problems import human_gait as hg
from codesign.problems import objectives as ob
from codesign.problems.options import ProblemOptions
from codesign.types import Parameter
from codesign.walking import Design

# the share of a published value particles start within
START_SPREAD = 0.15
# issue 45's stance knee flexion for a gait a gait lab accepts: 10-25 deg (Winter's nominal
# gait peaks at 16-18 deg in loading response), each leg's mean over its stances
KNEE_STANCE_PEAK_MIN_DEG = 10.0
KNEE_STANCE_PEAK_MAX_DEG = 25.0


def reflex_parameters() -> tuple[Parameter, ...]:
    """The searched reflexes: every parameter of REFLEX_RANGES within it, started within
    +-START_SPREAD of its published value (a zero within +-START_SPREAD x 0.1 of the range)."""
    published = {row.name: row.value for row in PARAMETER_SOURCES}
    parameters = []
    for name, (low, high) in REFLEX_RANGES.items():
        value = published[name]
        half = START_SPREAD * (abs(value) if value != 0.0 else 0.1 * (high - low))
        parameters.append(Parameter(REFLEX_PREFIX + name, low, high, max(low, value - half), min(high, value + half)))
    return tuple(parameters)


def reflex_error(params: Mapping[str, float]) -> str | None:
    """The first reflex parameter (:data:`REFLEX_RANGES`) that ``params`` is missing, gives
    as no finite number or outside its range, in one line; None when all are fine."""
    return hg.parameter_error(params, {REFLEX_PREFIX + name: bounds for name, bounds in REFLEX_RANGES.items()})


def reflex_names() -> set[str]:
    """The reflex parameters' names (``reflex.<name>``, :data:`REFLEX_RANGES`): a
    muscle-driven human's (or wearer's) law; the impedance law it carries is unused."""
    return {REFLEX_PREFIX + name for name in REFLEX_RANGES}


def muscle_stages() -> tuple[Objective, ...]:
    """The human gait's stages, each leg's loading-response knee flexion at least
    KNEE_STANCE_PEAK_MIN_DEG and at most KNEE_STANCE_PEAK_MAX_DEG, then the net metabolic
    cost (J/(kg m), minimized) in place of the torque RMS."""
    human = ob.human_stages()
    return human[:-1] + (Objective("knee_flexion_stance_peak_min_deg", "maximize", KNEE_STANCE_PEAK_MIN_DEG),
                         Objective("knee_flexion_stance_peak_deg", "minimize", KNEE_STANCE_PEAK_MAX_DEG),
                         Objective("metabolic_cost", "minimize"))


def unused_law(options: ProblemOptions) -> dict[str, float]:
    """The impedance law a muscle-driven human carries unused: its bounds' midpoints."""
    bounds = hg.human_gait_layout(options.torso_feedback).bounds()
    return {name: 0.5 * (low + high) for name, (low, high) in bounds.items()}


def decode(groups: tuple[str, ...], params: Mapping[str, float], settings, options: ProblemOptions) -> Design:
    """The muscle-driven human of a candidate: its reflexes (ValueError naming one that is
    missing, not finite or outside its range) and the unused law."""
    bad = reflex_error(params)
    if bad is not None:
        raise ValueError(bad)
    return Design({**unused_law(options), **{name: float(params[name]) for name in sorted(reflex_names())}})


def encode(design: Design) -> tuple[tuple[str, ...], dict[str, float]]:
    """``WalkingHooks.encode``: a muscle-driven human's design under the search's names --
    its reflexes (no groups); the unused law its file carries is not searched. UserError,
    one line, for a design without every reflex (an impedance human's) or one outside its
    range."""
    missing = sorted(reflex_names() - set(design.params))
    if missing:
        raise UserError(f"no {missing[0]}; expected a muscle-driven human's design (its {len(reflex_names())} "
                        f"{REFLEX_PREFIX}* parameters)")
    bad = reflex_error(design.params)
    if bad is not None:
        raise UserError(bad)
    return (), {name: float(design.params[name]) for name in sorted(reflex_names())}
