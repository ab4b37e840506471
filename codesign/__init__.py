"""Co-design of wearable lower-limb exoskeletons: topology, morphology and control.

Stages (see README.md): topologies -> morphology -> screening -> walking evaluation ->
Metamorphic PSO on Dask -> reports and freezing.

Importing the package points numba's on-disk cache at a directory named after a hash of
the package's sources (:func:`_numba_cache_dir`): numba links a compiled function's
callees from other modules into its cached machine code but checks only the function's
own file for changes, so an edit of, say, the engine would otherwise leave every cached
rollout running the old engine.
"""

import hashlib
import os
import sys
from pathlib import Path

__version__ = "0.1.0"


def source_digest() -> bytes:
    """SHA-256 over the package's .py files (path and bytes, sorted; generated
    specializations excluded): the key of every on-disk compiled-code cache."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if "_specialized" in path.parts:
            continue
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.digest()


def _numba_cache_dir() -> Path:
    """``$CODESIGN_CACHE_DIR/numba/<hash>`` (default ``~/.cache/codesign``), the hash of
    :func:`source_digest`."""
    base = Path(os.environ.get("CODESIGN_CACHE_DIR", Path.home() / ".cache" / "codesign"))
    return base / "numba" / source_digest().hex()[:16]


if "NUMBA_CACHE_DIR" not in os.environ:
    _dir = str(_numba_cache_dir())
    if "numba" in sys.modules:   # numba already imported: its config is read already
        sys.modules["numba"].config.CACHE_DIR = _dir
    else:
        os.environ["NUMBA_CACHE_DIR"] = _dir
