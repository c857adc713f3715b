"""Our measures and variants as ir_measures measure objects (so PyTerrier's ``pt.Experiment`` reports them).

>>> import ir_measures
>>> from ulnorm_eval.irm import UL2, E, nDCG, AP
>>> ir_measures.calc_aggregate([nDCG@10, UL2(nDCG@10), E(AP)], qrels, run)   # DL-HARD, bm25 (rounded)
{nDCG@10: 0.3037, UL2(nDCG@10): 0.3783, E(AP): 0.0698}

Every family of ``ulnorm-eval measures`` is an object here, with ir_measures' syntax for parameters and
cutoffs, and every variant that scores one run is a wrapper, which also takes ir_measures' own measures
(``UL2(ir_measures.ERR@10)``: Monte Carlo E); :func:`measure` builds one from a name.  The objects
derive from the class ``ir_measures.define`` builds, so its ``runtime`` provider serves them; their
``runtime_impl`` hands the DataFrames to this package's pipeline with the command line's defaults, so
the values equal ``ulnorm-eval -f tsv -q``'s to the last digit (docs/python.md).  Notes go to the
``ulnorm_eval`` logger at WARNING level, each once per qrels and run.

``ulnorm_eval.irm.AP`` is our AP and ``ir_measures.AP`` is ir_measures' (pytrec_eval's): two objects that
compare equal (ir_measures compares name and parameters), so a dict holding both keeps one key; ours
orders a run by trec_eval's rule in double precision and scores every qrels query: pass one of them.
"""
from __future__ import annotations

import logging
from typing import Any, Iterator

import ir_measures
import numpy as np
from ir_measures.measures import Measure, ParamInfo

from .core.registry import FAMILIES, VARIANTS, UnknownMeasure, parse  # importing it registers the families
from .core.summary import summarise
from .core.variants import PRIOR_VARIANTS

__all__ = ["UlnormMeasure", "FamilyMeasure", "VariantMeasure", "measure", "FAMILY_OBJECTS",
           "VARIANT_OBJECTS", *[family for family in FAMILIES],
           *[variant for variant in VARIANTS if variant not in PRIOR_VARIANTS]]


LOG = logging.getLogger("ulnorm_eval")


# The class ir_measures.define builds is the one its 'runtime' provider serves (it looks for runtime_impl).
_RuntimeMeasure = type(ir_measures.define(lambda qrels, run: iter(()), name="ulnorm-eval", support_cutoff=False))


class _Summary(ir_measures.measures.base.Agg):
    """The mean (or sum, or geometric mean) of the values as the command line's ``all`` row forms it."""

    def __init__(self, rule: str):
        self.rule, self.values = rule, []

    def add(self, value):
        self.values.append(value)

    def result(self):
        return summarise(np.asarray(self.values, dtype=np.float64), None, self.rule)


class _Cache:
    """The last qrels/run DataFrames converted (ir_measures calls every measure with the same two objects)."""

    def __init__(self):
        self.key = self.value = None
        self.said: set = set()  # the notes logged for this qrels and run (each once)

    def get(self, qrels, run):
        if self.key is not None and self.key[0] is qrels and self.key[1] is run:
            return self.value
        self.said = set()
        from .inputs.in_memory import qrels_from_object, run_from_object

        qrels_frame = qrels_from_object(qrels, "<qrels>")
        run_frame = run_from_object(run, "run")
        original = dict(zip(qrels["query_id"].astype(str), qrels["query_id"]))
        self.key, self.value = (qrels, run), (qrels_frame, run_frame, original)  # holding both keeps their ids unique
        return self.value


_CACHE = _Cache()


class UlnormMeasure(_RuntimeMeasure):
    """An ir_measures measure computed by ulnorm-eval's pipeline (see the module)."""

    NAME = "ulnorm-eval"
    SUPPORTED_PARAMS: dict = {}
    RUN_INPUTS = ["query_id", "doc_id", "score"]
    QREL_INPUTS = ["query_id", "doc_id", "relevance"]

    def metric(self):
        """Our :class:`~ulnorm_eval.core.registry.Metric` (raises UnknownMeasure when incomplete)."""
        raise NotImplementedError

    def runtime_impl(self, qrels, run) -> Iterator[Any]:
        from .pipeline.blocks import Options
        from .pipeline.orchestrator import evaluate_runs

        metric = self.metric()
        qrels_frame, run_frame, original = _CACHE.get(qrels, run)
        (ranked,) = evaluate_runs(qrels_frame, [run_frame], [metric], Options())
        for note in ranked.notes:
            if note not in _CACHE.said:  # a note on the run is the same for every measure: said once
                _CACHE.said.add(note)
                LOG.warning(note)
        values = ranked.values[metric]
        # trec_eval's query order (qid byte order): the aggregator then sums as the 'all' row does
        for index in np.argsort(np.asarray(ranked.qids, dtype=object), kind="stable"):
            qid = ranked.qids[index]
            yield ir_measures.Metric(original.get(qid, qid), self, float(values[index]))

    def aggregator(self) -> _Summary:
        return _Summary(self.metric().summary)

    def __repr__(self) -> str:
        try:
            return str(self.metric())
        except ValueError:  # incomplete (P without a cutoff, a variant without a measure): ir_measures' form
            return Measure.__repr__(self)

    def __eq__(self, other):
        return isinstance(other, Measure) and repr(self) == repr(other)

    def __hash__(self):
        return hash(repr(self))


def _param_info(p) -> ParamInfo:
    dtype = {"int": int, "float": (int, float), "str": str, "gains": dict, "discount": (str, list, tuple)}[p.kind]
    return ParamInfo(dtype=dtype, choices=p.choices if p.choices else ParamInfo().choices, default=p.default,
                     desc=p.doc)


class FamilyMeasure(UlnormMeasure):
    """A measure family of the registry (``nDCG``); ``nDCG@10``, ``nDCG(dcg='exp-log2')`` refine it."""

    def metric(self):
        name = self.NAME
        if self.params.get("cutoff") is None and FAMILIES[name].cutoff == "required":
            raise UnknownMeasure(f"{name} needs a cutoff, e.g. {name}@10")
        params = {key: value for key, value in self.params.items() if key != "cutoff"}
        if params:
            name += "(" + ",".join(f"{key}={value!r}" for key, value in sorted(params.items())) + ")"
        if self.params.get("cutoff") is not None:
            name += f"@{self.params['cutoff']}"
        return parse(name)


class VariantMeasure(UlnormMeasure):
    """A variant (``UL2``) wrapping a measure: ``UL2(nDCG@10)``; ``UL2(nDCG)@10`` is the same."""

    SUPPORTED_PARAMS = {"measure": ParamInfo(required=True, desc="the measure the variant wraps")}

    def __call__(self, measure=None, **kw):
        if measure is not None:
            kw["measure"] = measure
        return super().__call__(**kw)

    def __matmul__(self, cutoff):
        inner = self.params.get("measure")
        if inner is None:
            raise TypeError(f"{self.NAME}@{cutoff}: wrap a measure first, e.g. {self.NAME}(nDCG)@{cutoff}")
        return self(measure=inner @ cutoff)

    def metric(self):
        inner = self.params.get("measure")
        if inner is None:
            raise UnknownMeasure(f"{self.NAME} wraps a measure: {self.NAME}(nDCG@10)")
        return parse(f"{self.NAME}({inner})")


def _object(record, base: type, **attrs) -> UlnormMeasure:
    """The measure object of a family or variant record: an instance of its own subclass of ``base``."""
    return type(record.name, (base,), {"NAME": record.name, "__name__": record.name,
                                       "__doc__": f"{record.name}: {record.formula} ({record.cite})", **attrs})()


def _family(fam) -> FamilyMeasure:
    params = {"cutoff": ParamInfo(dtype=int, desc="ranking cutoff")} if fam.cutoff != "none" else {}
    return _object(fam, FamilyMeasure, SUPPORTED_PARAMS=params | {param.name: _param_info(param) for param in fam.params})


FAMILY_OBJECTS: dict[str, FamilyMeasure] = {family.name: _family(family) for family in FAMILIES.values()}
VARIANT_OBJECTS: dict[str, VariantMeasure] = {variant.name: _object(variant, VariantMeasure) for variant in VARIANTS.values()
                                              if variant.name not in PRIOR_VARIANTS}
globals().update(FAMILY_OBJECTS)
globals().update(VARIANT_OBJECTS)


def measure(name: str) -> UlnormMeasure:
    """The object of a measure name (``'UL2(nDCG@10)'``, ``'ndcg_cut.10'``); one computed through
    ir_measures (``ERR@10``) is ir_measures' own object, wrapped when a variant is named."""
    parsed = parse(name)
    if parsed.variant in PRIOR_VARIANTS:
        raise UnknownMeasure(f"{parsed}: NRG and UC score a run against prior runs: use ulnorm_eval.nrg()")
    if parsed.measure.native:
        inner = FAMILY_OBJECTS[parsed.measure.family](**dict(parsed.measure.params),
                                                 **({"cutoff": parsed.measure.cutoff} if parsed.measure.cutoff else {}))
    else:
        inner = parsed.measure.foreign
    return VARIANT_OBJECTS[parsed.variant](inner) if parsed.variant else inner
