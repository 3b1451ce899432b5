"""What several benchmarks share, so that each script holds only what it measures."""
