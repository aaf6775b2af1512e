"""A re-runnable mutation audit: hand-written mutants (``catalog.py``) and their runner
(``run.py``). It checks that the tests notice each plausible bug the catalog models."""
