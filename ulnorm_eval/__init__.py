"""ulnorm-eval: trec_eval-compatible evaluation with exact random-ranking bounds and UL/UE normalisations.

The public API (see the README):

- :func:`evaluate` -> :class:`Result` (``.frame``, ``.tidy()``, ``.summary()``)
- :func:`load_qrels`, :func:`load_run`, :func:`parse_measure`
"""
__version__ = "0.1.0"

__all__ = ["evaluate", "Options", "Result", "load_qrels", "load_run", "parse_measure", "__version__"]


def __getattr__(name):
    # Deferred so that `ulnorm-eval --help` never pays for numpy/pandas/pyarrow.
    if name in ("evaluate", "Options", "Result", "load_qrels", "load_run"):
        from .pipeline import evaluate as _ev
        return getattr(_ev, name)
    if name == "parse_measure":
        from .core.registry import parse
        return parse
    raise AttributeError(name)
