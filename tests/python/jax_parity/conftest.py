"""The parity tests import their helpers from this directory (tests/python/conftest.py starts
spmd with 8 CPU devices beside JAX's 8)."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
