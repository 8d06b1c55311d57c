"""Package namespaces are lazy as docs/architecture.md says (PEP 562 ``__getattr__`` and
``__dir__``): in a fresh interpreter, ``import systems; systems.primitives.Gain`` works
without importing ``systems.primitives`` first, and every public sub-module of every public
package is reachable as an attribute right after importing the package (the module, or a
function re-exported under its name, as ``systems.analysis.linearize``) and listed by
``dir()`` (issue 20, section 5)."""
import importlib
import pkgutil
import subprocess
import sys

import pytest

TOP_LEVEL = ["systems", "multibody", "actuators", "sensors", "solvers"]


def _fresh(code: str) -> str:
    """Run ``code`` in a new interpreter; its stdout (fails the test on an exception)."""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stdout


def _packages_and_submodules():
    """``(package, [public sub-modules])`` for every public package (found, not listed)."""
    out = []
    for top in TOP_LEVEL:
        names = [top] + [i.name for i in pkgutil.walk_packages(
            importlib.import_module(top).__path__, top + ".")
            if i.ispkg and not any(p.startswith("_") for p in i.name.split("."))]
        for name in names:
            mod = importlib.import_module(name)
            subs = [i.name for i in pkgutil.iter_modules(mod.__path__)
                    if not i.name.startswith("_")]
            if subs:
                out.append((name, subs))
    return out


def test_systems_subpackages_need_no_import_of_their_own():
    out = _fresh("import sys, systems\n"
                 "assert 'systems.primitives' not in sys.modules\n"
                 "listed = dir(systems)\n"
                 "for n in ('analysis', 'primitives', 'controllers', 'trajectory_optimization',"
                 " 'trajectories', 'symbolic', 'drawing', 'Simulator'):\n"
                 "    assert n in listed, n\n"
                 "g = systems.primitives.Gain(2.0, size=1)\n"
                 "print(type(g).__name__, systems.analysis.Simulator is systems.Simulator)\n")
    assert out.split() == ["Gain", "True"]
    with pytest.raises(AssertionError, match="has no attribute 'nonexistent'"):
        _fresh("import systems; systems.nonexistent")


@pytest.mark.parametrize("package, submodules", _packages_and_submodules(),
                         ids=lambda x: x if isinstance(x, str) else "")
def test_every_public_submodule_is_an_attribute_and_in_dir(package, submodules):
    out = _fresh(f"import importlib, sys, types\n"
                 f"pkg = importlib.import_module({package!r})\n"
                 f"listed = dir(pkg)\n"
                 f"for name in {submodules!r}:\n"
                 f"    obj = getattr(pkg, name)\n"
                 f"    assert name in listed, name + ' not in dir()'\n"
                 f"    # the sub-module itself, or a public name that shadows it\n"
                 f"    if isinstance(obj, types.ModuleType):\n"
                 f"        assert obj is sys.modules[{package!r} + '.' + name], name\n"
                 f"    else:\n"
                 f"        assert obj.__name__ == name, (name, obj)\n"
                 f"    print(name)\n")
    assert out.split() == list(submodules)
