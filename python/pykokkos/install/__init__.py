"""Build tooling: Kokkos built from its source archive into the cache
(`kokkos_setup.py`, run as a script by `make setup` and the GPU scripts, with
`cuda_patches.py` for CUDA 13), and the first kernel's install of it. It
imports nothing else of the package."""
