"""Layer 1, the harness: a completion in, a measured verdict out (EvalResult).

problems (specs under harness/), extract (completion -> C), static_check (source and
object), build (every gcc flag), sandbox (isolation, limits, kill the tree), evaluate
(the pipeline, batches, cache), plausibility (calibrated peak and baselines:
`suspicious`), machine (fingerprint, OpenBLAS), calibrate (the machine report).
Imports nothing above lab.config.
"""
