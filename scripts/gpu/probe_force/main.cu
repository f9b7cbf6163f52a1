// Times our NVRTC form of ExaMiniMD's force kernel (force.cu, included) on the saved data.
#include <type_traits>
#include <cstdint>
#include "kernel.cu"  // first: the shim spells what NVRTC lacks
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>
#include <cuda.h>
#include <nvrtc.h>
struct Arr { std::vector<char> bytes; std::vector<long> shape; char order; };
static std::map<std::string, Arr> load(const char* dir, long* n_local) {
  std::map<std::string, Arr> m; std::ifstream meta(std::string(dir) + "/meta.txt"); std::string line;
  while (std::getline(meta, line)) {
    std::istringstream s(line); std::string name, dt, ord; s >> name;
    if (name == "N_local") { s >> *n_local; continue; }
    s >> dt >> ord; Arr a; a.order = ord[0]; long d; while (s >> d) a.shape.push_back(d);
    std::ifstream f(std::string(dir) + "/" + name + ".bin", std::ios::binary);
    a.bytes.assign(std::istreambuf_iterator<char>(f), {}); m[name] = a;
  }
  return m;
}
static void* up(const Arr& a) { void* p; cudaMalloc(&p, a.bytes.size()); cudaMemcpy(p, a.bytes.data(), a.bytes.size(), cudaMemcpyHostToDevice); return p; }
// Extents and strides (in elements) as the runtime hands them to a kernel: C order or Fortran order.
static pk_view_arg view(void* p, std::vector<long> shape, char order) {
  pk_view_arg v{}; v.data = p; long s = 1; const int r = (int)shape.size();
  for (int d = 0; d < r; ++d) v.extent[d] = shape[d];
  for (int k = 0; k < r; ++k) { const int d = order == 'F' ? k : r - 1 - k; v.stride[d] = s; s *= shape[d]; }
  return v;
}
#ifdef PK_PROBE_LIB
extern "C" int probe_main(int argc, char** argv) {  // inproc.py calls it through ctypes
#else
int main(int argc, char** argv) {
#endif
  long n = 0; auto m = load(argv[1], &n); int block = atoi(argv[2]);
  double lj[4] = {48.0, 48.0, 48.0, 48.0}, lj2[4] = {24.0, 24.0, 24.0, 24.0}, cut[4] = {6.25, 6.25, 6.25, 6.25};
  void *d_lj1, *d_lj2, *d_cut; cudaMalloc(&d_lj1, 32); cudaMalloc(&d_lj2, 32); cudaMalloc(&d_cut, 32);
  cudaMemcpy(d_lj1, lj, 32, cudaMemcpyHostToDevice); cudaMemcpy(d_lj2, lj2, 32, cudaMemcpyHostToDevice); cudaMemcpy(d_cut, cut, 32, cudaMemcpyHostToDevice);
  auto& x = m["x"]; void* dx = up(x); void* dt = up(m["type"]); void* dnn = up(m["num_neighs"]); void* dn = up(m["neighs"]);
  void* df; cudaMalloc(&df, x.bytes.size()); cudaMemset(df, 0, x.bytes.size());
  pk_args a{};
  a.views[0] = view(d_lj1, {2, 2}, 'F'); a.views[1] = view(d_lj2, {2, 2}, 'F'); a.views[2] = view(d_cut, {2, 2}, 'F');
  a.views[3] = view(dnn, m["num_neighs"].shape, m["num_neighs"].order); a.views[4] = view(dn, m["neighs"].shape, m["neighs"].order);
  a.views[5] = view(dx, x.shape, x.order); a.views[6] = view(df, x.shape, x.order); a.views[7] = view(dt, m["type"].shape, m["type"].order);
  a.lo[0] = 0; a.hi[0] = n;
  int grid = (n + block - 1) / block;
  // argv[4] = "nvrtc": the same source compiled as the runtime compiles it (NVRTC, its options),
  // loaded and launched through the driver API.
  CUfunction fn = nullptr;
  if (argc > 4 && std::string(argv[4]) == "nvrtc") {
    std::ifstream f(std::string(argv[1]) + "/kernel.cu"); std::string src((std::istreambuf_iterator<char>(f)), {});
    nvrtcProgram prog; nvrtcCreateProgram(&prog, src.c_str(), "pk_kernel.cu", 0, nullptr, nullptr);
    std::string arch = std::string("--gpu-architecture=") + argv[5];
    const char* opts[] = {arch.c_str(), "-std=c++17", "--fmad=false"};
    if (nvrtcCompileProgram(prog, 3, opts) != NVRTC_SUCCESS) {
      size_t n; nvrtcGetProgramLogSize(prog, &n); std::string log(n, ' '); nvrtcGetProgramLog(prog, &log[0]); printf("%s\n", log.c_str()); return 1;
    }
    size_t nb; nvrtcGetCUBINSize(prog, &nb); std::vector<char> cubin(nb); nvrtcGetCUBIN(prog, cubin.data());
    CUmodule mod; cudaFree(0);
    if (cuModuleLoadData(&mod, cubin.data()) != CUDA_SUCCESS || cuModuleGetFunction(&fn, mod, "pk_for") != CUDA_SUCCESS) { printf("load failed\n"); return 1; }
  }
  // PROBE_DEVICE_SHARED=1: the context prefers shared memory, as Kokkos' initialization sets it;
  // PROBE_FUNC_L1=1: the kernel asks for L1 itself, as Kokkos does for its range kernels.
  if (getenv("PROBE_DEVICE_SHARED")) cudaDeviceSetCacheConfig(cudaFuncCachePreferShared);
  if (getenv("PROBE_FUNC_L1")) {
    if (fn) cuFuncSetCacheConfig(fn, CU_FUNC_CACHE_PREFER_L1); else cudaFuncSetCacheConfig(pk_for, cudaFuncCachePreferL1);
  }
  auto go = [&]() {
    if (!fn) { pk_for<<<grid, block>>>(a); return; }
    void* params[] = {&a}; cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, 0, params, nullptr);
  };
  for (int k = 0; k < 3; ++k) go();
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  cudaEventRecord(e0); const int reps = 100; for (int k = 0; k < reps; ++k) go(); cudaEventRecord(e1);
  cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1);
  std::vector<double> f(x.bytes.size() / 8); cudaMemcpy(f.data(), df, x.bytes.size(), cudaMemcpyDeviceToHost);
  double s = 0; for (double v : f) s += v * v;
  printf("%-28s block %3d: %.1f us a launch  (|f|^2 %.6e, %s)\n", argv[3], block, 1000.0 * ms / reps, s, cudaGetErrorString(cudaGetLastError()));
  fflush(stdout);
  return 0;
}
