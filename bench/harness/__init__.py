"""sigmatool's benchmark harness: generated datasets, reference programs, paired timing and the report.

``bench/run.py`` is the entry point; ``refs/`` holds the reference programs, each run as its own process.
"""
