"""The runtime: Views, types, policies, launches, workunit capture, the lazy
results, reducers, random pools, BinSort, the trace file format. It imports
only `_native` and the install layer; the public API is assembled from it in
`pykokkos/__init__.py`."""
