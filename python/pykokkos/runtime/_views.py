"""Views: Rust-owned memory with NumPy-like host behaviour."""

from __future__ import annotations

import operator

import numpy as np

from .. import _native
from ._types import DataType, LayoutDefault, LayoutLeft, MemorySpace, Trait, cuda_default, dtype_code, get_default_precision, numpy_dtype

# Kokkos' default layout is LayoutLeft in GPU memory (neighbouring threads, the
# first index, then touch neighbouring elements) and LayoutRight on the host:
# a View made without a layout takes its space's, as in PyKokkos, where the
# space is the default space's memory unless given.
_DEVICE_SPACES = (MemorySpace.CudaSpace, MemorySpace.CudaUVMSpace)


_native_new = _native.View.__new__


def _extents(shape) -> list[int]:
    """A shape's extents as NumPy takes them: integers (a float, a string or
    another non-integer is a TypeError, not truncated)."""
    try:
        return [operator.index(n) for n in shape]
    except TypeError:
        raise TypeError(f"a View's shape holds integers, not {list(shape)!r}") from None


def _normalize_args(shape, dtype, space, layout):
    if isinstance(shape, (int, np.integer)):
        shape = [int(shape)]
    elif shape is None or isinstance(shape, (str, bytes)):
        raise TypeError(f"pk.View needs a shape: an int or a list of ints, not {shape!r}")
    shape = _extents(shape)
    if dtype is None:  # PyKokkos' default precision (pk.set_default_precision)
        dtype = get_default_precision()
    # HostSpace 0, CudaSpace 1 (mirrored on the device by CUDA launches), CudaUVMSpace 2.
    space_code = space.value if isinstance(space, MemorySpace) else 0
    if layout is None or layout is LayoutDefault:
        left = space in _DEVICE_SPACES if space is not None else cuda_default()
        return shape, dtype_code(dtype), int(left), space_code
    return shape, dtype_code(dtype), 1 if layout is LayoutLeft else 0, space_code


def _make(cls, new, shape, dtype, space, layout, trait):
    shape, code, layout_code, space_code = _normalize_args(shape, dtype, space, layout)
    return _with_trait(new(cls, shape, code, layout_code, space_code=space_code), trait)


class View(_native.View):
    """`pk.View(shape, dtype=pk.double, space=..., layout=..., trait=...)`: zero-filled."""

    def __new__(cls, shape=None, dtype=None, space=None, layout=None, trait=None, **internal):
        # The common `pk.View([n, ...], pk.double)` in one native call (temporaries
        # made in loops pay for every step of the general path below).
        if (
            cls is View
            and type(shape) is list
            and type(dtype) is DataType
            and space is None
            and layout is None
            and trait is None
            and not internal
            and (len(shape) < 2 or not cuda_default())
        ):
            try:  # ints (and __index__ types) go as they are
                return _native_new(cls, shape, dtype._value_)
            except TypeError:  # the rest as the general path takes them
                return _native_new(cls, _extents(shape), dtype._value_)
        if internal and cls.__init__ is View.__init__:
            return super().__new__(cls, **internal)
        if cls.__init__ is not View.__init__:
            # A subclass with its own constructor (`class MyView(pk.View)` whose
            # __init__ calls super().__init__(shape, dtype)): the memory comes then.
            v = super().__new__(cls, [0], dtype_code(DataType.float64))
            v._unsized = True
            return v
        return _make(cls, super().__new__, shape, dtype, space, layout, trait)

    def __init__(self, shape=None, dtype=None, space=None, layout=None, trait=None, **internal):
        if getattr(self, "_unsized", False) and not internal:
            if shape is None:
                raise TypeError(f"{type(self).__name__}.__init__ must call super().__init__(shape, dtype)")
            shape, code, layout_code, space_code = _normalize_args(shape, dtype, space, layout)
            self._reset(shape, code, layout_code, space_code)
            self._unsized = False
            _with_trait(self, trait)

    # --- metadata (never forces pending work; `shape` is the native class') ---
    @property
    def dtype(self) -> DataType:
        return DataType(self._dtype_code)

    @property
    def layout(self):
        from ._types import LayoutLeft, LayoutRight

        return LayoutLeft if self._layout_code == LayoutLeft.value else LayoutRight

    @property
    def size(self) -> int:
        n = 1
        for e in self.shape:
            n *= e
        return n

    @property
    def ndim(self) -> int:
        return self.rank()

    # --- host access (through the buffer protocol) ---
    def _np(self) -> np.ndarray:
        # Sync first: NumPy swallows errors raised inside the buffer protocol.
        self._sync()
        return np.asarray(self)

    def _np_read(self) -> np.ndarray:
        # For reads the package makes and drops at once (indexing, printing,
        # comparing): a device copy of this view stays current, so the next GPU
        # launch copies nothing over. Never hand the array to the user.
        self._sync_read()
        return np.asarray(self)

    @property
    def data(self) -> np.ndarray:
        return self._np()

    @data.setter
    def data(self, values) -> None:
        """`v.data = a` (or `v.data += a`): the elements take `a`'s values."""
        arr = self._np()
        if values is not arr:
            arr[...] = values

    def resize(self, dimension: int, size: int) -> None:
        """Kokkos::resize of one dimension: new memory of the new shape, the
        elements both shapes have kept (the rest zero). Subviews taken before
        keep the old memory, as in Kokkos."""
        shape = list(self.shape)
        shape[int(dimension)] = int(size)
        atomic = self._atomic
        # Written by GPU kernels: the copy happens there (no round trip through the host).
        if not self._resize_on_device(shape, self.dtype.value, self._layout_code):
            old = np.array(self._np_read())
            self._reset(shape, self.dtype.value, self._layout_code, 0)
            keep = tuple(slice(0, min(a, b)) for a, b in zip(old.shape, shape))
            self._np()[keep] = old[keep]
        if atomic:
            self._set_atomic()

    def __deepcopy__(self, memo):
        # PyKokkos hands back the same View (its Views are handles on Kokkos memory).
        return self

    def __array__(self, dtype=None, copy=None):
        self._sync()
        a = np.asarray(memoryview(self))
        return a if dtype is None else a.astype(dtype)

    def _normalize(self, key):
        """Turns a key into subview lists, or None for a single element."""
        if not isinstance(key, tuple):
            key = (key,)
        shape = self.shape
        if any(k is Ellipsis for k in key):
            at = next(d for d, k in enumerate(key) if k is Ellipsis)
            fill = (slice(None),) * (len(shape) - len(key) + 1)
            key = key[:at] + fill + key[at + 1 :]
        if len(key) > len(shape):
            raise IndexError(f"too many indices for a View with {len(shape)} dimension(s)")
        start, length, step, keep = [], [], [], []
        for d, n in enumerate(shape):
            k = key[d] if d < len(key) else slice(None)
            if isinstance(k, slice):
                b, e, s = k.indices(n)
                start.append(b)
                length.append(len(range(b, e, s)))
                step.append(s)
                keep.append(True)
            else:
                i = int(k)
                if i < 0:
                    i += n
                if not 0 <= i < n:
                    raise IndexError(f"index {k} is out of bounds for dimension {d} with size {n}")
                start.append(i)
                length.append(1)
                step.append(1)
                keep.append(False)
        return start, length, step, keep

    # `v[i]` / `v[i] = x` for one element are served by the native class;
    # every other key comes here.
    def _getitem(self, key):
        if any(_advanced(k) for k in (key if isinstance(key, tuple) else (key,))):
            # A mask or an index array (`X[y == c, :]`): NumPy's advanced
            # indexing, a copy, as upstream's Views (NumPy arrays) give.
            r = self._np_read()[key]
            return array(np.ascontiguousarray(r)) if isinstance(r, np.ndarray) and r.ndim else r
        start, length, step, keep = self._normalize(key)
        if not any(keep):
            return self._np_read()[tuple(start)]
        return View(parent=self, start=start, length=length, step=step, keep=keep)

    def _setitem(self, key, value):
        self._np()[key] = value

    def __iter__(self):
        if self.rank() == 1:
            return iter(self._np_read().copy())
        return (self[i] for i in range(len(self)))

    def __str__(self) -> str:
        return str(self._np_read())

    def __repr__(self) -> str:
        return f"View({self._np_read()!r}, dtype=pk.{self.dtype.name})"

    def __float__(self) -> float:
        return float(self._np_read())

    def __eq__(self, other):
        return self._np_read() == (other._np_read() if isinstance(other, View) else other)

    __hash__ = None

    def fill(self, value) -> None:
        # On the GPU (GPU kernels have its memory, or are where this program's
        # kernels run) a kernel fills it there.
        if self._on_device or (cuda_default() and not self._is_foreign):
            from ._fill import fill

            if fill(self, value, numpy_dtype(self._dtype_code)):
                return
        self._np().fill(value)

    def copy(self) -> "View":
        out = View(self.shape, self.dtype, layout=self.layout)
        out._np()[...] = self._np_read()
        return out

    def to_numpy(self) -> np.ndarray:
        return self._np()


def _as_view(array) -> View:
    if isinstance(array, View):
        return array
    a = np.asarray(array)
    if not a.flags.writeable:
        a = a.copy()
    if a.ndim == 0:
        a = a.reshape(1)
    return View(wrap=a)


def array(array, dtype=None, space=None, layout=None, trait=None) -> View:
    """Wraps an ndarray without copying (a copy only if dtype asks for another type);
    a CuPy array (anything with `__cuda_array_interface__`) in place, for Cuda kernels."""
    if not isinstance(array, View) and hasattr(array, "__cuda_array_interface__"):
        if dtype is not None:
            array = array.astype(numpy_dtype(dtype_code(dtype)), copy=False)
        return _with_trait(View(wrap=array), trait)
    a = np.asarray(array)
    if dtype is not None and a.dtype != numpy_dtype(dtype_code(dtype)):
        a = a.astype(numpy_dtype(dtype_code(dtype)))
    # `a` is an ndarray here, so the View is a fresh wrapper: a trait marks only it.
    return _with_trait(_as_view(a), trait)


def _with_trait(v: View, trait) -> View:
    """Applies `trait=`: pk.Atomic makes `v[i] op= x` in kernels atomic; RandomAccess,
    Restrict and Unmanaged are performance hints with no effect on results."""
    if trait is Trait.Atomic:
        v._set_atomic()
    elif trait is not None and not isinstance(trait, Trait):
        raise TypeError(f"trait must be pk.Atomic, pk.RandomAccess, pk.Restrict or pk.Unmanaged, got {trait!r}")
    return v


asarray = array
from_numpy = array


def zeros(shape, dtype=DataType.float64, **kw) -> View:
    return View(shape, dtype, **kw)


def ones(shape, dtype=DataType.float64, **kw) -> View:
    return full(shape, 1, dtype, **kw)


def full(shape, fill_value, dtype=DataType.float64, **kw) -> View:
    v = View(shape, dtype, **kw)
    v.fill(fill_value)
    return v


def _advanced(k) -> bool:
    """An index NumPy treats as advanced indexing (or a new axis)."""
    return k is None or isinstance(k, (list, np.ndarray, View))
