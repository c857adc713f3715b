"""Click parameter types refusing what ``float`` and ``click.FloatRange`` let through: NaN, which compares false
with everything (a NaN --alpha turned the gate off: ``p < nan`` is never true), and infinities (-l inf: nothing
relevant) are usage errors (exit 2) in every float option (:data:`FINITE`, :class:`FiniteFloat`);
:class:`NonEmpty` refuses an empty or blank value."""
from __future__ import annotations

import math

import click

__all__ = ["FINITE", "FiniteFloat", "NonEmpty", "GateThreshold", "Jobs", "ALPHA", "CommaList"]


class Finite(click.types.FloatParamType):
    """A finite float (:data:`FINITE`)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


FINITE = Finite()


class FiniteFloat(click.FloatRange):
    """A finite float within a range (``FiniteFloat(0, 1, min_open=True)``)."""

    def convert(self, value, param, ctx):
        return super().convert(FINITE.convert(value, param, ctx), param, ctx)


# --alpha: below 1e-15, 1 - A/2 is 1 (or a few units of its last bit from it) in float64, and a (1 - A)
# interval's quantile is infinite (compare --alpha 5e-324 printed [-inf, inf])
ALPHA = FiniteFloat(1e-15, 1, max_open=True)


class RelLevel(Finite):
    """-l/--rel-level: a finite number >= 0 (:data:`ulnorm_eval.pipeline.blocks.LEVEL_BELOW_ZERO`)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if ctx is not None and isinstance(value, str):  # as typed: --trec reads it as trec_eval does (atol)
            ctx.meta["rel_level_text"] = value
        if number < 0:
            from ..pipeline.blocks import LEVEL_BELOW_ZERO

            self.fail(f"{value!r}: {LEVEL_BELOW_ZERO}", param, ctx)
        return number


class NonEmpty(click.ParamType):
    """A string that is not empty or only blanks (the value is passed on unchanged); ``names``: a
    comma-separated list, which must name something (``--norm ','`` is not 'none')."""

    name = "text"

    def __init__(self, names: bool = False):
        self.names = names

    def convert(self, value, param, ctx):
        if not isinstance(value, str):
            return value
        if value.strip() == "":
            hint = " (see 'ulnorm-eval measures')" if getattr(param, "name", "") in ("measures", "variants") else ""
            self.fail(f"an empty value; give a name{hint}", param, ctx)
        if "\x00" in value:
            self.fail("contains a NUL character", param, ctx)
        if self.names and not any(part.strip() for part in value.split(",")):
            self.fail(f"{value!r} names nothing (a comma-separated list of names)", param, ctx)
        return value


class GateThreshold(NonEmpty):
    """``METRIC=VALUE`` whose VALUE, when it is a number, is finite (the gate parses the rest)."""

    def convert(self, value, param, ctx):
        value = super().convert(value, param, ctx)
        if isinstance(value, str) and "=" in value:
            try:
                number = float(value.rsplit("=", 1)[1])
            except ValueError:
                return value  # not a number at all: the gate's parser names the problem
            if not math.isfinite(number):
                self.fail(f"{value!r}: the threshold is not a finite number", param, ctx)
        return value


class Jobs(click.ParamType):
    """-j/--jobs: ``auto`` (or 0), given as 0 (pipeline.parallel.AUTO), or a whole number of workers >= 1."""

    name = "jobs"

    def convert(self, value, param, ctx):
        number = 0 if str(value).strip().lower() == "auto" else click.INT.convert(value, param, ctx)
        if number < 0:
            self.fail(f"{value!r}: give 'auto' or a number of worker processes >= 1", param, ctx)
        return number


class CommaList(click.ParamType):
    """A comma-separated list of ``item`` values (a click type), each once, in the order given."""

    def __init__(self, item: click.ParamType):
        self.item, self.name = item, f"{item.name}[,...]"

    def convert(self, value, param, ctx):
        if isinstance(value, list):
            return value
        parts = [self.item.convert(part.strip(), param, ctx) for part in str(value).split(",") if part.strip()]
        if not parts:
            self.fail(f"{value!r} names nothing (a comma-separated list)", param, ctx)
        return list(dict.fromkeys(parts))
