"""The metric registry: the accumulator's slots, the reported names and the docs' table all
follow from it."""

import math
import re
from pathlib import Path

import numpy as np

from codesign.walking import METRICS
from codesign.walking import accumulators as ac
from codesign.walking import metrics as mt
from codesign.walking.setup import SITE_NAMES

DOCS = Path(__file__).resolve().parents[2] / "docs" / "walking.md"


def test_slots_are_numbered_by_their_order_of_declaration():
    """Every header slot is a module constant equal to its position; none twice; the
    per-site slots likewise; the layout is the one the accumulators were written for."""
    assert len(set(mt.HEADER_SLOTS)) == len(mt.HEADER_SLOTS) == mt.HEADER
    for i, name in enumerate(mt.HEADER_SLOTS):
        assert getattr(mt, name) == i, name
    for i, name in enumerate(mt.SITE_SLOT_NAMES):
        assert getattr(mt, name) == i, name
    assert mt.SITE_SLOTS == 3 and mt.LIFTOFF_T + 1 == mt.LIFTOFF_L
    assert mt.PH_OFF_L == mt.HEADER - 1 and mt.PH_OFF_R + 1 == mt.PH_OFF_L and mt.PH_N_R + 1 == mt.PH_N_L
    # the accumulator's length: header, 3 slots per site, the GRF ring, the gait samples,
    # the phase rows (2 per gait sample) and each leg's heel strikes (0.07 s / 0.2 s + 2),
    # the cuff window (2 attachments: 4 channels, each a bin, a last force and 30 ring slots)
    acc = mt.new_accumulator(4, 5.0, 30, 1e-3, 7, n_cuffs=2)
    assert acc.shape == (mt.HEADER + 3 * 4 + 30 + 8 * 7 + 2 * 7 + 2 * 2 + 4 * (2 + 30),)
    assert acc[mt.GRF_RING] == mt.HEADER + 12
    assert acc[mt.GAIT_ROWS] == mt.HEADER + 12 + 30 and acc[mt.GAIT_CAP] == 7
    assert acc[mt.PH_ROWS] == acc[mt.GAIT_ROWS] + 8 * 7 and acc[mt.PH_STRIKES] == acc[mt.PH_ROWS] + 2 * 7
    assert acc[mt.PH_STRIKE_CAP] == 2 and np.isnan(acc[mt.PH_OFF_R]) and np.isnan(acc[mt.PH_OFF_L])
    assert acc[mt.CUFF_ROWS] == acc[mt.PH_STRIKES] + 2 * 2 and acc[mt.CUFF_STEPS] == 30
    assert acc[mt.T_START] == 5.0 and acc[mt.LIFTOFF_R] == acc[mt.LIFTOFF_L] == -1e9


def test_reported_names_follow_the_registry_and_finalize_computes_each():
    """codesign.walking.METRICS is the registry's names, sites expanded; finalize returns
    exactly the non-design ones (a model with motors, in the registry's order), and the
    design metrics are the set-up's."""
    names = mt.metric_names(SITE_NAMES)
    assert METRICS == names and len(set(names)) == len(names)
    assert "hip_r_force_peak" in names and "<site>_force_peak" not in names
    acc = mt.new_accumulator(len(SITE_NAMES), 0.0)
    acc[mt.A_MOTORS] = acc[mt.A_SAMPLES] = 1.0           # a model with motors
    acc[mt.A_TAU2] = acc[mt.TRANSMISSION_PEAK] = 1.0      # that delivered torque, through a drive
    acc[mt.W_JOINTS], acc[mt.W_SAMPLES], acc[mt.W_T_PREV] = 6.0, 2.0, 1.0   # an active wearer
    acc[mt.X_LAST] = 1.0
    out = mt.finalize(acc, time=1.0, n_joints=1, site_names=SITE_NAMES, total_mass=70.0,
                      wearer_mass=70.0, stride_frequency=0.9)
    design = [m.name for m in mt.REGISTRY if m.finalizer == "build_setup"]
    strides = [m.name for m in mt.REGISTRY if m.finalizer.startswith("stride_metrics")]
    assert strides == ["stride_r_hip", "stride_r_knee", "stride_r_ankle"]
    contact = [m.name for m in mt.REGISTRY if m.finalizer == "finalize_contact"]
    assert list(mt.finalize_contact(1000, 3, 1)) == contact
    assert mt.finalize_contact(1000, 3, 1) == {"contact_unsolved_fraction": 0.003,
                                               "contact_energy_error_steps": 1.0}
    assert list(out) == [n for n in names if n not in design + strides + contact]
    assert design == ["longest_segment", "singularity", "added_mass", "com_shift", "actuator_mass"]
    for m in mt.REGISTRY:
        assert m.unit and m.definition and "\n" not in m.definition, m.name
        assert m.finalizer.split(" ")[0] in ("finalize", "finalize_gait", "finalize_wearer", "finalize_contact",
                                             "finalize_muscles", "build_setup", "stride_metrics",
                                             "finalize_phase"), m.name
        source = m.accumulator.split(" ")[0]
        assert source in ("Rollout.time", "Rollout.contact", "setup.design_metrics") or hasattr(ac, source), m.name
    gait = mt.finalize_gait(acc, 700.0, [])
    assert set(gait) == {m.name for m in mt.REGISTRY if m.finalizer == "finalize_gait"}
    assert all(math.isnan(v) for v in gait.values())      # nothing sampled


def test_the_docs_metric_table_is_the_registrys():
    """docs/walking.md's metric table is metrics.metric_table(): regenerate it (between
    the metric-table markers) when the registry changes."""
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(r"<!-- metric-table:start -->\n(.*?)<!-- metric-table:end -->", text, re.S)
    assert found, "docs/walking.md lacks the metric-table markers"
    assert found.group(1) == mt.metric_table()
    rows = [line for line in found.group(1).splitlines() if line.startswith("| `")]
    assert len(rows) == len(mt.REGISTRY)
    assert np.all([f"`{m.name}`" in row for m, row in zip(mt.REGISTRY, rows)])
