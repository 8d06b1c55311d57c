"""``PidControlledSystem``: a plant closed with a PID controller, as one Diagram (Drake's).

The plant's state output ``[x; xdot]`` (size ``2n``) feeds a :class:`PidController` whose
output, plus a feedforward input, drives the plant's input (size ``n``):

    u = kp (x_d - x) + ki integral (x_d - x) + kd (xdot_d - xdot) + u_ff .

The Diagram exports ``desired_state`` (2n) and ``feedforward_control`` (n) inputs and every
output port of the plant under its own name.
"""
from __future__ import annotations

from typing import Optional

from ..builder import DiagramBuilder
from ..primitives import Adder
from .pid import PidController

__all__ = ["PidControlledSystem"]


def PidControlledSystem(plant, kp, ki, kd, state_output_port_index=0,
                        plant_input_port_index=0, name: Optional[str] = None):
    """Close ``plant`` with a PID (module docstring); returns the Diagram (with attributes
    ``plant`` and ``controller``).

    Parameters
    ----------
    plant : System
    kp, ki, kd : float or array_like (n,)
    state_output_port_index, plant_input_port_index : int or str
        The plant's ``[x; xdot]`` output (size 2n) and its control input (size n).
    name : str, optional

    Raises
    ------
    ValueError
        Port sizes that do not fit (the state output must be twice the input's size).
    """
    y = plant.get_output_port(state_output_port_index)
    u = plant.get_input_port(plant_input_port_index)
    if y.size is None or u.size is None or y.size != 2 * u.size:
        raise ValueError(f"PidControlledSystem of '{plant.name}': the state output "
                         f"'{y.name}' (size {y.size}) must be twice the control input "
                         f"'{u.name}' (size {u.size}): [x; xdot] for n controlled coordinates")
    b = DiagramBuilder(name or f"{plant.name}_pid_controlled")
    b.add_system(plant)
    pid = b.add_system(PidController(kp, ki, kd, name=f"{plant.name}_pid"))
    add = b.add_system(Adder(2, u.size, name=f"{plant.name}_pid_plus_feedforward"))
    b.connect(y, pid.get_input_port("estimated_state"))
    b.connect(pid.get_output_port("control"), add.get_input_port(0))
    b.connect(add.get_output_port(), u)
    b.export_input(pid.get_input_port("desired_state"), "desired_state")
    b.export_input(add.get_input_port(1), "feedforward_control")
    for port in plant.output_ports:
        b.export_output(port, port.name)
    d = b.build()
    d.plant, d.controller = plant, pid
    return d
