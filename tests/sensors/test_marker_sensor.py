"""MarkerSensor: world positions of body-fixed points, numerically and on symbols."""
import casadi as ca
import numpy as np
import pytest

from multibody import models
from multibody.motion import MarkerSetError
from multibody.parsing import parse_urdf
from sensors import MarkerSensor
from systems.symbolic import to_casadi


def test_positions_are_the_body_poses_applied_to_the_offsets():
    tree = parse_urdf(models.model_path("arm7"))
    bodies = [b.name for b in tree.bodies[1:]]
    markers = [(f"m{k}", bodies[k], [0.01 * k, -0.02, 0.05]) for k in range(len(bodies))]
    s = MarkerSensor(tree, markers, name="mocap")
    q = tree.random_configuration(np.random.default_rng(0))
    ctx = s.create_default_context()
    s.get_input_port("state").fix_value(ctx, np.concatenate([q, np.zeros(7)]))
    y = np.asarray(s.get_output_port("positions").eval(ctx), float)
    for k, (_, body, p) in enumerate(markers):
        T = tree.body_pose(body, q)
        np.testing.assert_allclose(y[3 * k:3 * k + 3], T[:3, 3] + T[:3, :3] @ p, atol=1e-12)
    # symbolic: the Jacobian of a marker is the tree's point Jacobian
    cs = to_casadi(s)
    u = cs.symbols["u"]
    J = ca.Function("J", [u], [ca.jacobian(cs.g(0, [], [], u, []), u)])(
        np.concatenate([q, np.zeros(7)]))
    J = np.asarray(J)[3 * 6:3 * 6 + 3, :7]
    np.testing.assert_allclose(J, tree.jacobian(bodies[6], q, markers[6][2])[3:], atol=1e-10)


def test_bad_markers_are_named():
    tree = parse_urdf(models.model_path("arm7"))
    b = tree.bodies[1].name
    with pytest.raises(ValueError, match="marker 'head' is on 'skull', which is not a body"):
        MarkerSensor(tree, [("head", "skull", [0, 0, 0])])
    with pytest.raises(ValueError, match="duplicate marker name 'a'"):
        MarkerSensor(tree, [("a", b, [0, 0, 0]), ("a", b, [0, 0, 1])])
    with pytest.raises(ValueError, match="offset must be 3 finite numbers"):
        MarkerSensor(tree, [("a", b, [0, 0])])
    # the one check shared with MarkerFitter: its named error, naming this sensor
    with pytest.raises(MarkerSetError, match="MarkerSensor 'mocap': no markers given"):
        MarkerSensor(tree, [], name="mocap")
