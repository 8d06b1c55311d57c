"""With one velocity the matrix-valued algorithms keep their documented 2-D shapes."""
import numpy as np

from multibody import Revolute, RigidBodyTree


def test_matrix_results_are_two_dimensional_with_one_velocity():
    t = RigidBodyTree("p")
    t.add_body("link", 1.0, com=(0, 0, -0.5), inertia=np.eye(3) * 0.01)
    t.add_joint(Revolute("j", "world", "link", axis=(0, 1, 0)))
    q, v = np.array([0.3]), np.array([0.7])
    assert t.mass_matrix(q).shape == (1, 1)
    assert t.jacobian("link", q).shape == (6, 1)
    assert t.jacobian("link", q, [0.1, 0, 0]).shape == (6, 1)
    assert t.center_of_mass_jacobian(q).shape == (3, 1)
    assert t.momentum_matrix(q).shape == (6, 1)
    assert t.coriolis_matrix(q, v).shape == (1, 1)
    np.testing.assert_allclose(t.mass_matrix(q), [[0.01 + 0.25]], atol=1e-12)
    np.testing.assert_allclose(t.jacobian("link", q, [0, 0, -0.5])[3:, 0],
                               [-0.5 * np.cos(0.3), 0, 0.5 * np.sin(0.3)], atol=1e-12)
