"""ulnorm-eval: trec_eval-compatible evaluation with exact random-ranking bounds and UL/UE normalisations.

The public API (see the README):

- :func:`evaluate` -> :class:`Evaluation` (``.frame``, ``.wide()``, ``.tidy()``, ``.summary()``,
  ``.per_query``, ``.bounds``, ``.notes``) on paths, pandas DataFrames or pytrec_eval-style dicts
- :func:`compare`, :func:`nrg`, :func:`paper_table` (:mod:`ulnorm_eval.api`)
- :func:`load_qrels`, :func:`load_run`, :func:`parse_measure`
- ir_measures / PyTerrier measure objects: :mod:`ulnorm_eval.irm`
"""
__version__ = "0.1.0"

__all__ = ["evaluate", "compare", "nrg", "paper_table", "Evaluation", "Options", "Result", "load_qrels", "load_run",
           "parse_measure", "__version__"]

_API = ("evaluate", "compare", "nrg", "paper_table", "Evaluation")


def __getattr__(name):
    # Deferred so that `ulnorm-eval --help` never pays for numpy/pandas/pyarrow.
    if name in _API:
        from . import api
        return getattr(api, name)
    if name in ("Options", "Result", "load_qrels", "load_run"):
        from .pipeline import evaluate as _ev
        return getattr(_ev, name)
    if name == "parse_measure":
        from .core.registry import parse
        return parse
    raise AttributeError(name)
