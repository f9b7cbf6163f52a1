"""Run as a subprocess by test_printf.py: pk.printf writes to C's stdout."""
import pykokkos as pk


@pk.workunit
def hello(i, x, v):
    pk.printf("item %d of %ld: x=%.3f v=%g\n", i, v.extent(0), x * i, v[i])
    if i == 0:
        pk.printf("100%% %s %5.1f|%-4d|%x|%c\n", "done", 2.25, 7, 255, 65)
        pk.printf("no conversions\n")


if __name__ == "__main__":
    v = pk.View([3], pk.float32)
    v[:] = [0.5, 1.5, 2.5]
    pk.parallel_for(pk.RangePolicy(pk.Serial, 0, 3), hello, x=0.5, v=v)
    pk.fence()
