"""The list contract of ``LeafSystem.time_derivatives``: on a numeric context a block may
return a list or tuple of Python floats (``ops.from_entries``); the interpreted Simulator
takes them as they are and gives the numbers of the array form bit for bit, every other
caller converts them, and a wrong size or a non-finite entry raises the same named errors."""
import numpy as np
import pytest

from solvers import ops
from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.analysis.batched import batched_time_derivatives
from systems.analysis.linearize import linearize
from systems.errors import NonFiniteStateError, PortValueError
from systems.primitives import ConstantVectorSource


class _Pendulum(LeafSystem):
    """th' = om, om' = -9.81 sin(th) - 0.1 om + u, the result in a chosen form."""

    def __init__(self, form, name="pendulum"):
        super().__init__(name)
        self.form = form
        self.declare_continuous_state(2)
        self.u = self.declare_input_port("u", 1)

    def time_derivatives(self, context):
        th, om = ops.entries(context.continuous_state)
        u, = ops.entries(self.u.eval(context))
        acc = -9.81 * ops.sin(th) - 0.1 * om + u
        return self.form(om, acc)


FORMS = {
    "array": lambda *e: ops.vertcat(*e),
    "from_entries": ops.from_entries,
    "list": lambda *e: list(e),
    "ints mixed in": lambda om, acc: [om, acc] if om != 0.0 else [0, acc],
    "numpy scalars": lambda *e: [np.float64(v) for v in e],
}


def _run(forms, integrator, u=0.5, x0=(1.0, 0.0), t=3.0):
    b = DiagramBuilder("d")
    src = b.add_system(ConstantVectorSource([u], name="src"))
    plants = [b.add_system(_Pendulum(form, f"p{i}")) for i, form in enumerate(forms)]
    for p in plants:
        b.connect(src.get_output_port(), p.u)
    d = b.build()
    ctx = d.create_default_context()
    ctx.set_continuous_state(np.tile(x0, len(plants)))
    kw = dict(accuracy=1e-6) if integrator in ("runge_kutta3", "RK45") else dict(max_step=0.01)
    sim = Simulator(d, ctx, integrator=integrator, **kw)
    sim.advance_to(t)
    return ctx.continuous_state.copy()


@pytest.mark.parametrize("integrator", ["runge_kutta3", "RK45", "runge_kutta2"])
@pytest.mark.parametrize("name", [n for n in FORMS if n != "array"])
def test_every_form_gives_the_array_forms_bits(integrator, name):
    ref = _run([FORMS["array"]], integrator)
    assert ref[0] != 1.0 and np.all(np.isfinite(ref))
    assert np.array_equal(_run([FORMS[name]], integrator), ref)
    # two leaves (the list form joins them), in either order
    both = _run([FORMS["array"]] * 2, integrator)
    assert np.array_equal(both[:2], both[2:])
    assert np.array_equal(_run([FORMS[name], FORMS["array"]], integrator), both)
    assert np.array_equal(_run([FORMS["array"], FORMS[name]], integrator), both)


def test_from_entries_result_and_conversion_elsewhere():
    p = _Pendulum(ops.from_entries)
    ctx = p.create_default_context()
    ctx.set_continuous_state([0.5, 2.0])
    p.u.fix_value(ctx, [1.0])
    raw = p.time_derivatives(ctx)
    assert type(raw) is tuple and raw == (2.0, -9.81 * np.sin(0.5) - 0.2 + 1.0)
    xdot = p.eval_time_derivatives(ctx)     # converted: a float array
    assert type(xdot) is np.ndarray and xdot.dtype == np.float64
    assert xdot.tolist() == list(raw)
    # symbolic: the same code traces; linearization at the bottom: A = [[0, 1], [-9.81, -0.1]]
    ctx.set_continuous_state([0.0, 0.0])
    p.u.fix_value(ctx, [0.0])
    lin = linearize(p, ctx)
    np.testing.assert_allclose(lin.A, [[0.0, 1.0], [-9.81, -0.1]], atol=1e-12)
    np.testing.assert_allclose(lin.B, [[0.0], [1.0]], atol=1e-12)
    # batched (the CasADi function of the traced code), row by row against the floats
    X, U = np.array([[0.5, 2.0], [-1.0, 0.3]]), np.array([[1.0], [-2.0]])
    out = batched_time_derivatives(p, ctx, X, U)
    for (th, om), (u,), row in zip(X, U, out):
        np.testing.assert_allclose(row, [om, -9.81 * np.sin(th) - 0.1 * om + u], rtol=1e-14)


@pytest.mark.parametrize("bad", [lambda om, acc: (om,), lambda om, acc: [om, acc, 0.0]])
def test_wrong_size_names_the_system(bad):
    for forms in ([bad], [FORMS["array"], bad]):
        with pytest.raises(PortValueError, match=r"system 'p\d'.*expected size 2"):
            _run(forms, "runge_kutta3")
    p = _Pendulum(bad)
    ctx = p.create_default_context()
    p.u.fix_value(ctx, [0.0])
    with pytest.raises(PortValueError, match="system 'pendulum'.*expected size 2"):
        p.eval_time_derivatives(ctx)


@pytest.mark.parametrize("integrator", ["runge_kutta3", "RK45", "runge_kutta2"])
def test_non_finite_entry_raises_the_array_forms_error(integrator):
    def nan_late(om, acc):   # NaN once the pendulum swings past 1.5 rad/s
        return (om, float("nan") if abs(om) > 1.5 else acc)
    messages = []
    for form in (nan_late, lambda *e: np.array(nan_late(*e))):
        with pytest.raises(NonFiniteStateError, match="p0") as info:
            _run([FORMS["array"], form][1:], integrator, u=0.0, x0=(1.5, 0.0))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
