"""LinearSystem/AffineSystem outputs y = D u + y0 without a state term and with a small D
(an LQR's u = y0 - K x): computed on Python floats, row sums written out. Checked against the
numpy formula (within the rounding bound both obey), against the same sums taken term by term
in Python (bit for bit), against the CasADi evaluation of the block, and the larger sizes
against numpy bit for bit (they keep numpy's product)."""
import numpy as np
import pytest

from systems.primitives import AffineSystem, LinearSystem
from systems.symbolic import to_casadi

RNG = np.random.default_rng(11)
EPS = 2.0 ** -53   # unit roundoff


def _gamma(k):
    return k * EPS / (1 - k * EPS)


def _block(ny, nu, with_y0):
    D = RNG.standard_normal((ny, nu)) * 10.0 ** RNG.integers(-2, 3, (ny, nu))
    y0 = RNG.standard_normal(ny) * 100.0 if with_y0 else np.zeros(ny)
    return AffineSystem(D=D, y0=y0), D, y0


def _output_at(block, u):
    ctx = block.create_default_context()
    block.get_input_port().fix_value(ctx, u)
    return block.get_output_port().eval(ctx), ctx


@pytest.mark.parametrize("ny, nu", [(1, 1), (1, 4), (2, 4), (4, 2), (1, 8), (8, 1)])
@pytest.mark.parametrize("with_y0", [True, False], ids=["y0", "y0=0"])
def test_small_gain_output_equals_the_row_sums_and_numpy_within_rounding(ny, nu, with_y0):
    block, D, y0 = _block(ny, nu, with_y0)
    cs = to_casadi(block)
    for _ in range(50):
        u = RNG.standard_normal(nu) * 10.0 ** RNG.integers(-3, 4)
        y, ctx = _output_at(block, u)
        assert type(y) is np.ndarray and y.dtype == np.float64 and y.shape == (ny,)
        # the row sums, term by term in Python (left to right; y0 last, when not zero)
        rows = []
        for i in range(ny):
            s = D[i, 0].item() * u[0].item()
            for j in range(1, nu):
                s = s + D[i, j].item() * u[j].item()
            rows.append(s + y0[i].item() if with_y0 else s)
        assert y.tolist() == rows
        # numpy's formula: both within gamma_(nu+1) (sum |d u| + |y0|) of the exact value
        bound = 2 * _gamma(nu + 1) * (np.abs(D) @ np.abs(u) + np.abs(y0))
        assert np.all(np.abs(y - (D @ u + y0)) <= bound)
        # the CasADi evaluation of the same block (the symbolic path: the vector form)
        y_s = np.asarray(cs.g(*cs.from_context(ctx)), float).ravel()
        assert np.all(np.abs(y - y_s) <= bound)


def test_small_gain_output_is_a_new_array_per_evaluation():
    block, D, y0 = _block(1, 4, True)
    ctx = block.create_default_context()
    port = block.get_input_port()
    port.fix_value(ctx, [1.0, 2.0, 3.0, 4.0])
    y1 = block.get_output_port().eval(ctx)
    port.fix_value(ctx, [1.0, 2.0, 3.0, 5.0])
    y2 = block.get_output_port().eval(ctx)
    assert y1 is not y2
    assert y2[0] - y1[0] == pytest.approx(D[0, 3], rel=1e-12, abs=1e-12 * abs(y0[0]))


@pytest.mark.parametrize("ny, nu", [(3, 4), (1, 12)])
def test_larger_gains_keep_numpys_product(ny, nu):
    block, D, y0 = _block(ny, nu, True)
    u = RNG.standard_normal(nu)
    y, _ = _output_at(block, u)
    assert np.array_equal(y, D.dot(u) + y0)


def test_small_gain_with_a_state_term_keeps_the_vector_form():
    """y = C x + D u (a state term): not the written-out form; numpy's arithmetic, bit for bit."""
    A, B = -np.eye(2), np.ones((2, 1))
    C, D = np.array([[1.0, 2.0]]), np.array([[0.5]])
    sys_ = LinearSystem(A, B, C, D)
    ctx = sys_.create_default_context()
    ctx.set_continuous_state([0.3, -0.7])
    sys_.get_input_port().fix_value(ctx, [1.5])
    y = sys_.get_output_port().eval(ctx)
    assert np.array_equal(y, C.dot([0.3, -0.7]) + D.dot([1.5]))


def test_lqr_controller_output_of_a_linear_plant():
    """The LQR block of a 2-state plant (1 x 2 gain, y0 = 0): u = -K x through the small
    path, equal to the numpy formula within rounding and to -K x exactly for a basis vector."""
    from systems.controllers.lqr import LinearQuadraticRegulator
    plant = LinearSystem([[0.0, 1.0], [0.0, 0.0]], [[0.0], [1.0]], np.eye(2))
    ctrl = LinearQuadraticRegulator(plant, np.eye(2), np.eye(1))
    x = np.array([0.4, -1.1])
    u, _ = _output_at(ctrl, x)
    K = ctrl.K
    assert abs(u[0] - (-K @ x)[0]) <= 2 * _gamma(3) * (np.abs(K) @ np.abs(x))[0]
    e1, _ = _output_at(ctrl, [1.0, 0.0])
    assert e1.tolist() == [-K[0, 0]]
