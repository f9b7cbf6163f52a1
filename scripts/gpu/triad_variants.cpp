// Triad over 2^27 doubles on the GPU, written several ways, against a plain copy:
// which shape of generated Kokkos code reaches the copy bandwidth? (A measurement
// tool for scripts/gpu/README.md, built and run by scripts/gpu/triad_variants.sh.)
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstdint>

using Mem = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
using V = Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::CudaSpace, Mem>;
using VR = Kokkos::View<double*, Kokkos::LayoutRight, Kokkos::CudaSpace,
                        Kokkos::MemoryTraits<Kokkos::Unmanaged | Kokkos::Restrict>>;

template <class View, class I>
struct Triad {
  View a, b, c;
  double s;
  KOKKOS_INLINE_FUNCTION void operator()(const I i) const { a(i) = b(i) + s * c(i); }
};

// The functor of the generated code plus a shared-memory request that only the block
// size deduction sees: Kokkos 3.4 picks the smallest block that reaches full
// occupancy (64 threads on Hopper); a per-block request of 1/B of an SM's shared memory
// makes it pick B blocks of 2048/B threads. The launch itself asks for no shared memory.
template <class View>
struct TriadHint : Triad<View, int64_t> {
  unsigned block_hint;
  unsigned team_shmem_size(int) const { return block_hint; }
};

template <class F>
struct Flat {
  F f;
  int64_t lo, hi;
  KOKKOS_INLINE_FUNCTION void operator()(const Kokkos::TeamPolicy<Kokkos::Cuda>::member_type& m) const {
    const int64_t i = lo + int64_t(m.league_rank()) * m.team_size() + m.team_rank();
    if (i < hi) f(i);
  }
};

__global__ void raw_triad(double* __restrict__ a, const double* __restrict__ b,
                          const double* __restrict__ c, double s, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)blockDim.x * gridDim.x)
    a[i] = b[i] + s * c[i];
}

__global__ void raw_copy(double* __restrict__ a, const double* __restrict__ b, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) a[i] = b[i];
}

template <class F>
double best_ms(F&& f) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  f();
  cudaDeviceSynchronize();
  float best = 1e30f;
  for (int r = 0; r < 30; ++r) {
    cudaEventRecord(e0);
    f();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    if (ms < best) best = ms;
  }
  return best;
}

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    const int64_t n = int64_t(1) << 27;
    double *a, *b, *c;
    cudaMalloc(&a, n * 8);
    cudaMalloc(&b, n * 8);
    cudaMalloc(&c, n * 8);
    cudaMemset(a, 0, n * 8);
    cudaMemset(b, 0, n * 8);
    cudaMemset(c, 0, n * 8);
    auto report = [&](const char* what, double ms, int arrays) {
      std::printf("%-58s %8.3f ms %7.0f GB/s\n", what, ms, arrays * 8.0 * n / ms / 1e6);
    };
    double copy = best_ms([&] { raw_copy<<<(n + 255) / 256, 256>>>(a, b, n); });
    report("raw CUDA copy, 1 element per thread", copy, 2);
    report("raw CUDA triad, grid-stride, 256 threads x 4 blocks/SM",
           best_ms([&] { raw_triad<<<132 * 8, 256>>>(a, b, c, 3.0, n); }), 3);
    report("raw CUDA triad, 1 element per thread",
           best_ms([&] { raw_triad<<<(n + 255) / 256, 256>>>(a, b, c, 3.0, n); }), 3);
    Triad<V, int64_t> t64{V(a, n), V(b, n), V(c, n), 3.0};
    report("Kokkos RangePolicy<IndexType<int64_t>> (as generated)", best_ms([&] {
             Kokkos::parallel_for(Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<int64_t>>(0, n), t64);
           }), 3);
    Triad<V, int> t32{V(a, n), V(b, n), V(c, n), 3.0};
    report("Kokkos RangePolicy<IndexType<int>>", best_ms([&] {
             Kokkos::parallel_for(Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<int>>(0, int(n)), t32);
           }), 3);
    Triad<VR, int64_t> tr{VR(a, n), VR(b, n), VR(c, n), 3.0};
    report("Kokkos int64 + Restrict views", best_ms([&] {
             Kokkos::parallel_for(Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<int64_t>>(0, n), tr);
           }), 3);
    report("Kokkos int64 + LaunchBounds<256, 4>", best_ms([&] {
             Kokkos::parallel_for(
                 Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<int64_t>, Kokkos::LaunchBounds<256, 4>>(0, n),
                 t64);
           }), 3);
    report("Kokkos int64 + LaunchBounds<1024, 1>", best_ms([&] {
             Kokkos::parallel_for(
                 Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<int64_t>, Kokkos::LaunchBounds<1024, 1>>(0, n),
                 t64);
           }), 3);
    Triad<VR, int> tr32{VR(a, n), VR(b, n), VR(c, n), 3.0};
    report("Kokkos int + Restrict + LaunchBounds<256, 4>", best_ms([&] {
             Kokkos::parallel_for(
                 Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<int>, Kokkos::LaunchBounds<256, 4>>(0, int(n)),
                 tr32);
           }), 3);
    for (int team : {128, 256, 512}) {
      Flat<Triad<V, int64_t>> flat{t64, 0, n};
      char what[80];
      std::snprintf(what, sizeof what, "Kokkos TeamPolicy(n/%d, %d), one element per thread", team, team);
      report(what, best_ms([&] {
               Kokkos::parallel_for(Kokkos::TeamPolicy<Kokkos::Cuda>(int((n + team - 1) / team), team), flat);
             }), 3);
    }
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    for (int blocks : {8, 16}) {
      TriadHint<V> h;
      static_cast<Triad<V, int64_t>&>(h) = t64;
      h.block_hint = unsigned(prop.sharedMemPerMultiprocessor / blocks - 1024);
      char what[80];
      std::snprintf(what, sizeof what, "Kokkos RangePolicy + shmem hint for %d blocks/SM", blocks);
      report(what, best_ms([&] {
               Kokkos::parallel_for(Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<int64_t>>(0, n), h);
             }), 3);
    }
    // Launch costs of a 1-element kernel: back-to-back (no wait) and with a fence each.
    auto wall_us = [](auto&& f, int reps) {
      f();
      Kokkos::fence();
      Kokkos::Timer t;
      for (int r = 0; r < reps; ++r) f();
      Kokkos::fence();
      return t.seconds() / reps * 1e6;
    };
    Triad<V, int64_t> one{V(a, 1), V(b, 1), V(c, 1), 3.0};
    auto launch1 = [&] {
      Kokkos::parallel_for("one", Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<int64_t>>(0, 1), one);
    };
    std::printf("Kokkos parallel_for(1), back to back: %.2f us per launch\n", wall_us(launch1, 20000));
    std::printf("Kokkos parallel_for(1) + Kokkos::fence(): %.2f us\n",
                wall_us([&] { launch1(); Kokkos::fence(); }, 5000));
    Flat<Triad<V, int64_t>> flat1{one, 0, 1};
    std::printf("Kokkos TeamPolicy(1, 256), back to back: %.2f us per launch\n",
                wall_us([&] { Kokkos::parallel_for(Kokkos::TeamPolicy<Kokkos::Cuda>(1, 256), flat1); }, 20000));
    std::printf("raw <<<1,1>>> launch, back to back: %.2f us per launch\n",
                wall_us([&] { raw_copy<<<1, 1>>>(a, b, 1); }, 20000));
    std::printf("raw <<<1,1>>> launch + cudaDeviceSynchronize: %.2f us\n",
                wall_us([&] { raw_copy<<<1, 1>>>(a, b, 1); cudaDeviceSynchronize(); }, 5000));
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  Kokkos::finalize();
  return 0;
}
