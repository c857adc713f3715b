"""Command-line layer: one module per command; shared option bundles in options.py."""
from .main import main

__all__ = ["main"]
