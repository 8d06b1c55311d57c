"""Public names are discoverable: every name in a package's ``__all__`` resolves and shows in
``dir()`` (lazy exports included), and ``help(multibody)`` opens with the package map."""
import importlib
import pkgutil
import pydoc

import pytest

TOP_LEVEL = ["dynablocks", "systems", "multibody", "actuators", "sensors", "solvers"]


def _public_packages():
    """The top-level packages and every public sub-package below them (found, not listed, so
    a new sub-package is checked from its first commit)."""
    found = []
    for top in TOP_LEVEL:
        found.append(top)
        mod = importlib.import_module(top)
        for info in pkgutil.walk_packages(mod.__path__, top + "."):
            if info.ispkg and not any(p.startswith("_") for p in info.name.split(".")):
                found.append(info.name)
    return found


PACKAGES = _public_packages() + ["systems.trajectories"]


@pytest.mark.parametrize("name", PACKAGES)
def test_all_names_resolve_and_are_listed_by_dir(name):
    mod = importlib.import_module(name)
    names = list(getattr(mod, "__all__"))
    assert names, f"{name} has an empty __all__"
    listed = set(dir(mod))
    for n in names:
        assert n in listed, f"{name}.{n} is in __all__ but not in dir({name})"
        assert getattr(mod, n) is not None


def test_help_of_multibody_is_a_short_package_map():
    import multibody
    text = pydoc.render_doc(multibody, renderer=pydoc.plaintext)
    head = text.split("PACKAGE CONTENTS")[0]
    for sub in ("multibody.tree", "multibody.geometry", "multibody.parsing", "multibody.models",
                "multibody.constraints", "multibody.plants"):
        assert sub in head
    assert len(multibody.__doc__.splitlines()) < 30
