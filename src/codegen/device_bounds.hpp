// pykokkos-fuse device shim, continued (portable.hpp first): PK_BOUNDS_CHECK=1
// in NVRTC kernels, as prelude.hpp does it for Kokkos ones. Views are reached
// through `pk::at`: the first index outside its extent is recorded in
// `pk_oob` (an unmangled global the runtime reads back after the launch,
// exec/device_entry.rs), and the access gets a dummy element instead of
// memory outside the view.
extern "C" {
struct pk_oob_record {
  int set, dim;
  long long index, extent;
  char view[64];
  char where[256];
};
__device__ pk_oob_record pk_oob;
__device__ Kokkos::pk_raw16 pk_oob_dummy[2];  // as large as any element
}
namespace pk {
__device__ inline void pk_copy_str(char* to, const char* from, int cap) {
  int k = 0;
  for (; k + 1 < cap && from[k]; ++k) to[k] = from[k];
  to[k] = 0;
}
template <class V, class... I>
__device__ typename V::reference_type at(const V& v, const char* where, const char* name, I... idx) {
  const int64_t is[] = {(int64_t)idx...};
  for (int d = 0; d < (int)sizeof...(I); ++d) {
    if (is[d] < 0 || is[d] >= v.extent(d)) {
      if (atomicCAS(&pk_oob.set, 0, 1) == 0) {
        pk_oob.dim = d, pk_oob.index = is[d], pk_oob.extent = v.extent(d);
        pk_copy_str(pk_oob.view, name, sizeof pk_oob.view);
        pk_copy_str(pk_oob.where, where, sizeof pk_oob.where);
      }
      return *reinterpret_cast<typename V::non_const_value_type*>(pk_oob_dummy);
    }
  }
  return v(idx...);
}
}  // namespace pk
