"""Layer 4, analysis: reads finished results and nothing else: metrics and intervals (which
the runner applies too), comparisons of seeded arms, figures, the suite's and the SQD study's
summaries. It neither trains nor measures (an import-linter contract in pyproject.toml), so it
runs anywhere the results are, without a policy (finding this machine's results folder asks
the compiler its version: lab.results).
"""
