"""Layer 5, pipeline: runs a config's experiments. `runner` trains, evaluates by the protocol
and writes each arm's results with their provenance; `reuse` decides from that provenance
whether a finished result still stands for this code, config, policy and machine; `status`
lists every result with its state; `plan` is the order a config's arms (and their notebooks)
run in. Imports every layer below; only the command line and the notebooks import it.
"""
