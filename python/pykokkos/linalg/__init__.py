"""Upstream PyKokkos' `pykokkos.linalg` (BLAS-like routines as kernels)."""
