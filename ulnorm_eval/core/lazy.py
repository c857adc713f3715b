"""numpy, imported on first use.

The measure modules define their kernels next to their registry records, and listing the registry
(``ulnorm-eval measures``, ``--help``, the docs) needs the records only: importing numpy for that
would cost more than the whole listing (~45 ms).  ``np`` stands in for the module; its first
attribute lookup imports numpy, and every name looked up is then kept on the stand-in, so later
lookups cost what a module attribute does.
"""
from __future__ import annotations

__all__ = ["np"]


class _LazyNumpy:
    def __getattr__(self, name: str):
        import numpy

        value = getattr(numpy, name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return "<numpy, imported on first use>"


np = _LazyNumpy()
