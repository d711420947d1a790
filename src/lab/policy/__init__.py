"""Layer 2, the policy: prompts (with their permitted-technique sentence), sampling from
any causal LM, and seed_policy/, the small model the lab builds for itself.
Imports the harness and the technique registry, nothing above.
"""
