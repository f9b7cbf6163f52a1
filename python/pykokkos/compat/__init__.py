"""PyKokkos' names beyond the runtime's own (`pk.*` helpers, enums, the
decorator checks upstream code calls). It sits on the runtime; the upstream
module paths `pykokkos.interface` and `pykokkos.linalg` sit on the public API."""
