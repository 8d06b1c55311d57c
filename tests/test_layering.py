"""The layering rules of ARCHITECTURE.md, checked on the source: ``dynablocks`` (the project's
root errors) is the lowest layer and imports no other package; ``systems`` (with ``solvers``)
sits below ``multibody``: it never imports ``multibody``, ``actuators`` or ``sensors``, while
``multibody.tree`` builds on the System base (a ``RigidBodyTree`` is a System block) and
``import multibody.tree`` loads no more of ``systems`` than that base; no import circles; no
private module or name imported across packages; no example importing a private module; no
module reading or writing another module's private attributes. Each static check is also run
on a small synthetic tree that breaks it, so a check that can no longer fail is caught too."""
import pathlib
import subprocess
import sys
import textwrap

import pytest

import _layering as L

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_systems_sits_below_multibody():
    assert L.upward_imports(ROOT) == []
    code = ("import sys, systems, systems.analysis, systems.primitives, systems.controllers, "
            "systems.symbolic, solvers.lcp, solvers.compiled\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('multibody', 'actuators', 'sensors'))\n"
            "print(bad)\n"
            "sys.exit(1 if bad else 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


def test_multibody_tree_loads_only_the_system_base():
    code = ("import sys, multibody, multibody.geometry, multibody.parsing, multibody.models\n"
            "t = multibody.RigidBodyTree.from_urdf(str(multibody.model_path('acrobot')))\n"
            "t.mass_matrix([0.1, 0.2])\n"
            f"bad = sorted(m for m in sys.modules if m.startswith({L.HEAVY_SYSTEMS!r}) "
            "or m.split('.')[0] in ('networkx', 'scipy'))\n"
            "print(bad)\n"
            "assert 'systems.leaf_system' in sys.modules  # the tree is a System\n"
            "sys.exit(1 if bad else 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


def test_dynablocks_is_the_lowest_layer():
    assert L.lowest_layer_imports(ROOT) == []
    code = ("import sys, dynablocks, dynablocks.errors\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            f"{tuple(p for p in L.PACKAGES if p != L.LOWEST)!r})\n"
            "print(bad)\n"
            "sys.exit(1 if bad else 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr


def test_no_import_circles():
    assert L.import_cycles(ROOT) == []


def test_no_private_names_imported_across_packages():
    assert L.private_imports_across_packages(ROOT) == []


def test_examples_and_benchmarks_import_only_public_names():
    assert L.private_imports_in_scripts(ROOT, "examples") == []
    assert L.private_imports_in_scripts(ROOT, "benchmarks") == []


def test_no_private_attribute_access_across_modules():
    assert L.private_attribute_access(ROOT) == []


# ---------------------------------------------------------------- the checks can fail
def _tree(tmp_path, files):
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return tmp_path


def test_checker_finds_a_circle_through_a_function_level_import(tmp_path):
    root = _tree(tmp_path, {
        "solvers/__init__.py": "",
        "solvers/a.py": "from solvers.b import g\ndef f():\n    return g()\n",
        "solvers/b.py": "def g():\n    from .a import f\n    return 1\n",
    })
    assert L.import_cycles(root, ("solvers",)) == [["solvers.a", "solvers.b"]]


def test_checker_finds_the_lowest_layer_importing_a_package(tmp_path):
    root = _tree(tmp_path, {
        "dynablocks/__init__.py": "from .errors import DynablocksError\n",
        "dynablocks/errors.py": "class DynablocksError(Exception):\n    pass\n"
                                "def f():\n    from systems.errors import SystemsError\n",
        "systems/__init__.py": "", "systems/errors.py": "from dynablocks import DynablocksError\n",
    })
    bad = L.lowest_layer_imports(root, ("dynablocks", "systems"))
    assert bad == ["dynablocks/errors.py:4: the lowest layer 'dynablocks' imports 'systems.errors'"]


def test_checker_finds_systems_importing_multibody(tmp_path):
    root = _tree(tmp_path, {
        "systems/__init__.py": "",
        "systems/sim.py": "def f():\n    from multibody.tree import RigidBodyTree\n",
        "multibody/__init__.py": "", "multibody/tree/__init__.py": "from systems import sim\n",
    })
    bad = L.upward_imports(root, ("systems",), ("multibody",))
    assert bad == ["systems/sim.py:2: 'systems' (a lower layer) imports 'multibody.tree'"]


def test_checker_finds_a_private_import_across_packages(tmp_path):
    root = _tree(tmp_path, {
        "systems/__init__.py": "", "systems/x.py": "from multibody.tree._algo import f\n",
        "multibody/__init__.py": "", "multibody/tree/__init__.py": "",
        "multibody/tree/_algo.py": "def f():\n    pass\n",
        "multibody/tree/ok.py": "from ._algo import f\n",        # same package: allowed
    })
    bad = L.private_imports_across_packages(root, ("systems", "multibody"))
    assert len(bad) == 1 and "systems/x.py:1" in bad[0] and "multibody.tree._algo" in bad[0]


def test_checker_finds_an_example_importing_a_private_module(tmp_path):
    root = _tree(tmp_path, {
        "examples/demo.py": "from multibody._rbs_models import ball\nimport _plotting\n",
    })
    bad = L.private_imports_in_scripts(root, "examples", ("multibody",))
    assert len(bad) == 1 and "multibody._rbs_models" in bad[0]


def test_checker_finds_a_private_attribute_written_from_another_module(tmp_path):
    root = _tree(tmp_path, {
        "systems/__init__.py": "",
        "systems/context.py": "class Context:\n    def __init__(self):\n        self._time = 0.0\n",
        "systems/sim.py": "import sys\ndef step(ctx):\n    ctx._time = 1.0\n    sys._getframe\n",
    })
    bad = L.private_attribute_access(root, ("systems",))
    assert bad == ["systems/sim.py:3: ctx._time"]
