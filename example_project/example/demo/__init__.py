"""Demo tasks and the ``run_demo`` command of the example project."""
