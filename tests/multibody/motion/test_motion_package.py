"""multibody.motion's public names resolve, show in dir() and carry docstrings (the meta
tests' checks, applied to this package)."""
import importlib
import inspect

import multibody


def test_public_names_resolve_and_are_documented():
    mod = importlib.import_module("multibody.motion")
    assert multibody.motion is mod
    missing = []
    for name in mod.__all__:
        obj = getattr(mod, name)
        assert name in dir(mod)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            if not (obj.__doc__ or "").strip():
                missing.append(name)
            for attr, member in vars(obj).items() if inspect.isclass(obj) else ():
                fn = member.fget if isinstance(member, property) else member
                if not attr.startswith("_") and inspect.isfunction(fn) and not fn.__doc__:
                    missing.append(f"{name}.{attr}")
    assert not missing, missing
