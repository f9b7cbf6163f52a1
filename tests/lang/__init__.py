"""Kernel-language tests: one module per construct family."""
