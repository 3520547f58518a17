"""The Cuvil version: one place for cuvilc --version, the Python package and
the wheel's file name."""

CUVIL_VERSION = "0.1.0"
