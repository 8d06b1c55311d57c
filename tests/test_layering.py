"""The layering rule of ARCHITECTURE.md: the multibody core does not import systems."""
import subprocess
import sys


def test_multibody_core_does_not_import_systems():
    code = ("import sys, multibody, multibody.geometry, multibody.parsing, solvers.lcp, solvers.compiled\n"
            "t = multibody.RigidBodyTree.from_urdf(str(multibody.model_path('acrobot')))\n"
            "t.mass_matrix([0.1, 0.2])\n"
            "bad = sorted(m for m in sys.modules if m == 'systems' or m.startswith('systems.'))\n"
            "print(bad)\n"
            "sys.exit(1 if bad else 0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
