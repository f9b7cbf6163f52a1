"""Upstream PyKokkos' `pykokkos.interface` module paths, for programs that import from them."""
