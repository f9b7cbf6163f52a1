"""Upstream's `pykokkos.interface.data_types`: the dtypes under their upstream module path."""

# (re-exports: every name here is imported to be found under this module path)
from ..runtime._types import DataType  # noqa: F401
from .. import (  # noqa: F401
    bool,
    complex64,
    complex128,
    double,
    float,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
