"""A walking problem is a set of typed options; a registered walking name is a preset.

The spec's ``[problem]`` table takes, beside ``name``, the options below; they are read
once, on entry, into the frozen :class:`ProblemOptions` (an unknown key, a wrong type or
a combination that makes no sense is one :class:`~codesign.errors.UserError` line naming
it and why), and ONE factory (:func:`codesign.problems.compose.walking_problem`) builds
the space, the stages and the metrics from that record. ``name`` picks a preset
(:data:`PRESETS`: ``exo_codesign`` is ``ProblemOptions()``, ``exo_codesign_wearer_drive``
is ``control = "wearer", drivetrains = "searched"`` ...), the other keys change it.

Options (defaults: the thesis's chapter-5 co-design, ``exo_codesign``)::

    device         = "linkage" | "none"        a co-designed linkage worn by the human, the
                   | "ideal"                   unaugmented human (chapter 4), or an ideal
                                               device on an active wearer (Dembia et al.
                                               2017): no linkage, no mass (a real device's
                                               as ``evaluation.device_loads``), its
                                               assistance profile delivered at the wearer's
                                               joints themselves (``assisted_joints``),
                                               unbounded, or with ``drivetrains =
                                               "searched"`` by a catalog unit per joint
                                               (``assist.<joint>.motor``, its mass at its
                                               seat); searched alone (``search =
                                               "device"``) or with the wearer's law
                                               (``"wearer_assist"``)
    control        = "actuator" | "wearer"     the thesis's law (each actuated joint its own
                                               law in its own coordinates) or the law in the
                                               wearer's joint space (hip, knee, ankle)
    torso_feedback = false | true              the torso-pitch term (the actuated pair's
                                               under "actuator", the hip's under "wearer")
    drivetrains    = "rating" | "searched"     the spec's actuator rating, or each actuated
                                               joint's motor and stage ratio searched
    wearer         = "passive" | "active"      the wearer moved by the device, or walking
                                               with its own law (the device assists)
    search         = "device" | "wearer"       what the swarm moves: the device (and, for a
                   | "wearer_assist"           passive wearer, the control), the active
                                               wearer's law with the device frozen, or the
                                               wearer's law and the frozen device's
                                               assistance profile together (the wearer
                                               adapts as the profile is tuned: SCONE's
                                               controller-and-device co-optimization)
    device_design  = "PATH"                    the frozen device (search = "wearer" or
                                               "wearer_assist")
    wearer_design  = "PATH"                    the frozen wearer's law (wearer = "active",
                                               search = "device")
    wearer_model   = "impedance" | "muscles"   what drives the human's hip, knee and ankle:
                                               the impedance law, or Geyer & Herr 2010's
                                               reflex-controlled muscles (issue 45; the
                                               human alone or an active wearer; it sets
                                               the evaluation's ``wearer_model``)
    assisted_joints = "hip_knee" | "hip_ankle"  the wearer joints the device assists: a
                    | "knee_ankle"             linkage's hip and knee, or an ideal
                                               device's pair with the ankle (an ankle
                                               exoskeleton: "hip_ankle", the hip's peaks
                                               frozen at 0); it sets the evaluation's
                                               ``assisted_joints``

``device_design`` and ``wearer_design`` name files, not the space: they travel to the
problem's settings as the ``[evaluation]`` keys of the same name (where specs written
before the options named them; :func:`settings_table`), and a problem's key
(:func:`problem_key`) leaves them out. A combination of options that no preset spells is
a problem of its own, keyed ``walking(control="wearer", torso_feedback=true)`` (the
options that differ from the defaults): that key is what a run stores and what workers
rebuild the problem from (:func:`options_of_key`).

Adding an option: its field and check here, its effect in
:mod:`codesign.problems.compose` (docs/ARCHITECTURE.md, "Where a new setting, metric or
problem option goes").
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from dataclasses import dataclass
from typing import Any, Mapping

from codesign.errors import UserError, shown

# option -> its allowed values (bools: (False, True); paths: None)
CHOICES: dict[str, tuple | None] = {
    "device": ("linkage", "none", "ideal"),
    "control": ("actuator", "wearer"),
    "torso_feedback": (False, True),
    "drivetrains": ("rating", "searched"),
    "wearer": ("passive", "active"),
    "search": ("device", "wearer", "wearer_assist"),
    "device_design": None,
    "wearer_design": None,
    "wearer_model": ("impedance", "muscles"),
    "assisted_joints": ("hip_knee", "hip_ankle", "knee_ankle"),
}
FILE_OPTIONS = ("device_design", "wearer_design")   # frozen designs: settings, not the space
LATER_OPTIONS = {"wearer_model": "impedance", "assisted_joints": "hip_knee"}   # written only when changed
COMPOSED = "walking"     # the name of a problem whose options no preset spells


@dataclass(frozen=True)
class ProblemOptions:
    """What a walking problem is (module docstring); the defaults are ``exo_codesign``."""

    device: str = "linkage"
    control: str = "actuator"
    torso_feedback: bool = False
    drivetrains: str = "rating"
    wearer: str = "passive"
    search: str = "device"
    device_design: str | None = None
    wearer_design: str | None = None
    wearer_model: str = "impedance"
    assisted_joints: str = "hip_knee"

    def space(self) -> "ProblemOptions":
        """The options without the frozen designs' files: what the space is built from."""
        return dataclasses.replace(self, device_design=None, wearer_design=None)

    def to_json(self) -> dict:
        """Every option (files only when given; ``wearer_model`` and ``assisted_joints``
        only when not their defaults, so files written before them read the same), as a
        design file's ``"problem"`` holds them."""
        return {k: v for k, v in dataclasses.asdict(self).items()
                if v is not None and not (k in LATER_OPTIONS and v == LATER_OPTIONS[k])}


# every registered walking name: a set of options (the anthropomorphic baseline is not one:
# a human on a lumped model of another run's design, problems.baseline)
PRESETS: dict[str, ProblemOptions] = {
    "exo_codesign": ProblemOptions(),
    "exo_codesign_balance": ProblemOptions(torso_feedback=True),
    "exo_codesign_wearer": ProblemOptions(control="wearer"),
    "exo_codesign_wearer_drive": ProblemOptions(control="wearer", drivetrains="searched"),
    "exo_codesign_drive": ProblemOptions(drivetrains="searched"),
    "exo_codesign_wearer_balance_drive": ProblemOptions(control="wearer", torso_feedback=True,
                                                        drivetrains="searched"),
    "exo_assist": ProblemOptions(control="wearer", drivetrains="searched", wearer="active"),
    "exo_assist_wearer": ProblemOptions(control="wearer", torso_feedback=True, wearer="active",
                                        search="wearer"),
    "exo_assist_ideal": ProblemOptions(device="ideal", control="wearer", wearer="active"),
    "human_gait": ProblemOptions(device="none", control="wearer", search="wearer"),
    "human_gait_balance": ProblemOptions(device="none", control="wearer", torso_feedback=True,
                                         search="wearer"),
}


def _value(key: str, value: Any, where: str) -> Any:
    """One option's value checked against :data:`CHOICES` (UserError naming ``where``)."""
    choices = CHOICES[key]
    if choices is None:
        if not isinstance(value, str) or not value.strip():
            raise UserError(f"{where}.{key}: got {shown(value)}; expected the path of a design JSON file")
        return value
    if isinstance(choices[0], bool):
        if not isinstance(value, bool):
            raise UserError(f"{where}.{key}: got {shown(value)}; expected true or false")
        return value
    if not isinstance(value, str) or value not in choices:
        raise UserError(f"{where}.{key}: got {shown(value)}; expected one of "
                        + ", ".join(f'"{c}"' for c in choices))
    return value


def _no_frozen_designs(o: ProblemOptions, where: str, given_with: str, why: str) -> None:
    """UserError (one line) for a frozen design option (FILE_OPTIONS) set where only an
    active wearer takes one."""
    for key in FILE_OPTIONS:
        if getattr(o, key) is not None:
            raise UserError(f"{where}.{key}: given with {given_with}; expected it only with "
                            f"wearer = \"active\"{why}")


def check_combination(options: ProblemOptions, where: str = "problem", files: bool = True) -> None:
    """UserError (one line naming the options and why) for a combination that makes no
    sense. A frozen device named in the ``[evaluation]`` table of a spec written before
    the options counts (:func:`parse_options` moved it into ``options``); ``files``
    False: a problem's key, whose frozen designs are its settings' (not checked)."""
    o = options
    if o.assisted_joints != "hip_knee" and o.device != "ideal":
        raise UserError(f"{where}.assisted_joints: {shown(o.assisted_joints)} with device = {shown(o.device)}; "
                        "expected \"hip_knee\" (a linkage assists the hip and knee; another pair only with "
                        "device = \"ideal\")")
    if o.wearer_model == "muscles" and o.device != "none" and o.wearer != "active":
        raise UserError(f"{where}.wearer_model: \"muscles\" with a passive wearer; expected device = \"none\" "
                        "or wearer = \"active\" (a passive wearer's joints are moved by the device)")
    if o.device == "none":
        for key, default in (("drivetrains", "rating"), ("wearer", "passive"), ("search", "wearer"),
                             ("control", "wearer")):
            if getattr(o, key) != default:
                raise UserError(f"{where}.{key}: {shown(getattr(o, key))} with device = \"none\"; expected "
                                f"{shown(default)} (the unaugmented human has no device: its own hip, knee "
                                "and ankle law is searched)")
        _no_frozen_designs(o, where, 'device = "none"', ' (a device and an active wearer)')
        return
    if o.device == "ideal":
        for key, default in (("wearer", "active"), ("control", "wearer"), ("torso_feedback", False)):
            if getattr(o, key) != default:
                raise UserError(f"{where}.{key}: {shown(getattr(o, key))} with device = \"ideal\"; expected "
                                f"{shown(default)} (an ideal device has no linkage: its assistance profile, at an "
                                "active wearer's own joints, is what is searched)")
        if o.search == "wearer":
            raise UserError(f"{where}.search: \"wearer\" with device = \"ideal\"; expected \"device\" (the "
                            "profile) or \"wearer_assist\" (the profile and the wearer's law together)")
        if o.device_design is not None:
            raise UserError(f"{where}.device_design: given with device = \"ideal\"; expected none (the ideal "
                            "device is its assistance profile, which is searched)")
        return
    if o.wearer == "passive":
        if o.search != "device":
            raise UserError(f"{where}.search: {shown(o.search)} with wearer = \"passive\"; expected \"device\" "
                            "(a passive wearer has no law of its own to search)")
        _no_frozen_designs(o, where, 'wearer = "passive"', "")
        return
    if o.control != "wearer":
        raise UserError(f"{where}.control: \"actuator\" with wearer = \"active\"; expected \"wearer\" (an active "
                        "wearer's device assists in the wearer's joint space)")
    if o.search == "device":
        if o.torso_feedback:
            raise UserError(f"{where}.torso_feedback: true with wearer = \"active\" and search = \"device\"; "
                            "expected false (the frozen wearer's law, wearer_design, carries its own torso term)")
        if o.device_design is not None:
            raise UserError(f"{where}.device_design: given with search = \"device\"; expected it only with "
                            "search = \"wearer\" (the device is what is searched)")
        return
    if o.device_design is None and files:
        raise UserError(f"{where}.device_design: missing with wearer = \"active\" and search = {shown(o.search)}; "
                        "expected the path of the frozen device (an exo_assist design)")
    if o.wearer_design is not None:
        raise UserError(f"{where}.wearer_design: given with search = {shown(o.search)}; expected none (the "
                        "wearer's law is what is searched)")
    if o.drivetrains != "rating":
        raise UserError(f"{where}.drivetrains: {shown(o.drivetrains)} with search = {shown(o.search)}; expected "
                        "\"rating\" (the frozen device keeps its own drivetrains)")


def parse_options(table: Mapping[str, Any], where: str = "problem",
                  evaluation: Mapping[str, Any] | None = None, files: bool = True) -> tuple[str, ProblemOptions]:
    """(preset name, options) of a ``[problem]`` table (or a design file's ``"problem"``):
    ``name`` a preset (:data:`PRESETS`) or ``"walking"`` (the defaults), the other keys
    options over it. ``evaluation``: the spec's ``[evaluation]`` table, whose
    ``device_design``/``wearer_design`` (the spelling before the options) count as the
    options' (the same file named in both places is fine, two different ones are not).
    UserError, one line, for an unknown name or key, a wrong type or a bad combination."""
    if not isinstance(table, Mapping):
        raise UserError(f"{where}: got {shown(table)}; expected a table with name = \"...\" and options")
    name = table.get("name")
    if name not in PRESETS and name != COMPOSED:
        raise UserError(f"{where}.name: {shown(name)}; expected a walking problem with options: "
                        + ", ".join(sorted(PRESETS)) + f" or {COMPOSED}")
    values = {}
    for key, value in table.items():
        if key == "name":
            continue
        if key not in CHOICES:
            near = difflib.get_close_matches(str(key), list(CHOICES), 1)
            raise UserError(f"{where}.{key}: unknown option{f' (did you mean {near[0]}?)' if near else ''}; "
                            "expected one of name, " + ", ".join(CHOICES))
        values[key] = _value(key, value, where)
    for key in FILE_OPTIONS:
        legacy = (evaluation or {}).get(key)
        if legacy is not None and values.get(key, legacy) != legacy:
            raise UserError(f"evaluation.{key}: {shown(legacy)} and {where}.{key} {shown(values[key])}; "
                            "expected the frozen design named once (in [problem])")
        if legacy is not None and isinstance(legacy, str):
            values.setdefault(key, legacy)
    options = dataclasses.replace(PRESETS.get(name, ProblemOptions()), **values)
    check_combination(options, where, files)
    return name, options


def problem_key(options: ProblemOptions) -> str:
    """The name a problem with these options is registered, stored and rebuilt under: the
    preset that spells them (the frozen designs' files left out), else
    ``walking(option=value, ...)`` with the options that differ from the defaults."""
    space = options.space()
    for name, preset in PRESETS.items():
        if preset == space:
            return name
    default = ProblemOptions()
    changed = [f"{f.name}={json.dumps(getattr(space, f.name))}" for f in dataclasses.fields(space)
               if getattr(space, f.name) != getattr(default, f.name)]
    return f"{COMPOSED}({', '.join(changed)})"


def options_of_key(key: str) -> ProblemOptions | None:
    """The options of a key :func:`problem_key` wrote (None: not a walking problem's key)."""
    if key in PRESETS:
        return PRESETS[key]
    if not (key.startswith(COMPOSED + "(") and key.endswith(")")):
        return None
    values = {}
    for part in filter(None, (p.strip() for p in key[len(COMPOSED) + 1:-1].split(","))):
        field, _, text = part.partition("=")
        try:
            values[field] = json.loads(text)
        except json.JSONDecodeError:
            return None
    try:
        _name, options = parse_options({"name": COMPOSED, **values}, "problem", files=False)
    except UserError:
        return None
    return options


def settings_table(options: ProblemOptions | None, evaluation: Mapping[str, Any]) -> dict:
    """The ``[evaluation]`` table a problem's ``parse_settings`` reads: ``evaluation`` with
    the frozen designs the options name (``device_design``, ``wearer_design``)."""
    out = dict(evaluation)
    if options is not None:
        out.update((key, getattr(options, key)) for key in FILE_OPTIONS if getattr(options, key) is not None)
    return out


def spec_problem(table: Mapping[str, Any], evaluation: Mapping[str, Any]) -> tuple[str, ProblemOptions | None, dict]:
    """(the problem's key, its options or None, the ``[evaluation]`` table its settings
    parser reads) of a spec's ``[problem]`` table: a walking preset or ``walking`` with
    options is read by :func:`parse_options` (the frozen designs it names join the
    ``[evaluation]`` table); any other name is kept as it is (the driver checks that it is
    registered) and takes no options. UserError, one line."""
    name = table.get("name")
    if name not in PRESETS and name != COMPOSED:
        for key in table:
            if key != "name":
                raise UserError(f"problem.{key}: unknown key for problem {shown(name)} (it takes no options); "
                                f"expected only name, or a walking problem ({', '.join(PRESETS)})")
        return name, None, dict(evaluation)
    _name, options = parse_options(table, "problem", evaluation)
    return problem_key(options), options, settings_table(options, evaluation)
