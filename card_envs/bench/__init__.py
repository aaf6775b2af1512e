"""Benchmarks that ship with the package (``card-envs bench``): the envs' throughput against
references measured in the same run. The repository's ``benchmarks/`` holds the rest."""
