"""Numba's type objects, enough to write explicit signatures
(`float64(float64[:], int64)`, `void(f8[:, :])`, strings) that are accepted;
types always come from each call's arguments."""

from __future__ import annotations


class Type:
    __pk_numba_sig__ = True

    def __init__(self, name: str, dtype: str | None, ndim: int = 0):
        self.name, self.__pk_numba_dtype__, self.ndim = name, dtype, ndim

    def __getitem__(self, key):
        n = len(key) if isinstance(key, tuple) else 1
        return Type(f"array({self.name}, {n}d)", self.__pk_numba_dtype__, n)

    def __call__(self, *args):
        return Type(f"{self.name}({', '.join(a.name for a in args)})", self.__pk_numba_dtype__)

    def __repr__(self):
        return self.name


_NAMES = {
    "float64": "float64",
    "float32": "float32",
    "int64": "int64",
    "int32": "int32",
    "int16": "int16",
    "int8": "int8",
    "uint64": "uint64",
    "uint32": "uint32",
    "uint16": "uint16",
    "uint8": "uint8",
    "boolean": "bool",
    "b1": "bool",
    "complex128": "complex128",
    "complex64": "complex64",
    "f8": "float64",
    "f4": "float32",
    "i8": "int64",
    "i4": "int32",
    "u8": "uint64",
    "u4": "uint32",
    "c16": "complex128",
    "c8": "complex64",
    "double": "float64",
    "intp": "int64",
    "uintp": "uint64",
}
TYPES = {k: Type(k, v) for k, v in _NAMES.items()}
TYPES["void"] = Type("void", None)
TYPES["none"] = TYPES["void"]
