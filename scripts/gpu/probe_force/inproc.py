"""The standalone force-kernel harness (main.cu built as libprobe.so) run inside
one Python process: before pykokkos starts, then after ExaMiniMD's whole run in
the same process. If the kernel is slow only after the run, what the program's
process sets (Kokkos' initialization, the runtime's context) is the cause, not
the kernel or its data.
Usage: inproc.py <libprobe.so> <data folder> <ExaMiniMD standalone folder> <main.py's arguments>"""

import ctypes
import os
import runpy
import sys


def probe(lib, data, label):
    argv = [b"probe", data.encode(), b"128", label.encode()]
    arr = (ctypes.c_char_p * len(argv))(*argv)
    sys.stdout.flush()
    lib.probe_main(len(argv), arr)


def main() -> None:
    lib = ctypes.CDLL(sys.argv[1])
    data, md = sys.argv[2], sys.argv[3]
    probe(lib, data, "in process, before pykokkos")
    sys.path.insert(0, md + "/src")
    os.chdir(md)
    sys.argv = ["src/main.py"] + sys.argv[4:]
    runpy.run_path("src/main.py", run_name="__main__")
    probe(lib, data, "in process, after the program")


if __name__ == "__main__":
    main()
