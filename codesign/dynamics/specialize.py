"""Disk-cacheable specializations of the hybrid integrator for one system.

:func:`codesign.dynamics.hybrid.integrate` takes the system (``flow``, ``guards``,
``jump``, ``observe``) as first-class function arguments. Numba compiles that fine but
cannot cache it on disk (numba issues #2956/#6264: a function value is a per-process
address, and a caller that passes one "uses dynamic globals"), so every new process —
each Dask worker, each CLI call, each test session — would pay the full compilation of a
whole rollout again (tens of seconds).

A call to a *global* jitted function, on the other hand, is an ordinary static call that
numba caches. :func:`specialize` therefore rewrites the integrator once per system:

1. parse the integrator's compiled modules (``hybrid_steppers.py``, ``hybrid_events.py``,
   ``hybrid_loop.py``: :data:`INTEGRATOR_MODULES`) with :mod:`ast`;
2. take every top-level function with a parameter named ``flow``, ``guards``, ``jump``
   or ``observe`` (the integrator and its step/locate helpers), drop those parameters,
   and drop the matching arguments where these functions call each other (the integrator
   only passes them through unchanged; anything else is refused);
3. write the result to a generated module in which the four names are imports of the
   system's functions, decorated ``njit(cache=True)``; everything else (constants,
   Butcher tables, helpers without function parameters) comes from those modules;
4. import that module and return its ``integrate(x0, mode0, t0, t_end, p, record_times,
   terminal, settings)`` — the signature of :func:`hybrid.integrate` without the four
   system functions, with the same result record (``hybrid.Integration``).

The module's file name is a hash of every source file of the ``codesign`` package
(the integrator's modules, the system's functions and everything they call: numba links callees from
other modules into the cached machine code, yet checks only a function's own file), of
the system functions' names and of the numba version, so editing any of them gives a new
module and a fresh compilation. Generated files live in
``$CODESIGN_CACHE_DIR`` if set, else in ``codesign/dynamics/_specialized/`` (git-ignored),
else in ``~/.cache/codesign/specialized``. Writing is atomic, so processes generating the
same module at once (Dask workers) are safe.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

import numba

from codesign.dynamics import hybrid_events, hybrid_loop, hybrid_steppers
from codesign.io import write_text_atomic

SYSTEM_FUNCTIONS = ("flow", "guards", "jump", "observe")
# the compiled integrator, in dependency order (later modules call earlier ones)
INTEGRATOR_MODULES = (hybrid_steppers, hybrid_events, hybrid_loop)

_LOADED: dict[str, ModuleType] = {}


def specialize(flow: Callable, guards: Callable, jump: Callable, observe: Callable) -> Callable:
    """The integrator compiled for one system, cacheable on disk.

    Args:
        flow, guards, jump, observe: module-level ``numba.njit`` functions with the
            signatures of the :mod:`codesign.dynamics.hybrid` contract.

    Returns:
        ``integrate(x0, mode0, t0, t_end, p, record_times, terminal, settings)``, a numba
        dispatcher returning exactly what :func:`hybrid.integrate` returns (an
        ``Integration`` record). It may be
        called from Python or from other (cacheable) jitted functions.
    """
    system = dict(zip(SYSTEM_FUNCTIONS, (flow, guards, jump, observe)))
    imports = {name: _import_path(name, fn) for name, fn in system.items()}
    key = _module_key(imports)
    if key not in _LOADED:
        path = _cache_dir() / f"{key}.py"
        source = _module_source(imports)
        if not path.exists() or path.read_text() != source:
            write_text_atomic(path, source)
        _LOADED[key] = _import_file(key, path)
    return _LOADED[key].integrate


def _import_path(name: str, fn: Callable) -> tuple[str, str]:
    """(module, attribute) under which a system function can be imported."""
    py_func = getattr(fn, "py_func", None)
    if py_func is None:
        raise TypeError(f"{name}: expected a numba.njit function, got {fn!r}")
    module, qualname = py_func.__module__, py_func.__qualname__
    if "." in qualname or module == "__main__":
        raise TypeError(f"{name}: {module}.{qualname} is not importable (define it at module "
                        "level of an importable module)")
    if getattr(sys.modules.get(module), qualname, None) is not fn:
        raise TypeError(f"{name}: {module}.{qualname} does not name this function")
    return module, qualname


@functools.lru_cache(maxsize=None)
def _package_sources_digest() -> bytes:
    """The package's source digest (:func:`codesign.source_digest`): the system functions
    call engine, contact and controller code in other modules."""
    import codesign

    return codesign.source_digest()


def _module_key(imports: dict[str, tuple[str, str]]) -> str:
    digest = hashlib.sha256()
    digest.update(numba.__version__.encode())
    digest.update(_package_sources_digest())
    for name in SYSTEM_FUNCTIONS:
        module, attribute = imports[name]
        digest.update(f"{name}={module}:{attribute}".encode())
        digest.update(Path(inspect.getfile(sys.modules[module])).read_bytes())
    return "integrate_" + digest.hexdigest()[:20]


def _module_source(imports: dict[str, tuple[str, str]]) -> str:
    """Source of the generated module (see the module docstring, steps 1–3)."""
    trees = [(module, ast.parse(Path(inspect.getfile(module)).read_text()))
             for module in INTEGRATOR_MODULES]
    removed = {  # function name -> indexes of its system-function parameters
        node.name: [i for i, a in enumerate(node.args.args) if a.arg in SYSTEM_FUNCTIONS]
        for _, tree in trees for node in tree.body if isinstance(node, ast.FunctionDef)
    }
    removed = {name: idx for name, idx in removed.items() if idx}
    if "integrate" not in removed:
        raise RuntimeError("hybrid_loop.integrate takes no system functions: nothing to specialize")
    generic = [node for _, tree in trees for node in tree.body
               if isinstance(node, ast.FunctionDef) and node.name in removed]
    binder = _BindSystem(removed)
    functions = [ast.unparse(ast.fix_missing_locations(binder.visit(node))) for node in generic]
    lines = [
        '"""Generated by codesign.dynamics.specialize; do not edit (regenerated on change)."""',
        "import numba",
    ]
    for module, _ in trees:
        lines += [f"import {module.__name__} as _m",
                  "globals().update({k: v for k, v in vars(_m).items() if not k.startswith('__')})"]
    lines += [f"from {module} import {attribute} as {name}"
              for name, (module, attribute) in imports.items()]
    return "\n".join(lines) + "\n\n\n" + "\n\n\n".join(functions) + "\n"


class _BindSystem(ast.NodeTransformer):
    """Drops the system-function parameters and the arguments that pass them on."""

    def __init__(self, removed: dict[str, list[int]]):
        self.removed = removed

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        drop = self.removed.get(node.name, [])
        node.args.args = [a for i, a in enumerate(node.args.args) if i not in drop]
        node.decorator_list = [ast.parse("numba.njit(cache=True)", mode="eval").body]
        self.generic_visit(node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.removed:
            drop = self.removed[node.func.id]
            for i in drop:
                arg = node.args[i] if i < len(node.args) else None
                if not (isinstance(arg, ast.Name) and arg.id in SYSTEM_FUNCTIONS):
                    raise RuntimeError(f"{node.func.id} is called at line {node.lineno} "
                                       "with a system function that is not passed through "
                                       "unchanged; specialize cannot bind it")
            node.args = [a for i, a in enumerate(node.args) if i not in drop]
        return node


def _cache_dir() -> Path:
    candidates = [os.environ.get("CODESIGN_CACHE_DIR"),
                  Path(__file__).parent / "_specialized",
                  Path.home() / ".cache" / "codesign" / "specialized"]
    for candidate in candidates:
        if not candidate:
            continue
        path = Path(candidate)
        try:
            path.mkdir(parents=True, exist_ok=True)
            if os.access(path, os.W_OK):
                return path
        except OSError:
            continue
    raise RuntimeError("no writable folder for generated integrators; set CODESIGN_CACHE_DIR")


def _import_file(name: str, path: Path) -> ModuleType:
    module_name = f"codesign_specialized_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module
