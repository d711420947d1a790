"""Layer 3, reinforcement learning: reward (the one TRL reward function), sqd (stages,
sampler, technique archive) and train (TRL's GRPOTrainer). Imports the policy and the
harness, nothing above.
"""
