"""Public names are discoverable: every name in a package's ``__all__`` resolves and shows in
``dir()`` (lazy exports included), and ``help(multibody)`` opens with the package map."""
import importlib
import pydoc

import pytest

PACKAGES = ["systems", "systems.primitives", "systems.analysis", "systems.controllers",
            "systems.trajectory_optimization", "systems.trajectories",
            "multibody", "multibody.tree", "multibody.geometry", "multibody.parsing",
            "multibody.models", "multibody.constraints", "multibody.plants", "solvers",
            "actuators", "sensors"]


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
