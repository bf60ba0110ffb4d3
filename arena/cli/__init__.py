"""The ``arena`` command line. Logging is configured here and nowhere else."""
