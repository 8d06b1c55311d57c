"""Test helper: import an example script by file name."""
import importlib.util
import os

import sys

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
if EXAMPLES not in sys.path:  # examples import their shared helpers (examples/_plotting.py)
    sys.path.insert(0, EXAMPLES)


def load_example(name: str):
    """Import ``examples/<name>.py`` as a module (its ``main`` is not run)."""
    path = os.path.join(EXAMPLES, f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
