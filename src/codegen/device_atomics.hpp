// pykokkos-fuse device shim, continued (device_shim.hpp first): Kokkos'
// atomics for NVRTC kernels.
namespace Kokkos {
// Kokkos' atomics: one read-modify-write of one element, returning the old
// value. The hardware has compare-and-swap on 4 and 8 bytes, so every
// operation is a CAS loop on the aligned word that holds the element (1 and
// 2 bytes: its neighbours are written back unchanged; 16 bytes: a lock);
// adds and integer min/max take CUDA's own instructions where one exists.
// Copies an object's bytes (NVRTC has no memcpy builtin; this compiles to moves).
template <class A, class B>
__device__ __forceinline__ void pk_copy_bytes(A* to, const B* from, unsigned long n) {
  for (unsigned long k = 0; k < n; ++k) ((unsigned char*)to)[k] = ((const unsigned char*)from)[k];
}
template <class W, class T, class F>
__device__ T pk_cas_loop(T* p, F op) {
  W* w = (W*)p;
  W seen, old = *(volatile W*)w;
  do {
    seen = old;
    T cur, next;
    pk_copy_bytes(&cur, &seen, sizeof(T));
    next = op(cur);
    W bits;
    pk_copy_bytes(&bits, &next, sizeof(T));
    old = atomicCAS(w, seen, bits);
  } while (old != seen);
  T r;
  pk_copy_bytes(&r, &old, sizeof(T));
  return r;
}
// 16-byte elements (complex128) have no compare-and-swap on every GPU: as
// Kokkos does, a lock per address (hashed into a table of the module's,
// zeroed at load) guards a plain read and write. The thread that wins the
// lock finishes before it leaves the loop, so threads of one warp that hash
// to the same lock never wait on each other in lockstep.
__device__ unsigned int pk_locks16[4096];
template <class T, class F>
__device__ T pk_atomic16(T* p, F op) {
  unsigned int* lock = &pk_locks16[((unsigned long long)p >> 4) & 4095];
  volatile unsigned long long* at = (volatile unsigned long long*)p;
  T cur;
  for (bool done = false; !done;) {
    if (atomicCAS(lock, 0u, 1u) == 0u) {
      __threadfence();
      unsigned long long w[2] = {at[0], at[1]};
      pk_copy_bytes(&cur, w, 16);
      const T next = op(cur);
      pk_copy_bytes(w, &next, 16);
      at[0] = w[0];
      at[1] = w[1];
      __threadfence();
      atomicExch(lock, 0u);
      done = true;
    }
  }
  return cur;
}
template <class T, class F>
__device__ T pk_atomic(T* p, F op) {
  static_assert(sizeof(T) <= 8 || sizeof(T) == 16, "no NVRTC atomics on elements of this size");
  if constexpr (sizeof(T) == 16) {
    return pk_atomic16(p, op);
  } else if constexpr (sizeof(T) == 8) {
    return pk_cas_loop<unsigned long long>(p, op);
  } else if constexpr (sizeof(T) == 4) {
    return pk_cas_loop<unsigned int>(p, op);
  } else {
    const unsigned long long at = (unsigned long long)p;
    unsigned int* w = (unsigned int*)(at & ~3ull);
    const unsigned shift = (unsigned)(at & 3) * 8;
    const unsigned mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned int seen, old = *(volatile unsigned int*)w;
    T cur;
    do {
      seen = old;
      unsigned int part = (seen & mask) >> shift;
      pk_copy_bytes(&cur, &part, sizeof(T));
      const T next = op(cur);
      unsigned int bits = 0;
      pk_copy_bytes(&bits, &next, sizeof(T));
      old = atomicCAS(w, seen, (seen & ~mask) | ((bits << shift) & mask));
    } while (old != seen);
    return cur;
  }
}
template <class T>
struct pk_hw_add {  // the types atomicAdd takes (as themselves or as bits)
  static constexpr bool value = pk_same<T, float>::value || pk_same<T, double>::value ||
                                pk_same<T, int>::value || pk_same<T, unsigned int>::value ||
                                pk_same<T, long>::value || pk_same<T, unsigned long>::value;
};
template <class T>
__device__ T atomic_fetch_add(T* p, T v) {
  if constexpr (pk_same<T, long>::value || pk_same<T, unsigned long>::value) {
    return (T)atomicAdd((unsigned long long*)p, (unsigned long long)v);
  } else if constexpr (pk_hw_add<T>::value) {
    return atomicAdd(p, v);
  } else {
    return pk_atomic(p, [v](T x) { return (T)(x + v); });
  }
}
template <class T>
__device__ T atomic_fetch_sub(T* p, T v) {
  if constexpr (pk_hw_add<T>::value && !pk_same<T, float>::value && !pk_same<T, double>::value) {
    return atomic_fetch_add(p, (T)(T(0) - v));
  } else {
    return pk_atomic(p, [v](T x) { return (T)(x - v); });
  }
}
template <class T>
__device__ T atomic_fetch_max(T* p, T v) {
  if constexpr (pk_same<T, int>::value || pk_same<T, unsigned int>::value) {
    return atomicMax(p, v);
  } else if constexpr (pk_same<T, long>::value) {
    return (T)atomicMax((long long*)p, (long long)v);
  } else if constexpr (pk_same<T, unsigned long>::value) {
    return (T)atomicMax((unsigned long long*)p, (unsigned long long)v);
  } else {
    return pk_atomic(p, [v](T x) { return x > v ? x : v; });
  }
}
template <class T>
__device__ T atomic_fetch_min(T* p, T v) {
  if constexpr (pk_same<T, int>::value || pk_same<T, unsigned int>::value) {
    return atomicMin(p, v);
  } else if constexpr (pk_same<T, long>::value) {
    return (T)atomicMin((long long*)p, (long long)v);
  } else if constexpr (pk_same<T, unsigned long>::value) {
    return (T)atomicMin((unsigned long long*)p, (unsigned long long)v);
  } else {
    return pk_atomic(p, [v](T x) { return x < v ? x : v; });
  }
}
#define PK_ATOMIC(name, expr) \
  template <class T>          \
  __device__ T atomic_fetch_##name(T* p, T v) { return pk_atomic(p, [v](T x) { return (T)(expr); }); }
PK_ATOMIC(mul, x * v) PK_ATOMIC(div, x / v) PK_ATOMIC(and, x & v) PK_ATOMIC(or, x | v)
PK_ATOMIC(xor, x ^ v) PK_ATOMIC(lshift, x << v) PK_ATOMIC(rshift, x >> v)
#undef PK_ATOMIC
template <class T>
__device__ void atomic_increment(T* p) { (void)atomic_fetch_add(p, (T)1); }
template <class T>
__device__ void atomic_decrement(T* p) { (void)atomic_fetch_sub(p, (T)1); }
template <class T>
__device__ T atomic_exchange(T* p, T v) { return pk_atomic(p, [v](T) { return v; }); }
// Compares bits, as Kokkos' CUDA form does (atomicCAS on the word).
template <class T>
__device__ T atomic_compare_exchange(T* p, T cmp, T v) {
  return pk_atomic(p, [cmp, v](T x) {
    const unsigned char *a = (const unsigned char*)&x, *b = (const unsigned char*)&cmp;
    for (unsigned k = 0; k < sizeof(T); ++k)
      if (a[k] != b[k]) return x;
    return v;
  });
}
}  // namespace Kokkos
