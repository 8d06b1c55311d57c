"""Helpers shared by the compiled time-step tests (private): run a plant from a state, and
build plants as on a machine without a C compiler (the numpy twin of the kernel)."""
from __future__ import annotations

import numpy as np

__all__ = ["final_state", "trajectory", "without_compiler"]


def _start(plant, q, v, parameters=None):
    ctx = plant.create_default_context()
    for name, value in (parameters or {}).items():
        ctx.set_parameter(plant.parameter_index(name), value)
    plant.set_positions(ctx, q)
    plant.set_velocities(ctx, v)
    return ctx


def final_state(plant, q, v, steps, parameters=None):
    """``(q, v, context)`` after ``steps`` steps from ``(q, v)``."""
    ctx = _start(plant, q, v, parameters)
    plant.advance(ctx, steps)
    return plant.get_positions(ctx), plant.get_velocities(ctx), ctx


def trajectory(plant, q, v, steps, parameters=None):
    """``[q; v]`` after each step, shape (steps, nq + nv), and the last context;
    ``parameters`` maps ``"<block>.<parameter>"`` names to values set first."""
    ctx = _start(plant, q, v, parameters)
    out = []
    for _ in range(steps):
        plant.advance(ctx, 1)
        out.append(np.concatenate([plant.get_positions(ctx), plant.get_velocities(ctx)]))
    return np.array(out), ctx


def without_compiler(monkeypatch) -> None:
    """From here on (for this test), plants are built as where no C compiler is found: the
    kernel is its numpy twin (``step_method == "numpy_pgs"``)."""
    import solvers._compiled_build as build
    import solvers.contact_step as cs
    monkeypatch.setattr(build, "find_compiler", lambda compiler=None: None)
    monkeypatch.setattr(cs, "_LOADED", {})
