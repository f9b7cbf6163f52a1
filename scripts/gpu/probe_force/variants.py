"""Kernel variants of force.cu (our NVRTC form of ExaMiniMD's force kernel):
as built, with its read-only loads through the read-only data cache (__ldg),
and each with 256-thread blocks instead of 128."""

import re
import sys

d = sys.argv[1]
src = open(f"{d}/force.cu").read()
head, rest = src.split("void operator()(const int64_t i) const {", 1)
body, tail = rest.split("\n};", 1)
reads = r"\b(x|type|num_neighs_view|neighs_view|rnd_cutsq|rnd_lj1|rnd_lj2)\(([^()]*)\)"
ldg = head + "void operator()(const int64_t i) const {" + re.sub(reads, r"__ldg(&\1(\2))", body) + "\n};" + tail
assert ldg.count("__ldg") >= 8, ldg.count("__ldg")
# 32-bit index arithmetic in the View's operator() (every extent here fits in an int).
wide = """      const int64_t idx[] = {(int64_t)i...};
      int64_t off = 0;
      for (int d = 0; d < R; ++d) off += idx[d] * str[d];"""
narrow = """      const int idx[] = {(int)i...};
      int off = 0;
      for (int d = 0; d < R; ++d) off += idx[d] * (int)str[d];"""
assert wide in src
i32 = src.replace(wide, narrow)
for name, s in (("base", src), ("ldg", ldg), ("i32", i32), ("ldg_i32", ldg.replace(wide, narrow))):
    open(f"{d}/{name}.cu", "w").write(s)
    open(f"{d}/{name}_lb256.cu", "w").write(s.replace("__launch_bounds__(128)", "__launch_bounds__(256)"))
print("variants written;", ldg.count("__ldg"), "loads through __ldg")
