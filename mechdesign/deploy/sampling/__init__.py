"""Sampling: the exact samplers of single-column and record files, streaming over tables, scale-out on Dask."""
