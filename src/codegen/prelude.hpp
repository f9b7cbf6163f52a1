// pykokkos-fuse prelude: included by every generated kernel (and precompiled).
// Python semantics that C++ lacks live here, once, instead of in each kernel.
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <type_traits>
#include <cstdlib>
#include <new>


// Kokkos 3.4 has no reduction identities for bool: pk.Acc[pk.bool] under
// reducer=pk.LAnd/LOr (and the other built-in reducers) needs them.
namespace Kokkos {
template <>
struct reduction_identity<bool> {
  KOKKOS_FORCEINLINE_FUNCTION constexpr static bool sum() { return false; }
  KOKKOS_FORCEINLINE_FUNCTION constexpr static bool prod() { return true; }
  KOKKOS_FORCEINLINE_FUNCTION constexpr static bool max() { return false; }
  KOKKOS_FORCEINLINE_FUNCTION constexpr static bool min() { return true; }
  KOKKOS_FORCEINLINE_FUNCTION constexpr static bool bor() { return false; }
  KOKKOS_FORCEINLINE_FUNCTION constexpr static bool band() { return true; }
  KOKKOS_FORCEINLINE_FUNCTION constexpr static bool lor() { return false; }
  KOKKOS_FORCEINLINE_FUNCTION constexpr static bool land() { return true; }
};
}  // namespace Kokkos

namespace pk {
namespace km = Kokkos::Experimental;

// View locals of kernels: a strided, unmanaged view of V's element type with R
// dimensions, so any subview of V (or V itself) can be assigned to it.
template <class T, int R>
struct add_ptrs {
  using type = typename add_ptrs<T*, R - 1>::type;
};
template <class T>
struct add_ptrs<T, 0> {
  using type = T;
};
template <class V, int R>
using strided_t = Kokkos::View<typename add_ptrs<typename V::non_const_value_type, R>::type,
                               Kokkos::LayoutStride, typename V::device_type,
                               Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The last failure message of this kernel library, for the runtime to report.
inline char* last_error() {
  static thread_local char buf[1024];
  return buf;
}
inline int fail(const char* what) {
  std::snprintf(last_error(), 1024, "%s", what);
  return 1;
}
// Ctrl-C inside one long host kernel (src/interrupt.rs). The runtime hands
// each kernel library its SIGINT flag and the question "does the program
// want to stop?" (pk_set_stop, called once at load). Host dispatches test the
// flag at each task (a chunk of items or of rows: one relaxed load there, not
// per item): once it is up, tasks not yet begun are skipped and noted, and
// after the dispatch the runtime is asked. Stop: the entry point returns
// STOPPED and the launch is reported as run in part. Go on (the program
// handles SIGINT itself, or another thread launched): the skipped tasks run
// then, so the kernel still runs every item once.
constexpr int STOPPED = 4;
struct StopHooks {
  const unsigned char* flag;
  int (*ask)();
};
inline StopHooks& stop_hooks() {
  static StopHooks h{nullptr, nullptr};
  return h;
}
KOKKOS_INLINE_FUNCTION bool stop_seen() {
#ifdef __CUDA_ARCH__
  return false;  // host dispatches only
#else
  const unsigned char* f = stop_hooks().flag;
  return f != nullptr && __atomic_load_n(f, __ATOMIC_RELAXED) != 0;
#endif
}
// PK_BOUNDS_CHECK=1 kernels reach view elements through `at`: an index
// outside its extent is recorded (the first one) and answered with a dummy
// element instead of touching memory; the entry point then fails with code 2.
// Host kernels record in a host struct, device kernels in a device one (its
// strings copied, as device code cannot hand out pointers the host can read).
struct oob_info {
  int set;
  int dim;
  int64_t index, extent;
  const char* view;
  const char* where;
};
inline oob_info& oob() {
  static oob_info o{0, 0, 0, 0, nullptr, nullptr};
  return o;
}
#if defined(KOKKOS_ENABLE_CUDA)
struct dev_oob_info {
  int set;
  int dim;
  long long index, extent;
  char view[64];
  char where[256];
};
static __device__ dev_oob_info dev_oob;
static __device__ double dev_dummy[4];  // as large as any element type
KOKKOS_INLINE_FUNCTION void copy_str(char* to, const char* from, int cap) {
  int k = 0;
  for (; k + 1 < cap && from[k]; ++k) to[k] = from[k];
  to[k] = 0;
}
#endif
template <class V, class... I>
KOKKOS_INLINE_FUNCTION typename V::reference_type at(const V& v, const char* where, const char* name, I... idx) {
  const int64_t is[] = {(int64_t)idx...};
  for (int d = 0; d < (int)sizeof...(I); ++d) {
    if (is[d] < 0 || is[d] >= (int64_t)v.extent(d)) {
#if defined(__CUDA_ARCH__)
      if (atomicCAS(&dev_oob.set, 0, 1) == 0) {
        dev_oob.dim = d, dev_oob.index = is[d], dev_oob.extent = (long long)v.extent(d);
        copy_str(dev_oob.view, name, sizeof dev_oob.view);
        copy_str(dev_oob.where, where, sizeof dev_oob.where);
      }
      return *reinterpret_cast<typename V::non_const_value_type*>(dev_dummy);
#else
      if (Kokkos::atomic_compare_exchange(&oob().set, 0, 1) == 0) {
        oob_info& o = oob();
        o.dim = d, o.index = is[d], o.extent = (int64_t)v.extent(d), o.view = name, o.where = where;
      }
      static thread_local typename V::non_const_value_type dummy;
      return dummy;
#endif
    }
  }
  return v(idx...);
}
inline int oob_report(long long index, int dim, const char* view, long long extent, const char* where) {
  char buf[400];
  std::snprintf(buf, sizeof buf, "index %lld is out of bounds for dimension %d of view '%s' with size %lld (%s)",
                index, dim, view, extent, where);
  fail(buf);
  return 2;
}
// After a dispatch: the recorded out-of-bounds access, as the entry's failure.
inline int oob_check() {
#if defined(KOKKOS_ENABLE_CUDA)
  dev_oob_info d;
  Kokkos::fence();
  if (cudaMemcpyFromSymbol(&d, dev_oob, sizeof d) == cudaSuccess && d.set) {
    const dev_oob_info clear{};
    cudaMemcpyToSymbol(dev_oob, &clear, sizeof clear);
    return oob_report(d.index, d.dim, d.view, d.extent, d.where);
  }
#endif
  oob_info& o = oob();
  if (!o.set) return 0;
  o.set = 0;
  return oob_report((long long)o.index, o.dim, o.view, (long long)o.extent, o.where);
}
// A 1-D reduction on the host, element by element in chunks: each chunk sums
// into locals of its own, whose addresses never escape, so the compiler keeps
// them in registers even when the body stores to views (Kokkos' own loop
// accumulates into memory the stores might alias, and runs latency-bound).
// Four partial sums, added at the end of the chunk, break the chain of
// dependent additions (the work items still run in index order).
template <class F, class T>
struct Chunked {
  F f;
  int64_t lo, hi, chunk;
  // Chunk c of the launch is chunk (c % per) * threads + c / per of the range
  // when interleaved (threads = 1: in order), see chunked_reduce.
  int64_t per, threads, chunks;
  KOKKOS_INLINE_FUNCTION void operator()(const int64_t c, T& acc) const {
    const int64_t rc = (c % per) * threads + c / per;
    if (rc >= chunks) return;
    T s0 = T(), s1 = T(), s2 = T(), s3 = T();
    const int64_t b = lo + rc * chunk;
    const int64_t e = b + chunk < hi ? b + chunk : hi;
    // A copy of the functor in a local: a body's stores through a view
    // cannot alias its scalar members or view handles then, which stay in
    // registers (read through `this`, each store forces them to be reloaded).
    const F g = f;
    int64_t i = b;
    for (; i + 3 < e; i += 4) {
      g(i, s0);
      g(i + 1, s1);
      g(i + 2, s2);
      g(i + 3, s3);
    }
    for (; i < e; ++i) g(i, s0);
    acc += (s0 + s1) + (s2 + s3);
  }
};
// Large ranges: chunks of 4096 items, each thread a contiguous run of them (the
// pages it touched first). Ranges up to 2^20 items: at least 16 chunks per
// thread, so that a short range of costly items spreads over every thread
// and Ctrl-C is seen between chunks; each thread takes a contiguous run of
// them, or, for items of uneven cost (a triangular pair loop), chunks dealt
// out in turn (thread t takes chunks t, t + T, ...). Either way the static
// schedule keeps the order of the additions, and so the total, the same
// from run to run.
// Host launches of at most this many items run in place, on the launching
// thread: handing them to the OpenMP threads (a fork and a barrier) costs
// more than their work. Kokkos' parallel_for promises no order, so running
// them in order is one of its schedules.
constexpr int64_t SERIAL_ITEMS = 128;
// A 1-D for on the host in chunks laid out as chunked_reduce's, each chunk
// through a local copy of the functor (see Chunked): Kokkos' own loop calls
// the functor in place, where a store through a view may alias its scalar
// members, so they are reloaded after every store and the loop does not
// vectorize.
// Each task (chunk) first tests the stop flag (see StopHooks): once it is
// up, the task is noted in `skipped` instead of run. A resumed dispatch runs
// only the tasks `only` names.
template <class F>
struct ChunkedFor {
  F f;
  int64_t lo, hi, chunk, per, threads, chunks;
  unsigned char* skipped;
  const unsigned char* only;
  KOKKOS_INLINE_FUNCTION void operator()(const int64_t c) const {
    if (only && !only[c]) return;
    if (stop_seen()) {
      skipped[c] = 1;
      return;
    }
    task(c);
  }
  // Out of line: the loop's registers are allotted as if the tests above
  // were not there (inlined, they cost a 2-D stencil 20-30%).
  __attribute__((noinline)) void task(const int64_t c) const {
    const int64_t rc = (c % per) * threads + c / per;
    if (rc >= chunks) return;
    const F g       = f;
    const int64_t b = lo + rc * chunk;
    const int64_t e = b + chunk < hi ? b + chunk : hi;
    for (int64_t i = b; i < e; ++i) g(i);
  }
};
// How a host range of `items` splits into chunks: (chunk, threads dealt
// over, chunks, chunks per thread); see chunked_reduce. Only `uneven` items
// (the generator's Unit::uneven) are dealt out. The others run as Kokkos'
// static schedule runs them, a contiguous run per thread: dealt
// chunks of cheap items that store to views interleave the threads' stores
// a few words apart, so the cache lines they share move between cores on
// every store (a halo copy of 800 items on 2 threads: 34 us dealt, 5 us in
// runs), and the next kernel finds its items in the other core's cache.
template <class Space>
inline void host_chunks(int64_t items, int64_t& chunk, int64_t& t, int64_t& chunks, int64_t& per,
                        bool uneven) {
  const int64_t threads = Space().concurrency() > 0 ? int64_t(Space().concurrency()) : 1;
  const bool small      = items <= (int64_t(1) << 20) && threads > 1;
  chunk                 = 4096;
  if (small) {
    chunk = (items + 16 * threads - 1) / (16 * threads);
    chunk = chunk < 1 ? 1 : (chunk > 4096 ? 4096 : chunk);
  }
  chunks = (items + chunk - 1) / chunk;
  t      = small && uneven ? threads : 1;
  per    = (chunks + t - 1) / t;
}
// The tasks of one host dispatch a raised stop flag skipped, and what comes
// next (see StopHooks): per task a byte, on the stack up to 256 tasks, on
// the heap past that. Not a template: a kernel library compiles it once.
class Tasks {
 public:
  explicit Tasks(int64_t n) : n_(n), at_(few_), other_(nullptr), heap_{nullptr, nullptr} {
    if (n > 256) {
      heap_[0] = static_cast<unsigned char*>(std::calloc(size_t(n), 1));
      if (!heap_[0]) throw std::bad_alloc();
      at_ = heap_[0];
    } else if (n > 0) {
      std::memset(few_, 0, size_t(n));
    }
  }
  ~Tasks() { std::free(heap_[0]), std::free(heap_[1]); }
  Tasks(const Tasks&) = delete;
  Tasks& operator=(const Tasks&) = delete;
  unsigned char* skipped() const { return at_; }
  // After a dispatch that saw the flag: true to dispatch again, running the
  // tasks `only` names and noting in `skipped` those skipped once more;
  // false when every task has run, or when the program stops (stopped()).
  // The runtime's answer takes the flag down; another signal may raise it.
  bool again(const unsigned char*& only, unsigned char*& skipped) {
    bool any = false;
    for (int64_t t = 0; t < n_ && !any; ++t) any = skipped[t] != 0;
    if (!any) return false;  // the signal came after the last task began
    if (stop_hooks().ask && stop_hooks().ask()) return stopped_ = true, false;
    if (!other_) {
      other_ = n_ > 256 ? heap_[1] = static_cast<unsigned char*>(std::calloc(size_t(n_), 1)) : more_;
      if (!other_) throw std::bad_alloc();
    }
    unsigned char* next = skipped == at_ ? other_ : at_;
    std::memset(next, 0, size_t(n_));
    only = skipped, skipped = next;
    return true;
  }
  bool stopped() const { return stopped_; }

 private:
  int64_t n_;
  unsigned char* at_;
  unsigned char* other_;
  unsigned char* heap_[2];
  bool stopped_ = false;
  unsigned char few_[256];
  unsigned char more_[256];
};
// One Kokkos dispatch of tasks 0..n, out of line: a kernel's entry point
// calls it once or again (see Tasks) without a second inlined copy of
// Kokkos' dispatch code to optimize.
template <class Space, class T>
__attribute__((noinline)) void dispatch_tasks(const char* label, const T& body, int64_t n) {
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Space, Kokkos::IndexType<int64_t>>(0, n), body);
}
// `uneven`: whether items may cost unequal amounts (see host_chunks).
template <class Space, class F>
int host_for(const char* label, const F& f, int64_t lo, int64_t hi, bool uneven) {
  if (hi - lo <= SERIAL_ITEMS) {
    const F g = f;
    for (int64_t i = lo; i < hi; ++i) g(i);
    return 0;
  }
  int64_t chunk, t, chunks, per;
  host_chunks<Space>(hi - lo, chunk, t, chunks, per, uneven);
  Tasks tasks(per * t);
  ChunkedFor<F> c{f, lo, hi, chunk, per > 0 ? per : 1, t, chunks, tasks.skipped(), nullptr};
  do dispatch_tasks<Space>(label, c, per * t);
  while (stop_seen() && tasks.again(c.only, c.skipped));
  return tasks.stopped() ? STOPPED : 0;
}
// A 2-D host range in tasks of whole rows (columns when `left`: the index
// that moves fastest in memory is the inner one), or of pieces of rows when
// there are few of them (every thread gets work), or of several short rows
// (about 2048 items a task: a copy of the functor per row would cost more
// than the row). Each task runs through a local copy of the functor, as in
// ChunkedFor (Kokkos' MDRange tiles call it in place). The static schedule
// keeps a reduction's order, and so its total, the same from run to run.
struct Tasks2 {
  int64_t lo0, lo1, hi0, hi1;
  int64_t per, piece, pieces, tasks;  // rows per task; inner items per piece, pieces per row
  bool left;
  Tasks2(const int64_t* lo, const int64_t* hi, bool l) : lo0(lo[0]), lo1(lo[1]), hi0(hi[0]), hi1(hi[1]), left(l) {
    const int64_t n0 = hi0 > lo0 ? hi0 - lo0 : 0, n1 = hi1 > lo1 ? hi1 - lo1 : 0;
    const int64_t outer = left ? n1 : n0, inner = left ? n0 : n1;
    piece  = outer >= 64 || inner <= 4096 ? inner : 4096;
    pieces = piece > 0 ? (inner + piece - 1) / piece : 0;
    per    = piece >= 2048 || piece == 0 ? 1 : (2048 + piece - 1) / piece;
    tasks  = outer > 0 && inner > 0 ? (outer + per - 1) / per * pieces : 0;
  }
  int64_t items() const { return (hi0 > lo0 ? hi0 - lo0 : 0) * (hi1 > lo1 ? hi1 - lo1 : 0); }
  // Task t: outer indices [ob, oe), inner indices [ib, ie).
  KOKKOS_INLINE_FUNCTION void bounds(int64_t t, int64_t& ob, int64_t& oe, int64_t& ib, int64_t& ie) const {
    const int64_t oend = left ? hi1 : hi0, iend = left ? hi0 : hi1;
    ob = (left ? lo1 : lo0) + (t / pieces) * per;
    oe = ob + per < oend ? ob + per : oend;
    ib = (left ? lo0 : lo1) + (t % pieces) * piece;
    ie = ib + piece < iend ? ib + piece : iend;
  }
};
template <class F>
struct Rows2 {
  F f;
  Tasks2 k;
  unsigned char* skipped;  // see ChunkedFor
  const unsigned char* only;
  KOKKOS_INLINE_FUNCTION void operator()(const int64_t t) const {
    if (only && !only[t]) return;
    if (skipped && stop_seen()) {  // (none in place: see host_for2)
      skipped[t] = 1;
      return;
    }
    task(t);
  }
  __attribute__((noinline)) void task(const int64_t t) const {  // see ChunkedFor::task
    const F g = f;
    int64_t ob, oe, ib, ie;
    k.bounds(t, ob, oe, ib, ie);
    for (int64_t o = ob; o < oe; ++o) {
      if (k.left)
        for (int64_t i = ib; i < ie; ++i) g(i, o);
      else
        for (int64_t j = ib; j < ie; ++j) g(o, j);
    }
  }
};
template <class Space, class F>
int host_for2(const char* label, const F& f, const int64_t* lo, const int64_t* hi, bool left) {
  const Tasks2 k(lo, hi, left);
  if (k.items() <= SERIAL_ITEMS) {
    // In place, and not stopped part way (it is short).
    const Rows2<F> r{f, k, nullptr, nullptr};
    for (int64_t t = 0; t < k.tasks; ++t) r(t);
    return 0;
  }
  Tasks tasks(k.tasks);
  Rows2<F> r{f, k, tasks.skipped(), nullptr};
  do dispatch_tasks<Space>(label, r, k.tasks);
  while (stop_seen() && tasks.again(r.only, r.skipped));
  return tasks.stopped() ? STOPPED : 0;
}
// A 2-D sum on the host (bodies that only add to their accumulator): tasks
// as host_for2's, each into four partial sums of its own (see Chunked).
template <class F, class T>
struct Rows2Sum {
  F f;
  Tasks2 k;
  KOKKOS_INLINE_FUNCTION void operator()(const int64_t t, T& acc) const {
    const F g = f;
    T s0 = T(), s1 = T(), s2 = T(), s3 = T();
    int64_t ob, oe, ib, ie;
    k.bounds(t, ob, oe, ib, ie);
    for (int64_t o = ob; o < oe; ++o) {
      int64_t x = ib;
      if (k.left) {
        for (; x + 3 < ie; x += 4) g(x, o, s0), g(x + 1, o, s1), g(x + 2, o, s2), g(x + 3, o, s3);
        for (; x < ie; ++x) g(x, o, s0);
      } else {
        for (; x + 3 < ie; x += 4) g(o, x, s0), g(o, x + 1, s1), g(o, x + 2, s2), g(o, x + 3, s3);
        for (; x < ie; ++x) g(o, x, s0);
      }
    }
    acc += (s0 + s1) + (s2 + s3);
  }
};
template <class Space, class F, class T>
void chunked_reduce2(const char* label, const F& f, const int64_t* lo, const int64_t* hi, bool left, T& r) {
  const Tasks2 k(lo, hi, left);
  const Rows2Sum<F, T> s{f, k};
  if (k.items() <= SERIAL_ITEMS) {
    T acc = T();
    for (int64_t t = 0; t < k.tasks; ++t) s(t, acc);
    r = acc;
    return;
  }
  Kokkos::parallel_reduce(label, Kokkos::RangePolicy<Space, Kokkos::IndexType<int64_t>>(0, k.tasks), s, r);
}
template <class Space, class F, class T>
void chunked_reduce(const char* label, const F& f, int64_t lo, int64_t hi, T& r, bool uneven) {
  const int64_t items   = hi > lo ? hi - lo : 0;
  if (items <= SERIAL_ITEMS) {  // one chunk, in place (see host_for)
    T acc = T();
    if (items > 0) Chunked<F, T>{f, lo, hi, items, 1, 1, 1}(0, acc);
    r = acc;
    return;
  }
  int64_t chunk, t, chunks, per;
  host_chunks<Space>(items, chunk, t, chunks, per, uneven);
  Kokkos::parallel_reduce(label, Kokkos::RangePolicy<Space, Kokkos::IndexType<int64_t>>(0, per * t),
                          Chunked<F, T>{f, lo, hi, chunk, per > 0 ? per : 1, t, chunks}, r);
}
// A 1-D reduction through one of Kokkos' reducers (Min, Max, MinMax, Prod,
// the logical and bitwise ones; not the *Loc ones, whose ties keep the first
// index only in Kokkos' own order) on the host: chunks as chunked_reduce's,
// each into two partial values in registers joined by the reducer (Kokkos'
// own loop updates one value in memory per item, latency-bound). The
// reducer's copy in the functor only lends init and join.
template <class F, class R>
struct ChunkedReducer {
  using rv = typename R::value_type;
  F f;
  R red;
  int64_t lo, hi, chunk, per, threads, chunks;
  KOKKOS_INLINE_FUNCTION void operator()(const int64_t c, rv& acc) const {
    const int64_t rc = (c % per) * threads + c / per;
    if (rc >= chunks) return;
    rv s0, s1;
    red.init(s0);
    red.init(s1);
    const int64_t b = lo + rc * chunk;
    const int64_t e = b + chunk < hi ? b + chunk : hi;
    const F g       = f;  // see Chunked
    int64_t i       = b;
    for (; i + 1 < e; i += 2) {
      g(i, s0);
      g(i + 1, s1);
    }
    for (; i < e; ++i) g(i, s0);
    red.join(s0, s1);
    red.join(acc, s0);
  }
};
template <class Space, class R, class F>
void chunked_reducer(const char* label, const F& f, int64_t lo, int64_t hi, typename R::value_type& r, bool uneven) {
  const int64_t items = hi > lo ? hi - lo : 0;
  if (items <= SERIAL_ITEMS) {  // one chunk, in place (see host_for)
    typename R::value_type acc;
    R red(acc);
    red.init(acc);
    if (items > 0) ChunkedReducer<F, R>{f, red, lo, hi, items, 1, 1, 1}(0, acc);
    r = acc;
    return;
  }
  int64_t chunk, t, chunks, per;
  host_chunks<Space>(items, chunk, t, chunks, per, uneven);
  Kokkos::parallel_reduce(label, Kokkos::RangePolicy<Space, Kokkos::IndexType<int64_t>>(0, per * t),
                          ChunkedReducer<F, R>{f, R(r), lo, hi, chunk, per > 0 ? per : 1, t, chunks}, R(r));
}
// A 1-D reduction into several totals (a fused region's sibling reductions:
// `value_type` a struct of them) on the host: chunks as chunked_reduce's,
// each into four partial values kept in registers, the bodies run on them
// directly (the functor's `direct`: the partials are locals no store can
// alias), joined (s0 + s1) + (s2 + s3) by the functor's `merge`, as Chunked
// joins a sum's. Each total then adds in the order its own kernel would (a
// min or max is the same in any order). Kokkos' own loop over the functor
// runs each body from the identity and joins it into a struct in memory per
// item: slower than the separate reductions it fused.
template <class F>
struct ChunkedVals {
  using value_type = typename F::value_type;
  F f;
  int64_t lo, hi, chunk, per, threads, chunks;
  KOKKOS_INLINE_FUNCTION void operator()(const int64_t c, value_type& acc) const {
    const int64_t rc = (c % per) * threads + c / per;
    if (rc >= chunks) return;
    const F g = f;  // see Chunked
    value_type s0, s1, s2, s3;
    g.init(s0), g.init(s1), g.init(s2), g.init(s3);
    const int64_t b = lo + rc * chunk;
    const int64_t e = b + chunk < hi ? b + chunk : hi;
    int64_t i       = b;
    for (; i + 3 < e; i += 4) g.direct(i, s0), g.direct(i + 1, s1), g.direct(i + 2, s2), g.direct(i + 3, s3);
    for (; i < e; ++i) g.direct(i, s0);
    g.merge(s0, s1), g.merge(s2, s3), g.merge(s0, s2), g.merge(acc, s0);
  }
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { f.init(v); }
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& a, const volatile value_type& b) const { f.join(a, b); }
};
template <class Space, class F>
void chunked_vals(const char* label, const F& f, int64_t lo, int64_t hi, typename F::value_type& r, bool uneven) {
  const int64_t items = hi > lo ? hi - lo : 0;
  if (items <= SERIAL_ITEMS) {  // one chunk, in place (see host_for)
    typename F::value_type acc;
    f.init(acc);
    if (items > 0) ChunkedVals<F>{f, lo, hi, items, 1, 1, 1}(0, acc);
    r = acc;
    return;
  }
  int64_t chunk, t, chunks, per;
  host_chunks<Space>(items, chunk, t, chunks, per, uneven);
  Kokkos::parallel_reduce(label, Kokkos::RangePolicy<Space, Kokkos::IndexType<int64_t>>(0, per * t),
                          ChunkedVals<F>{f, lo, hi, chunk, per > 0 ? per : 1, t, chunks}, r);
}
inline int team_too_large(int64_t asked, int most) {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "pk.TeamPolicy asks for teams of %lld threads, but this kernel can use at most %d in this execution space",
                (long long)asked, most);
  return fail(buf);
}

// Scratch sizes of a TeamPolicy launch: hi[3..7] holds bytes per team and per
// thread at levels 0 and 1.
template <class P>
void team_scratch(P& p, const int64_t* hi) {
  for (int level = 0; level < 2; ++level) {
    const int64_t team = hi[3 + 2 * level], thread = hi[4 + 2 * level];
    if (team > 0 || thread > 0)
      p.set_scratch_size(level, Kokkos::PerTeam(team), Kokkos::PerThread(thread));
  }
}

#ifdef KOKKOS_ENABLE_CUDA
// 1-D parallel_for on the GPU. Kokkos 3.4 sizes a RangePolicy's CUDA blocks at the
// smallest size that reaches full occupancy (64 threads on Hopper); those small
// blocks leave about a fifth of the memory bandwidth unused by streaming kernels
// (a triad reaches 2.5 of 3.1 TB/s on an H100). Teams of a fixed 128 threads, one
// index each, reach it (scripts/gpu/README.md has the measurements). Leagues
// beyond int's range fall back to the RangePolicy.
constexpr int cuda_team = 128;
template <class F>
struct CudaFlat {
  F f;
  int64_t lo, hi;
  KOKKOS_INLINE_FUNCTION void operator()(const Kokkos::TeamPolicy<Kokkos::Cuda>::member_type& m) const {
    const int64_t i = lo + int64_t(m.league_rank()) * cuda_team + m.team_rank();
    if (i < hi) f(i);
  }
};
template <class F>
void cuda_for(const char* label, const F& f, int64_t lo, int64_t hi) {
  const int64_t league = hi > lo ? (hi - lo + cuda_team - 1) / cuda_team : 0;
  if (league == 0) return;
  if (league > INT32_MAX) {
    Kokkos::parallel_for(label, Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<int64_t>>(lo, hi), f);
    return;
  }
  Kokkos::parallel_for(label, Kokkos::TeamPolicy<Kokkos::Cuda>(int(league), cuda_team), CudaFlat<F>{f, lo, hi});
}
#endif

// pk.inclusive_scan(team_member, v): the team turns the 1-D view v into its
// running sums in place. Kokkos' team scan calls the body for every i first
// without, then (after a team-wide scan of the partial sums) with the final
// flag; each call reads and writes only v(i), so scanning in place is safe.
template <class Member, class V>
KOKKOS_INLINE_FUNCTION void team_inclusive_scan(const Member& m, const V& v) {
  using T = typename V::non_const_value_type;
  Kokkos::parallel_scan(Kokkos::TeamThreadRange(m, (int64_t)v.extent(0)),
                        [&](const int64_t i, T& acc, const bool final) {
                          acc += v(i);
                          if (final) v(i) = acc;
                        });
  m.team_barrier();
}

// pk.rand(dtype): a generator per work item, seeded from the launch's stream
// (a new one per launch of a pool) and the item's indices, so the numbers a
// kernel draws do not depend on the thread count, the space or on fusion.
// splitmix64 seeds an xorshift64* (Vigna); integer draws follow Kokkos'
// rand<> ranges: signed types in [0, max), unsigned types over all values.
struct Rng {
  uint64_t s;
  KOKKOS_INLINE_FUNCTION static uint64_t mix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  KOKKOS_INLINE_FUNCTION Rng(uint64_t seed, int64_t a, int64_t b = 0, int64_t c = 0)
      : s(mix(mix(mix(seed ^ mix((uint64_t)a)) ^ (uint64_t)b) ^ (uint64_t)c)) {
    if (s == 0) s = 0x9e3779b97f4a7c15ULL;
  }
  KOKKOS_INLINE_FUNCTION uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ULL;
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION T draw() {
    const uint64_t x = next();
    if constexpr (std::is_same<T, double>::value) {
      return (double)(x >> 11) * (1.0 / 9007199254740992.0);
    } else if constexpr (std::is_same<T, float>::value) {
      return (float)(x >> 40) * (1.0f / 16777216.0f);
    } else if constexpr (std::is_same<T, bool>::value) {
      return (x >> 63) != 0;
    } else if constexpr (std::is_signed<T>::value) {
      const uint64_t max = (uint64_t)std::numeric_limits<T>::max();
      return (T)((x >> 1) % max);
    } else {
      return (T)x;
    }
  }
};
}  // namespace pk

// Called once when the library is loaded (see StopHooks).
extern "C" __attribute__((visibility("default"))) void pk_set_stop(const unsigned char* flag, int (*ask)()) {
  pk::stop_hooks() = pk::StopHooks{flag, ask};
}
