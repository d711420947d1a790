"""perfRL lab: measured-performance rewards for code LLMs."""
