"""The specialized integrator equals the generic one bit for bit, and a new process
loads it from numba's disk cache instead of compiling it again."""

import json
import subprocess
import sys

import numpy as np

from codesign.analysis import walkers
from codesign.dynamics import hybrid
from codesign.dynamics.specialize import specialize

RIMLESS = (walkers.rimless_flow, walkers.rimless_guards, walkers.rimless_jump,
           hybrid.observe_nothing)


def run_rimless(integrate, *system):
    model = walkers.rimless_model()
    x0 = np.array([-np.pi / 6, 0.5])
    mode0 = np.zeros(1, np.int64)
    record_times = np.linspace(0.0, 5.0, 11)
    terminal = np.zeros(1, np.int64)
    s = hybrid.settings("dopri5", rtol=1e-10, atol=1e-10)
    return integrate(*system, x0, mode0, 0.0, 5.0, model.p, record_times, terminal, s)


def test_specialized_equals_generic_bit_for_bit():
    generic = run_rimless(hybrid.integrate, *RIMLESS)
    special = run_rimless(specialize(*RIMLESS))
    assert generic.status == special.status == hybrid.SUCCESS
    assert int(special.n_events) >= 2  # spoke strikes happened: the jump path is exercised
    for a, b in zip(generic, special):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


PROBE = """
import json
import numpy as np
from tests_probe import run
import codesign.dynamics.specialize as sp
from codesign.analysis import walkers
from codesign.dynamics import hybrid
f = sp.specialize(walkers.rimless_flow, walkers.rimless_guards, walkers.rimless_jump,
                  hybrid.observe_nothing)
out = run(f)
print(json.dumps({
                  "hits": sum(f.stats.cache_hits.values()), "misses": sum(f.stats.cache_misses.values()),
                  "x": out.x.tolist()}))
"""


def test_new_process_loads_from_disk_cache(tmp_path):
    specialize(*RIMLESS)  # make sure the module exists and is compiled once
    run_rimless(specialize(*RIMLESS))
    (tmp_path / "tests_probe.py").write_text(
        "import numpy as np\nfrom codesign.analysis import walkers\nfrom codesign.dynamics import hybrid\n"
        "def run(f):\n"
        "    model = walkers.rimless_model()\n"
        "    return f(np.array([-np.pi / 6, 0.5]), np.zeros(1, np.int64), 0.0, 5.0, model.p,\n"
        "             np.linspace(0.0, 5.0, 11), np.zeros(1, np.int64),\n"
        "             hybrid.settings('dopri5', rtol=1e-10, atol=1e-10))\n")
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            cwd=tmp_path, check=True)
    probe = json.loads(result.stdout.strip().splitlines()[-1])
    assert probe["hits"] >= 1 and probe["misses"] == 0, probe
    expected = run_rimless(specialize(*RIMLESS)).x
    np.testing.assert_array_equal(np.array(probe["x"]), expected)
