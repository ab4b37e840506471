"""numba's disk cache found by a file's place in this package, not by its absolute path.

numba's default locator (``UserProvidedCacheLocator``) files each source file's compiled
code in a folder named after a hash of the file's absolute folder, so a second clone of
the same sources at another path compiled every kernel again (~60 s of CPU) although the
cache folder -- named after the digest of the compiled sources
(:func:`codesign._numba_cache_dir`) -- already held them. numba checks a cache entry
against its source file's content hash (numba 0.68, the version installed here; a version
that compares the file's modification time instead merely compiles once per clone, as
before), so a folder named by the file's path inside the package can be shared by every
clone of the same sources.

:mod:`codesign` names :class:`PackageCacheLocator` first in
``NUMBA_CACHE_LOCATOR_CLASSES`` (numba's own setting, read when a cached function is first
compiled or loaded), numba's default locators after it; a function outside the package
falls through to them.
"""

from __future__ import annotations

import os
from pathlib import Path

from numba.core import config
from numba.core.caching import UserProvidedCacheLocator

PACKAGE_ROOT = Path(__file__).resolve().parent


def package_relative(py_file: str) -> Path | None:
    """The source file's folder relative to the package root, or None outside it."""
    try:
        return Path(py_file).resolve().parent.relative_to(PACKAGE_ROOT)
    except ValueError:
        return None


class PackageCacheLocator(UserProvidedCacheLocator):
    """``NUMBA_CACHE_DIR/codesign/<the file's folder inside the package>``: the same folder
    for every clone of the package."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        self._cache_path = os.path.join(config.CACHE_DIR, "codesign", *package_relative(py_file).parts)

    @classmethod
    def from_function(cls, py_func, py_file):
        if package_relative(py_file) is None:
            return None
        return super().from_function(py_func, py_file)
