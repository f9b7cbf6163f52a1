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
static pk_view_arg view(void* p, std::vector<long> shape) {
  pk_view_arg v{}; v.data = p; for (size_t d = 0; d < shape.size(); ++d) v.extent[d] = shape[d]; return v;
}
int main(int argc, char** argv) {
  long n = 0; auto m = load(argv[1], &n); int block = atoi(argv[2]);
  double lj[4] = {48.0, 48.0, 48.0, 48.0}, lj2[4] = {24.0, 24.0, 24.0, 24.0}, cut[4] = {6.25, 6.25, 6.25, 6.25};
  void *d_lj1, *d_lj2, *d_cut; cudaMalloc(&d_lj1, 32); cudaMalloc(&d_lj2, 32); cudaMalloc(&d_cut, 32);
  cudaMemcpy(d_lj1, lj, 32, cudaMemcpyHostToDevice); cudaMemcpy(d_lj2, lj2, 32, cudaMemcpyHostToDevice); cudaMemcpy(d_cut, cut, 32, cudaMemcpyHostToDevice);
  auto& x = m["x"]; void* dx = up(x); void* dt = up(m["type"]); void* dnn = up(m["num_neighs"]); void* dn = up(m["neighs"]);
  void* df; cudaMalloc(&df, x.bytes.size()); cudaMemset(df, 0, x.bytes.size());
  pk_args a{};
  a.views[0] = view(d_lj1, {2, 2}); a.views[1] = view(d_lj2, {2, 2}); a.views[2] = view(d_cut, {2, 2});
  a.views[3] = view(dnn, m["num_neighs"].shape); a.views[4] = view(dn, m["neighs"].shape);
  a.views[5] = view(dx, x.shape); a.views[6] = view(df, x.shape); a.views[7] = view(dt, m["type"].shape);
  a.lo[0] = 0; a.hi[0] = n;
  int grid = (n + block - 1) / block;
  for (int k = 0; k < 3; ++k) pk_for<<<grid, block>>>(a);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  cudaEventRecord(e0); const int reps = 100; for (int k = 0; k < reps; ++k) pk_for<<<grid, block>>>(a); cudaEventRecord(e1);
  cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1);
  std::vector<double> f(x.bytes.size() / 8); cudaMemcpy(f.data(), df, x.bytes.size(), cudaMemcpyDeviceToHost);
  double s = 0; for (double v : f) s += v * v;
  printf("%-28s block %3d: %.1f us a launch  (|f|^2 %.6e, %s)\n", argv[3], block, 1000.0 * ms / reps, s, cudaGetErrorString(cudaGetLastError()));
}
