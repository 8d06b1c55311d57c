"""What the rigid-body systems share about hosting actuator, sensor and constraint blocks.

Both :class:`~multibody.plants.TimeSteppingRigidBodySystem` and
:class:`~multibody.plants.RigidBodySystem` take blocks built on their tree, check
them the same way, and expose each sensor output port as one of their own outputs.
"""
from __future__ import annotations

from typing import Callable, Iterable, Tuple

from systems import LeafSystem

__all__ = ["check_blocks", "declare_sensor_outputs"]


def check_blocks(nm: str, tree, groups: Iterable[Tuple[str, list]], reserved: Iterable[str],
                 constraint_type: type) -> None:
    """Refuse blocks that do not fit the system (the message starts with ``nm``).

    Every block must be a LeafSystem built on ``tree``, with a name unique among the blocks
    and the system's own ports (``reserved``); constraints must be ``constraint_type``;
    actuators and sensors must take the state [q; v], and actuators must map a ``command``
    to a ``generalized_force`` of size nv.
    """
    names = set(reserved)
    nx, nv = tree.nq + tree.nv, tree.nv
    for role, blocks in groups:
        for blk in blocks:
            if not isinstance(blk, LeafSystem):
                raise TypeError(f"{nm}: {role} {blk!r} is not a LeafSystem block")
            other = getattr(blk, "tree", None)
            if other is not tree:
                raise ValueError(f"{nm}: {role} '{blk.name}' was built on tree "
                                 f"'{getattr(other, 'name', None)}', not on this system's tree "
                                 f"'{tree.name}' (a block built on another tree does not fit)")
            if blk.name in names:
                raise ValueError(f"{nm}: duplicate block or port name '{blk.name}'")
            names.add(blk.name)
            if role == "constraint":
                if not isinstance(blk, constraint_type):
                    raise TypeError(f"{nm}: constraint '{blk.name}' is not a {constraint_type.__name__}")
                continue
            n = blk.get_input_port("state").size
            if n != nx:
                raise ValueError(f"{nm}: {role} '{blk.name}' input 'state' has size {n}, expected "
                                 f"nq + nv = {nx}")
            if role == "actuator":
                if not (blk.has_output_port("generalized_force") and blk.has_input_port("command")):
                    raise ValueError(f"{nm}: actuator '{blk.name}' needs a 'command' input and a "
                                     "'generalized_force' output")
                m = blk.get_output_port("generalized_force").size
                if m != nv:
                    raise ValueError(f"{nm}: actuator '{blk.name}' output 'generalized_force' has "
                                     f"size {m} but tree '{tree.name}' has nv = {nv}")


def declare_sensor_outputs(system: LeafSystem, sensors: list,
                           calc: Callable[[object, LeafSystem, object], object]) -> dict:
    """Declare one output of ``system`` per sensor output port; returns name -> (sensor, port).

    The output is named after the sensor (``"<sensor>_<port>"`` when the sensor has several
    ports) and computed by ``calc(context, sensor, port)``. It feeds through when the sensor
    reads accelerations or contact results (which depend on the inputs).
    """
    ports = {}
    for s in sensors:
        feeds = s.has_input_port("generalized_acceleration") or s.has_input_port("contact_results")
        for port in s.output_ports:
            name = s.name if len(s.output_ports) == 1 else f"{s.name}_{port.name}"
            fn = (lambda c, s=s, port=port: calc(c, s, port))
            if port.size is None:
                system.declare_abstract_output_port(name, fn, feedthrough=feeds)
            else:
                system.declare_output_port(name, port.size, fn, feedthrough=feeds)
            ports[name] = (s, port)
    return ports
