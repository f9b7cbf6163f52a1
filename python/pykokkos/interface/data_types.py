"""Upstream's `pykokkos.interface.data_types`: the dtypes under their upstream module path."""
from .._types import DataType  # noqa: F401
from .. import (bool, complex64, complex128, double, float, float32, float64, int8, int16,  # noqa: F401,A004
                int32, int64, uint8, uint16, uint32, uint64)
