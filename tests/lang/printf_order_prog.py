"""Run as a subprocess by test_printf.py: kernel printf lines interleave with
Python's prints in the order the program made them, eager or lazy."""
import pykokkos as pk


@pk.workunit
def say(i: int, k: int):
    pk.printf("kernel %d\n", k)


@pk.workunit
def fill(i: int, v: pk.View1D[pk.double]):
    v[i] = 1.5 * i


@pk.workunit
def show(i: int, v: pk.View1D[pk.double]):
    pk.printf("v[%d] = %.1f\n", i, v[i])


if __name__ == "__main__":
    v = pk.View([2], pk.double)
    serial = pk.RangePolicy(pk.Serial, 0, 1)
    for k in range(3):
        print(f"python {k}", flush=True)
        pk.parallel_for(serial, say, k=k)
    pk.parallel_for(pk.RangePolicy(pk.Serial, 0, 2), fill, v=v)  # pending in lazy mode
    pk.parallel_for(pk.RangePolicy(pk.Serial, 0, 2), show, v=v)
    print("end", flush=True)
