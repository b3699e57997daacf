"""Flow control (DESIGN §15): concurrency keys enforced when jobs are claimed."""
