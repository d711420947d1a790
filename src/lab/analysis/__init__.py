"""Layer 4, analysis: experiments (one experiment from a config), metrics, compare (seeded
arms), plots (figures from results JSON), autotune and the harness benchmark.
Imported only by the command line and the notebooks.
"""
