"""Layer 5, bench: benchmarks of the lab's own instruments, each a `python -m` entry point
writing one results JSON: the harness's cost and efficiency (bench_harness), attacks on the
timed window against honest twins (bench_window), the Dask cluster path (bench_cluster), the
autotuner over the generator's space (autotune) and how well the technique detector reads
kernels (detector_report). They measure, so they sit beside the pipeline, above analysis.
"""
