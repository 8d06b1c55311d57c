"""Silent cases turned into named errors (Drake-parity robustness)."""
import numpy as np
import pytest

from systems import DiagramBuilder, DiagramBuildError, LeafSystem
from systems.analysis import Simulator
from systems.controllers.lqr import FiniteHorizonLinearQuadraticRegulator
from systems.primitives import Gain, Integrator, LinearSystem


def test_gain_refuses_nan():
    with pytest.raises(ValueError, match="k must be finite"):
        Gain(np.nan, 2)


@pytest.mark.parametrize("kw", [dict(atol=-1.0), dict(accuracy=0.0), dict(atol=np.nan)])
def test_simulator_refuses_non_positive_tolerances(kw):
    with pytest.raises(ValueError, match="must be (finite and|a number) > 0"):
        Simulator(Integrator(1), **kw)


def test_advance_to_refuses_a_string():
    i = Integrator(1)
    sim = Simulator(i)
    i.get_input_port().fix_value(sim.get_context(), [0.0])
    with pytest.raises(TypeError, match=r"expected a number \(seconds\), got '1'"):
        sim.advance_to("1")


def test_an_empty_diagram_is_refused():
    with pytest.raises(DiagramBuildError, match="cannot build an empty diagram"):
        DiagramBuilder("nothing").build()


def test_finite_horizon_lqr_refuses_tf_before_t0():
    s = LinearSystem(A=[[0.0]], B=[[1.0]], C=[[1.0]])
    c = s.create_default_context()
    s.get_input_port().fix_value(c, [0.0])
    with pytest.raises(ValueError, match="need finite t0 < tf"):
        FiniteHorizonLinearQuadraticRegulator(s, c, 1.0, 0.0, [[1.0]], [[1.0]])


def test_fixing_an_output_port_says_what_to_do():
    i = Integrator(1, name="int")
    with pytest.raises(TypeError, match="output port 'int.y' cannot be fixed"):
        i.get_output_port().fix_value(i.create_default_context(), [1.0])


class _NoneOut(LeafSystem):
    def __init__(self):
        super().__init__("none_out")
        self.declare_output_port("y", 1, lambda c: None)


def test_an_output_calculation_returning_none_is_named():
    s = _NoneOut()
    from systems import PortValueError
    with pytest.raises(PortValueError, match="output port 'y' of system 'none_out': got None"):
        s.get_output_port().eval(s.create_default_context())
