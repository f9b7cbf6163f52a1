// Kokkos CUDA smoke test: a parallel_for over a View in CudaSpace, a parallel_reduce
// over it, a copy back to the host, and an OpenMP loop, each checked.
// Built as an executable (-DPK_SMOKE_MAIN) and as a shared library that smoke_loader.c
// dlopens, the way pykokkos-fuse loads its kernels.
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <iostream>

struct Fill {
  Kokkos::View<double*, Kokkos::CudaSpace> x;
  KOKKOS_INLINE_FUNCTION void operator()(const int64_t i) const { x(i) = double(i); }
};

struct Sum {
  Kokkos::View<double*, Kokkos::CudaSpace> x;
  KOKKOS_INLINE_FUNCTION void operator()(const int64_t i, double& acc) const { acc += x(i); }
};

extern "C" int pk_smoke(int64_t n) {
  int bad = 0;
  {
    Kokkos::View<double*, Kokkos::CudaSpace> x("x", n);
    Kokkos::parallel_for("fill", Kokkos::RangePolicy<Kokkos::Cuda>(0, n), Fill{x});
    double sum = 0;
    Kokkos::parallel_reduce("sum", Kokkos::RangePolicy<Kokkos::Cuda>(0, n), Sum{x}, sum);
    Kokkos::fence();
    const double expect = double(n) * double(n - 1) / 2;
    std::printf("smoke: n=%lld device sum=%.1f expected=%.1f %s\n", (long long)n, sum, expect,
                sum == expect ? "OK" : "WRONG");
    bad += sum != expect;

    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
    int64_t wrong = 0;
    Kokkos::parallel_reduce(
        "check", Kokkos::RangePolicy<Kokkos::OpenMP>(0, n),
        [=](const int64_t i, int64_t& w) { w += h(i) != double(i); }, wrong);
    std::printf("smoke: host copy checked on %d OpenMP threads: %lld wrong %s\n",
                Kokkos::OpenMP::concurrency(), (long long)wrong, wrong == 0 ? "OK" : "WRONG");
    bad += wrong != 0;

    // Launch floor: an empty-ish parallel_for + fence on the GPU.
    Kokkos::Timer t;
    const int reps = 1000;
    for (int r = 0; r < reps; ++r) {
      Kokkos::parallel_for("one", Kokkos::RangePolicy<Kokkos::Cuda>(0, 1), Fill{x});
      Kokkos::fence();
    }
    std::printf("smoke: parallel_for(1)+fence on Cuda: %.2f us\n", t.seconds() / reps * 1e6);
  }
  return bad;
}

extern "C" int pk_smoke_main() {
  Kokkos::initialize();
  Kokkos::DefaultExecutionSpace::print_configuration(std::cout, false);
  int bad = pk_smoke(int64_t(1) << 24);
  Kokkos::finalize();
  std::printf("smoke: %s\n", bad ? "FAILED" : "PASSED");
  return bad;
}

#ifdef PK_SMOKE_MAIN
int main() { return pk_smoke_main(); }
#endif
