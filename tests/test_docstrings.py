"""Meta-test: every public name (in a package's ``__all__``) and its public methods have docstrings."""
import importlib
import inspect
import pkgutil

TOP_LEVEL = ["dynablocks", "systems", "multibody", "actuators", "sensors", "solvers"]


def _public_packages():
    """Every public package below the top-level ones (new sub-packages are covered by
    themselves)."""
    for top in TOP_LEVEL:
        yield top
        mod = importlib.import_module(top)
        for info in pkgutil.walk_packages(mod.__path__, top + "."):
            if info.ispkg and not any(p.startswith("_") for p in info.name.split(".")):
                yield info.name


EXTRA_MODULES = ["systems", "systems.primitives", "systems.analysis", "systems.controllers",
           "systems.trajectories", "systems.trajectory_optimization",
           "systems.symbolic", "systems.drawing", "multibody", "multibody.geometry",
           "multibody.tree", "multibody.tree.spatial", "multibody.parsing", "multibody.models",
           "multibody.constraints", "multibody.plants",
           "solvers.ops", "solvers.lcp", "solvers.compiled",
           "actuators", "sensors"]
MODULES = sorted(set(EXTRA_MODULES) | set(_public_packages()))


def _public_names():
    for modname in MODULES:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []):
            yield modname, name, getattr(mod, name)


def _missing(obj):
    missing = []
    if not inspect.isfunction(obj) and not inspect.isclass(obj):
        return missing
    if not (obj.__doc__ or "").strip():
        missing.append(obj.__qualname__)
    if inspect.isclass(obj):
        for name, member in vars(obj).items():
            if name.startswith("_") or not callable(member) and not isinstance(member, property):
                continue
            fn = member.fget if isinstance(member, property) else member
            fn = getattr(fn, "__func__", fn)
            if inspect.isfunction(fn) and not (fn.__doc__ or "").strip():
                # An override documented in a base class is documented.
                if not any((getattr(getattr(b, name, None), "__doc__", None) or "").strip()
                           for b in obj.__mro__[1:]):
                    missing.append(f"{obj.__qualname__}.{name}")
    return missing


def test_public_api_is_documented():
    missing = []
    for modname, name, obj in _public_names():
        missing += [f"{modname}: {m}" for m in _missing(obj)]
    assert not missing, "undocumented public names:\n" + "\n".join(sorted(set(missing)))
