"""`python -m pykokkos` tools over the runtime: replay and tune of traces,
the bandwidth bound of `trace summary`, `doctor`, and `migrate` of Numba
programs. Nothing below imports them."""
