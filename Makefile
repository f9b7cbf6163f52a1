# pykokkos-fuse: `make demo` runs the demo, `make test` passes the tests.
# Both install what is missing (virtualenv + Python deps, Kokkos, the extension)
# and are cheap when everything is already there.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMPS := .stamps
RUST_SOURCES := $(shell find src -name '*.rs' -o -name '*.hpp') Cargo.toml pyproject.toml build.rs

.PHONY: help setup kokkos demo test test-rust test-python lint bench fuzz clean trace-png

help:
	@echo "make demo    build everything that is missing, then run the demo"
	@echo "make test    build everything that is missing, then run Rust and Python tests"
	@echo "make bench   benchmarks (figures and ratios from one run)"
	@echo "make lint    rustfmt, clippy -D warnings, stubtest of _native.pyi, layer/cycle/size check"
	@echo "make fuzz    the differential fusion test with many random programs (PK_FUZZ_EXAMPLES)"
	@echo "make bench-numba  pykokkos.numba against Numba on the differential corpus"
	@echo "make bench-md CXXMD=dir PYMD=dir  C++ Kokkos ExaMiniMD against the Python one, eager and fused"
	@echo "make test-numba-corpus CORPUS=dir  other people's Numba programs against real Numba"
	@echo "make bench-instructions  the never-slower rows in instructions (valgrind's callgrind)"
	@echo "make trace-png    trace the demo and draw its timeline (docs/perfetto-demo*.png)"
	@echo "make gpu-carry, then on the GPU machine: make test-gpu / make bench-gpu / make bench-gpus (scripts/gpu/README.md)"
	@echo "make setup   only install/build (venv, Kokkos, extension)"
	@echo "make clean   remove build outputs (the kernel cache in ~/.cache/pykokkos-fuse stays)"

$(STAMPS)/venv: pyproject.toml Makefile
	@mkdir -p $(STAMPS)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade "numpy>=1.24" pytest hypothesis "maturin>=1.5,<2" cmake ninja "mypy>=1.18" "typing_extensions>=4.15" pybind11 "numba>=0.60" scipy mkdocs ruff pytest-xdist "mpi4py>=4" mpich
	@touch $@

kokkos: $(STAMPS)/venv
	@$(PY) python/pykokkos/install/kokkos_setup.py >/dev/null

$(STAMPS)/ext: $(STAMPS)/venv $(RUST_SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release -q
	@touch $@

setup: kokkos $(STAMPS)/ext

demo: setup
	$(PY) examples/demo.py

test-rust:
	cargo test --release --lib --test codegen_snapshots --test fusion_snapshots --test fusion_plan -q

test-python: setup
	@# One worker per core, each taking whole modules (a module's kernels compile once, in one worker).
	$(PY) -m pytest -q -n auto --dist loadfile tests

test: setup test-rust test-python

lint: setup
	cargo fmt --all -- --check
	cargo clippy --release -q --all-targets -- -D warnings
	$(PY) -m mypy.stubtest pykokkos._native
	$(PY) scripts/check_layers.py
	$(VENV)/bin/ruff check -q python scripts
	$(VENV)/bin/ruff format -q --check python scripts
	$(PY) scripts/check_py_imports.py
	@# The user's guide (docs/, mkdocs.yml) builds with no broken link.
	@$(PY) -m mkdocs build --strict -d $(STAMPS)/site > $(STAMPS)/docs.log 2>&1 || { cat $(STAMPS)/docs.log; exit 1; }

bench: setup
	$(PY) benches/run_all.py

# The never-slower rows counted in instructions (valgrind's callgrind), where timing noise hides them.
bench-instructions: setup
	$(PY) benches/bench_instructions.py

# The README's timeline pictures: the demo traced (PK_TRACE_CHROME) and drawn as Perfetto lays it out.
trace-png: setup
	$(PY) -m pip install -q pillow
	cd /tmp && PK_FUSE=1 PK_TRACE_CHROME=/tmp/pk-demo-trace.json $(abspath $(PY)) $(CURDIR)/examples/demo.py >/dev/null
	$(PY) scripts/trace_png.py /tmp/pk-demo-trace.json docs/perfetto-demo.png
	$(PY) scripts/trace_png.py /tmp/pk-demo-trace.json docs/perfetto-demo-end.png --last-ms 120

clean:
	rm -rf $(STAMPS) target

# CUDA on the lent GPU machine (device tool, no network there): `make gpu-carry` here puts the
# Kokkos sdist and an abi3 wheel in .carry/ (ignored); there, carrying .carry, from the
# repository root: `make test-gpu` (the test suite on the Cuda space) and `make bench-gpu`
# (GPU figures). Both build the CUDA Kokkos and install the wheel first. See scripts/gpu/README.md.
.PHONY: gpu-carry gpu-carry-md gpu-carry-cuda-mpi test-gpu fuzz-gpu bench-gpu bench-gpus bench-md bench-numba bench-instructions test-numba-corpus
# Other people's Numba programs (corpus/numba.toml) against the real Numba: eager, fused, strict.
test-numba-corpus: setup
	@test -n "$(CORPUS)" || { echo "usage: make test-numba-corpus CORPUS=<folder of fetched repositories, <owner>+<name>/repo>"; exit 2; }
	$(PY) scripts/numba_corpus.py --mirrors $(CORPUS)

# The paper's program: C++ Kokkos ExaMiniMD against PyKokkos' Python one, eager and fused (issue 46).
bench-md: setup
	@test -n "$(CXXMD)" -a -n "$(PYMD)" || { echo "usage: make bench-md CXXMD=<ExaMiniMD checkout> PYMD=<pykokkos checkout>"; exit 2; }
	$(PY) benches/bench_examinimd.py --cxx $(CXXMD) --py $(PYMD)

# The same two programs' sources into .carry/md for the GPU machine (scripts/gpu/bench_md.sh).
gpu-carry-md:
	@test -n "$(CXXMD)" -a -n "$(PYMD)" || { echo "usage: make gpu-carry-md CXXMD=<ExaMiniMD checkout> PYMD=<pykokkos checkout>"; exit 2; }
	rm -rf .carry/md && mkdir -p .carry/md/pykokkos/examples
	cp -r "$(CXXMD)" .carry/md/ExaMiniMD && rm -rf .carry/md/ExaMiniMD/.git .carry/md/ExaMiniMD/build*
	cp -r "$(PYMD)/examples/ExaMiniMD" .carry/md/pykokkos/examples/

bench-numba: setup
	$(PY) benches/bench_numba.py

gpu-carry: $(STAMPS)/venv
	@mkdir -p .carry/wheels
	cp "$$($(PY) python/pykokkos/install/kokkos_setup.py --print-sdist)" .carry/
	rm -f .carry/wheels/*.whl
	$(VENV)/bin/maturin build --release -q -o .carry/wheels
	# Numba cannot go to the GPU machine (llvmlite alone is over the carry limit): its
	# outputs and host times on the numba bench travel instead.
	$(PY) benches/bench_numba.py --save-ref .carry/numba_ref.json
	# mpi4py and MPICH for the several-rank part of make test-gpu (for the Pythons it may have).
	rm -rf .carry/mpi && for v in 3.11 3.12 3.13; do $(PY) -m pip download -q --only-binary :all: \
	  --python-version $$v --platform manylinux_2_28_x86_64 --platform manylinux1_x86_64 \
	  -d .carry/mpi "mpi4py>=4" mpich || exit 1; done

# A CUDA-aware Open MPI for make bench-gpus' device-memory halo path (about 15 minutes here).
gpu-carry-cuda-mpi: $(STAMPS)/venv
	PY=$(PY) bash scripts/gpu/build_cuda_mpi.sh

test-gpu:
	bash scripts/gpu/device_check.sh

fuzz-gpu:
	bash scripts/gpu/fuzz_gpu.sh

bench-gpu:
	bash scripts/gpu/bench_gpu.sh

# Several GPUs of one host: the heat example on 1 and 2 GPUs (scripts/gpu/multi_gpu.sh).
# GPUS (default: all present), SIZES (default 8192,20480), STEPS (default 100).
bench-gpus:
	bash scripts/gpu/multi_gpu.sh $(if $(GPUS),--gpus $(GPUS)) $(if $(SIZES),--sizes $(SIZES)) $(if $(STEPS),--steps $(STEPS))

fuzz: setup
	# Bad input (random wrong arguments) never takes the interpreter down.
	PK_FUZZ_RANDOM=1 PK_FUZZ_BAD_EXAMPLES=$${PK_FUZZ_BAD_EXAMPLES:-100} $(PY) -m pytest -q tests/test_bad_input.py
	PK_FUZZ_RANDOM=1 PK_FUZZ_EXAMPLES=$${PK_FUZZ_EXAMPLES:-3000} $(PY) -m pytest -q tests/test_fuzz.py --hypothesis-show-statistics
	# Learned flushes (the tape): random loop bodies replayed, each read against NumPy.
	PK_FUZZ_RANDOM=1 PK_FUZZ_TAPE_EXAMPLES=$${PK_FUZZ_TAPE_EXAMPLES:-300} $(PY) -m pytest -q tests/test_tape.py -k random --hypothesis-show-statistics
