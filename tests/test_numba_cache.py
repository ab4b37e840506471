"""Two clones of the same sources at different paths share numba's disk cache (issue 34,
item 6): the second loads what the first compiled. Truth: numba's own counters of a
dispatcher (``stats.cache_hits`` / ``cache_misses``) in real processes, one per clone."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "codesign"
PROBE = """
import json, numpy as np
from codesign.dynamics.linalg import ltl_factor
parent = np.array([-1, 0], dtype=np.int64)
L = np.zeros((2, 2))
code = ltl_factor(parent, np.array([[4.0, 2.0], [2.0, 5.0]]), L)
stats = ltl_factor.stats
print(json.dumps({"code": int(code), "L": L.tolist(), "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}))
"""


def probe(clone: Path, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_") or k == "NUMBA_OPT"}
    env.update(PYTHONPATH=str(clone), CODESIGN_CACHE_DIR=str(cache))
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=clone, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_clone_at_another_path_loads_the_kernels_the_first_compiled(tmp_path):
    ignore = shutil.ignore_patterns("__pycache__", "_specialized")
    for name in ("a", "b"):
        shutil.copytree(PACKAGE, tmp_path / name / "codesign", ignore=ignore)
    cache = tmp_path / "cache"
    first = probe(tmp_path / "a", cache)
    second = probe(tmp_path / "b", cache)
    assert (first["hits"], first["misses"]) == (0, 1)       # compiled in clone a
    assert (second["hits"], second["misses"]) == (1, 0)     # loaded in clone b
    # M = L^T L with L lower triangular (the factor of the engine's mass matrix)
    for out in (first, second):
        L = out["L"]
        assert out["code"] == 0
        product = [L[0][0] ** 2 + L[1][0] ** 2, L[1][0] * L[1][1], L[1][1] ** 2]     # L^T L: M00, M01, M11
        assert product == pytest.approx([4.0, 2.0, 5.0], abs=1e-12)
