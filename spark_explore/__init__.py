"""PySpark backend for modelcheck."""
