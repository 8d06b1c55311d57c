"""Test configuration: make the tests' helper modules importable."""
import os
import sys

# Small dense linear algebra is much slower with several BLAS threads on a shared 2-core
# machine; tests (and CI) use one.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

sys.path.insert(0, os.path.dirname(__file__))
