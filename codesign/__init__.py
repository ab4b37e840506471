"""Co-design of wearable lower-limb exoskeletons: topology, morphology and control.

Stages (see README.md): topologies -> morphology -> screening -> walking evaluation ->
Metamorphic PSO on Dask -> reports and freezing.

Importing the package points numba's on-disk cache at a directory named after a hash of
the sources compiled code can reach (:func:`_numba_cache_dir`): numba links a compiled
function's callees from other modules into its cached machine code but checks only the
function's own file for changes, so an edit of, say, the engine would otherwise leave
every cached rollout running the old engine. Only those sources are hashed
(:data:`COMPILED_PACKAGES`), so an edit of a command, the run store or a report keeps the
compiled code (a first compile costs ~44 s of CPU per process).
"""

import hashlib
import os
import sys
from pathlib import Path

__version__ = "0.1.0"


# The packages holding numba-compiled code and everything that code can import: the
# layers up to walking import only each other and core (tests/test_layers.py enforces
# it), and analysis's kernels import only those; test_layers also checks that every
# module with compiled code is in here and imports nothing outside.
COMPILED_PACKAGES = ("topology", "dynamics", "model", "screening", "control", "walking", "analysis")
CORE_FILES = ("__init__.py", "types.py", "errors.py", "io.py", "objectives.py", "interrupts.py")


def source_digest() -> bytes:
    """SHA-256 over the sources compiled code can reach (path and bytes, sorted): the core
    files and :data:`COMPILED_PACKAGES`, generated specializations excluded. The key of
    every on-disk compiled-code cache."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if "_specialized" in parts:
            continue
        if parts[0] not in COMPILED_PACKAGES and parts[0] not in CORE_FILES:
            continue
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.digest()


def _opt_level() -> str:
    """numba's optimization level of the compiled code (``NUMBA_OPT``, numba's default 3;
    ``make test`` compiles at 1: docs/performance.md, "Optimization level"). numba's cache
    index does not record it, so it is part of the cache folder's name."""
    return os.environ.get("NUMBA_OPT", "3")


def _numba_cache_dir(opt_level: str) -> Path:
    """``$CODESIGN_CACHE_DIR/numba/<hash>-O<opt_level>`` (default ``~/.cache/codesign``),
    the hash of :func:`source_digest`."""
    base = Path(os.environ.get("CODESIGN_CACHE_DIR", Path.home() / ".cache" / "codesign"))
    return base / "numba" / f"{source_digest().hex()[:16]}-O{opt_level}"


if "NUMBA_CACHE_DIR" not in os.environ:
    _dir = str(_numba_cache_dir(_opt_level()))
    if "numba" in sys.modules:   # numba already imported: its config is read already
        sys.modules["numba"].config.CACHE_DIR = _dir
    else:
        os.environ["NUMBA_CACHE_DIR"] = _dir
# cached kernels are found by their file's place in the package, so any clone of the same
# sources shares them (codesign/numba_cache.py; imported by numba only when it caches)
if "NUMBA_CACHE_LOCATOR_CLASSES" not in os.environ:
    _locators = ("codesign.numba_cache.PackageCacheLocator,UserProvidedCacheLocator,InTreeCacheLocator,"
                 "UserWideCacheLocator,IPythonCacheLocator,ZipCacheLocator")
    if "numba" in sys.modules:
        sys.modules["numba"].config.CACHE_LOCATOR_CLASSES = _locators
    else:
        os.environ["NUMBA_CACHE_LOCATOR_CLASSES"] = _locators
