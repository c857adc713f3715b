"""The package's shape, checked from the source: the import graph of ulnorm_eval (module-level and
function-level imports alike) has no cycle, no module imports another's private (``_x``) names, and
the core (the maths) imports neither I/O, pandas, click, rich nor the layers above it."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT as CHECKOUT

ROOT = CHECKOUT / "ulnorm_eval"


def _modules() -> dict:
    """module name -> path, for every .py file of the package."""
    out = {}
    for p in ROOT.rglob("*.py"):
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str):
    """(imported module, imported names) for every import statement anywhere in ``module``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, ()
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node, path.name == "__init__.py")
            yield target, tuple(a.name for a in node.names)


def graph() -> dict:
    """Edges between ulnorm_eval modules (``from pkg import submodule`` is an edge to the submodule)."""
    g = {m: set() for m in MODULES}
    for m in MODULES:
        for target, names in imports(m):
            if target in MODULES and target != m:
                g[m].add(target)
            for n in names:
                sub = f"{target}.{n}"
                if sub in MODULES and sub != m:
                    g[m].add(sub)
    return g


def _cycle(g: dict):
    colour = dict.fromkeys(g, 0)
    stack = []

    def visit(m):
        colour[m] = 1
        stack.append(m)
        for t in sorted(g[m]):
            if colour[t] == 1:
                return stack[stack.index(t):] + [t]
            if colour[t] == 0:
                found = visit(t)
                if found:
                    return found
        stack.pop()
        colour[m] = 2
        return None

    for m in sorted(g):
        if colour[m] == 0:
            found = visit(m)
            if found:
                return found
    return None


def test_the_package_is_found():
    assert {"ulnorm_eval.core.registry", "ulnorm_eval.core.records", "ulnorm_eval.pipeline.evaluate",
            "ulnorm_eval.pipeline.stream", "ulnorm_eval.cli.main"} <= set(MODULES)


def test_no_import_cycle():
    cycle = _cycle(graph())
    assert cycle is None, " -> ".join(cycle)


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_private_names_imported_across_modules():
    bad = []
    for m in MODULES:
        for target, names in imports(m):
            if not target.startswith("ulnorm_eval") or target == m:
                continue
            bad += [f"{m}: from {target} import {n}" for n in names
                    if n.startswith("_") and not n.startswith("__") and f"{target}.{n}" not in MODULES]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("ulnorm_eval.core")))
def test_core_imports_no_io_dataframes_or_ui(module):
    forbidden = ("pandas", "click", "rich", "pyarrow", "ulnorm_eval.inputs", "ulnorm_eval.render",
                 "ulnorm_eval.cli", "ulnorm_eval.pipeline", "ulnorm_eval.analysis")
    bad = [t for t, _ in imports(module) if any(t == f or t.startswith(f + ".") for f in forbidden)]
    assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("ulnorm_eval.render")))
def test_render_computes_nothing(module):
    """render formats what the layers below computed: no statistics (scipy, analysis.stats), no random
    draws (numpy.random); a correlation, a bootstrap or a normalised value reaches it in a result."""
    forbidden = ("scipy", "numpy.random", "ulnorm_eval.analysis.stats")
    bad = [name for t, names in imports(module) for name in (t, *(f"{t}.{n}" for n in names))
           if any(name == f or name.startswith(f + ".") for f in forbidden)]
    assert not bad, f"{module} imports {bad}"


# The layers, bottom up (docs/architecture.md): a module imports only from lower layers (and its own
# package).  inputs and core are both at the bottom and import neither each other nor anything above;
# extras.py and hashing.py are helpers below every layer; the notebook API (api, irm, the package's
# __init__) sits beside cli, and __main__ above it.  The package itself (its __version__) is loaded before
# any of its modules and may be imported from anywhere.
LAYERS = {"extras": 0, "hashing": 0, "inputs": 1, "core": 1, "pipeline": 2, "analysis": 3, "render": 4, "cli": 5,
          "api": 5, "irm": 5, "": 6, "__main__": 6}


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_violations() -> set:
    """'a -> b' for every import of a module from its own layer's peer (inputs <-> core) or from above."""
    out = set()
    for module, targets in graph().items():
        for target in targets - {"ulnorm_eval"}:
            mine, theirs = layer_of(module), layer_of(target)
            if mine != theirs and LAYERS[theirs] >= LAYERS[mine]:
                out.add(f"{module} -> {target}")
    return out


def test_every_module_has_a_layer():
    assert {layer_of(module) for module in MODULES} <= set(LAYERS)


def test_layers_import_only_downwards():
    """render computes nothing it imports from above it; pipeline imports neither analysis nor render;
    inputs and analysis do not import render; core and inputs import nothing of the package above them."""
    bad = layer_violations()
    assert not bad, "imports against the layer order:\n" + "\n".join(sorted(bad))


def test_layer_check_finds_an_upward_import(monkeypatch):
    fake = {"ulnorm_eval.inputs.trec": {"ulnorm_eval.render.values"}, "ulnorm_eval.render.values": set(),
            "ulnorm_eval.cli.main": {"ulnorm_eval.render.values"}}
    monkeypatch.setitem(globals(), "graph", lambda: fake)
    assert layer_violations() == {"ulnorm_eval.inputs.trec -> ulnorm_eval.render.values"}


def test_evaluate_and_stream_do_not_import_each_other():
    g = graph()
    ev, st = "ulnorm_eval.pipeline.evaluate", "ulnorm_eval.pipeline.stream"
    assert not (ev in g[st] and st in g[ev])
    assert ev not in g[st]


def test_cli_modules_share_only_public_names():
    g = graph()
    assert "ulnorm_eval.cli.main" not in g["ulnorm_eval.cli.compare"]
    assert "ulnorm_eval.cli.compare" not in g["ulnorm_eval.cli.nrg"]


COMMAND_LINES = 40  # a command parses options, builds a request, makes one library call and renders


def command_functions() -> dict:
    """'module.function' -> its length in lines (the def line to the end, decorators not counted) for
    every click command of ulnorm_eval.cli."""
    out = {}
    for module, path in MODULES.items():
        if not module.startswith("ulnorm_eval.cli."):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef):
                continue
            marks = [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]
            if any(m.endswith(".command") or m.endswith(".group") for m in marks):
                out[f"{module}.{node.name}"] = node.end_lineno - node.lineno + 1
    return out


def test_commands_are_thin():
    sizes = command_functions()
    assert {"ulnorm_eval.cli.main.eval_cmd", "ulnorm_eval.cli.compare.compare_cmd", "ulnorm_eval.cli.nrg.nrg_cmd",
            "ulnorm_eval.cli.summ.summ_cmd", "ulnorm_eval.cli.stability.stability_cmd"} <= set(sizes)
    long = {name: n for name, n in sizes.items() if n > COMMAND_LINES}
    assert not long, f"commands over {COMMAND_LINES} lines (build a request, call the library, render): {long}"


COMPLEXITY = 25  # cyclomatic complexity above this: split into named steps, or a table instead of a chain
PARAMETERS = 8  # parameters above this: a request or option record (a dataclass) instead
# The functions allowed above either limit, each with its reason: numeric and parsing kernels, where one
# function over arrays is the point (splitting it would pass the same arrays through more calls), and
# the notebook API, whose keyword names are documented (docs/python.md).  An entry no longer needed fails
# the test too, so the list only shrinks.
KERNELS = {
    "ulnorm_eval.core.permutations.db_values": "DB's Monte Carlo/enumeration kernel over the pools",
    "ulnorm_eval.core.permutations.permutation_values_many": "the permutation kernel, batched over queries",
}
# Over the limits and still to be split (each waits for another change to the same lines to land first).
SPLIT_PENDING = {"ulnorm_eval.analysis.stability.study"}


def _complexity(fn) -> int:
    """McCabe's cyclomatic complexity of one function as radon counts it (1, plus one per branch, loop,
    except, conditional expression, assert, comprehension and its conditions, match case, and each extra
    operand of and/or); nested functions and classes are counted on their own."""
    n, todo = 1, list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.IfExp, ast.Assert,
                             ast.match_case)):
            n += 1
        elif isinstance(node, ast.comprehension):
            n += 1 + len(node.ifs)
        elif isinstance(node, ast.BoolOp):
            n += len(node.values) - 1
        todo.extend(ast.iter_child_nodes(node))
    return n


def _parameters(fn) -> int:
    a = fn.args
    n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
    return n - bool(a.args and a.args[0].arg in ("self", "cls"))


def function_sizes() -> dict:
    """'module.function' -> (cyclomatic complexity, parameters) of every function of the package."""
    out = {}
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{module}.{node.name}"
                got = (_complexity(node), _parameters(node))
                out[name] = max(got, out.get(name, got))
    return out


def test_complexity_counts_branches_as_radon_does():
    fn = ast.parse("def f(a, b, *c, d=1, **e):\n"
                   "    if a and b or d:\n        return [x for x in c if x if not x]\n"
                   "    for y in c:\n        try:\n            pass\n        except ValueError:\n            pass\n"
                   "    def g():\n        if a:\n            pass\n"
                   "    return 1 if a else 2\n").body[0]
    assert _complexity(fn) == 1 + 1 + 2 + 3 + 1 + 1 + 1  # if, and/or, comprehension + 2 ifs, for, except, ifexp
    assert _parameters(fn) == 5


def test_functions_stay_simple():
    sizes = function_sizes()
    over = {name: size for name, size in sizes.items() if size[0] > COMPLEXITY or size[1] > PARAMETERS}
    unexplained = {name: size for name, size in over.items() if name not in KERNELS and name not in SPLIT_PENDING}
    assert not unexplained, (f"(complexity, parameters) over ({COMPLEXITY}, {PARAMETERS}) outside the kernels: "
                             f"{unexplained}: split the function, or pass a record")
    stale = sorted((set(KERNELS) | SPLIT_PENDING) - set(over))
    assert not stale, f"KERNELS lists functions within the limits (or gone): {stale}"


DOC = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")


def documented_modules() -> set:
    """Module paths (relative to the repository) named in docs/architecture.md's tree of the layers."""
    import re

    block = DOC.split("## The layers", 1)[1].split("```", 2)[1]
    stack, out = [], set()
    for line in block.splitlines():
        m = re.match(r"( *)(\S+)", line)
        if not m:
            continue
        indent, first = len(m.group(1)), m.group(2)
        stack = [(i, d) for i, d in stack if i < indent]
        where = "/".join(d for _, d in stack)
        if first.endswith("/"):
            stack.append((indent, first.rstrip("/")))
            out.add(f"{where}/{first.rstrip('/')}/__init__.py".lstrip("/"))
            continue
        names = line.strip() if ".py," in line else line.strip().split("  ")[0]
        for name in re.findall(r"\b(\w+\.py)\b", names):
            out.add(f"{where}/{name}".lstrip("/"))
    return out


def test_module_names_repeated_across_layers_are_explained():
    """Two modules of one name in different layers are listed in docs/architecture.md, which says why
    (the layer is the point) or that they are still to be renamed; a new pair fails here."""
    import collections
    import re

    paths = collections.defaultdict(list)
    for p in ROOT.rglob("*.py"):
        if p.name != "__init__.py":
            paths[p.name].append(p.relative_to(ROOT).as_posix())
    section = DOC.split("Module names repeated across layers", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([\w/]+\.py)`", section))
    missing = sorted(p for ps in paths.values() if len(ps) > 1 for p in ps if p not in named)
    assert not missing, f"docs/architecture.md does not explain these repeated module names: {missing}"


def test_every_module_is_described():
    files = {p.relative_to(ROOT.parent).as_posix() for p in ROOT.rglob("*.py")}
    missing = sorted(files - documented_modules())
    assert not missing, f"docs/architecture.md's tree of the layers lacks {missing}"


def test_the_worked_example_runs(tmp_path):
    """docs/architecture.md's toy measure, run as it stands: Top1 per query against a hand count, E
    against every permutation of the pool, and the registry as it was afterwards."""
    import itertools

    import numpy as np

    from ulnorm_eval.core.registry import FAMILIES

    code = DOC.split("## Worked example", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\nq2 0 d5 0\n")
    (tmp_path / "run").write_text("q1 Q0 d2 1 3 t\nq1 Q0 d1 2 2 t\nq1 Q0 d3 3 1 t\nq2 Q0 d4 1 2 t\nq2 Q0 d5 2 1 t\n")
    before = dict(FAMILIES)
    scope = {"QRELS": str(tmp_path / "qrels"), "RUN": str(tmp_path / "run")}
    exec(compile(code, "docs/architecture.md", "exec"), scope)
    assert FAMILIES == before and "Top1" not in FAMILIES
    frame = scope["frame"]
    assert frame["Top1"].tolist() == [0.0, 1.0]  # q1: d2 (grade 0) first; q2: d4 (grade 1) first
    pools = {"q1": [1, 0, 1], "q2": [1, 0]}  # the judged grades: --pool qrels
    exact = [np.mean([perm[0] >= 1 for perm in itertools.permutations(g)]) for g in pools.values()]
    assert np.allclose(frame["E(Top1)"], exact) and np.allclose(exact, [2 / 3, 1 / 2])
    assert frame["IUB(Top1)"].tolist() == [1.0, 1.0]
    assert np.allclose(frame["UL2(Top1)"], [-1.0, 1.0])  # (A - E) / (E - W) below E, (A - E) / (I - E) above


# One- and two-letter names (issue 38): kept only where they are a symbol of the formula the function's
# docstring states (docs/architecture.md, "Names", gives each symbol's paper and equation).
FORMULA_NAMES = {
    "k",  # the cutoff
    "n",  # pool size (Karmaker & Feng), sample size (Student's t), the n of ROUGE-n (Feng 2023)
    "m", "H",  # m = min(k, n) and H_m in E[SP@k] = (P/n) H_m + P(P-1)/(n(n-1)) (m - H_m)
    "p", "r", "f",  # RBP's persistence (Moffat & Zobel 2008); ROUGE's precision, recall, F (Feng 2023)
    "P", "R", "F", "Q", "U", "V", "N",  # pool and qrels counts (core/measures/common.py); BERTScore's P, R, F
    "A", "E", "I", "W",  # value, expectation, IUB, WLB (Karmaker & Feng's UL normalisation)
    "g", "d", "G", "C", "S", "T",  # gains, discount, gain matrix, design, systems, topics (Kanoulas & Aslam 2009)
    "L", "M", "D", "K", "B",  # summary length, matches, discount prefix, infAP's K, _discordant's B
    "s", "w", "t", "a", "b", "l", "u",  # infAP's beta-binomial terms; the layer-cake nDCG over holes
}
SHORT_NAMES_PER_100_LINES = 8.0  # 16.0 on c4afe28 (the issue asks for half); 7.2 when this test was written
# modules whose every short name is a formula symbol (the others, pipeline/ and inputs/ among them while
# their hot paths are being rewritten, are held by the package-wide rate)
FORMULA_ONLY = (
    "analysis/gate.py", "analysis/human_correlation.py", "analysis/marks.py", "analysis/columns.py",
    "core/draws.py", "core/expectations.py", "core/measures/__init__.py",
    "core/measures/rbp.py", "core/measures/trec.py", "core/measures/trec_gains.py",
    "core/measures/trec_precision.py", "core/measures/cumulative.py",
    "core/measures/precision.py", "core/normalise.py", "core/permutations.py", "core/pools.py",
    "core/summary.py", "core/text_measures.py", "core/variants.py", "core/bertscore.py", "analysis/stats.py",
    "analysis/stability.py", "render/compare_report.py", "render/eval_report.py", "render/formats.py",
    "render/frames.py", "render/json_out.py", "render/paper.py", "render/plots.py",
    "render/registry_tables.py", "render/stability_report.py", "render/values.py",
)


def short_names(path: Path) -> list:
    """The one- and two-letter names a module assigns or takes as parameters, one entry per binding
    (``_`` aside): the count behind the issue's 'names per 100 lines'."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            out += [(a.arg, a.lineno) for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.append((node.id, node.lineno))
    return [(name, line) for name, line in out if len(name) <= 2 and name != "_"]


def test_short_names_are_formula_symbols():
    lines = sum(p.read_text(encoding="utf-8").count("\n") for p in ROOT.rglob("*.py"))
    count = sum(len(short_names(p)) for p in ROOT.rglob("*.py"))
    assert 100 * count / lines <= SHORT_NAMES_PER_100_LINES, (count, lines)
    stray = {f"{module}:{line}": name for module in FORMULA_ONLY for name, line in short_names(ROOT / module)
             if name not in FORMULA_NAMES}
    assert not stray, f"short names that are no formula's symbol (name them for what they hold): {stray}"


def test_short_names_counts_bindings_and_parameters(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(x, data, *, kw=1):\n    for i, value in enumerate(data):\n        _ = value\n"
                      "    total = [q for q in data]\n    return x\n", encoding="utf-8")
    assert sorted(name for name, _ in short_names(module)) == ["i", "kw", "q", "x"]


def _records_section() -> str:
    return DOC.split("## The records", 1)[1].split("\n## ", 1)[0]


def _documented_fields() -> dict:
    """record -> the names docs/architecture.md gives in backticks for it: the first column of the
    Family table, the second of the other records' table."""
    import re

    out = {"Family": set()}
    for line in _records_section().splitlines():
        cells = line.split("|")
        if len(cells) < 4 or not cells[1].strip().startswith("`"):
            continue
        record = re.fullmatch(r"`(\w+)`", cells[1].strip())
        if record and record.group(1) in ("Param", "TrecName", "Variant", "TextFamily"):
            out[record.group(1)] = set(re.findall(r"`(\w+)", cells[2]))
        else:
            out["Family"] |= set(re.findall(r"`(\w+)", cells[1]))
    return out


def test_records_are_keyword_only_and_every_field_documented():
    """Every record of core/records.py is built from keywords (a record of 37 fields built by position
    cannot be read), and docs/architecture.md's tables name each of its fields."""
    import dataclasses

    from ulnorm_eval.core import records

    documented = _documented_fields()
    for name in ("Family", "Param", "TrecName", "Variant", "TextFamily"):
        record = getattr(records, name)
        assert all(f.kw_only for f in dataclasses.fields(record)), name
        missing = {f.name for f in dataclasses.fields(record)} - documented.get(name, set())
        assert not missing, f"docs/architecture.md does not document {name}'s fields {sorted(missing)}"
    with pytest.raises(TypeError):
        records.Param("rel", "int", None, "a positional record")


def test_requests_and_views_are_keyword_only():
    """A command's request (EvalRequest has 21 fields, CompareRequest 15) and the views of its renderer
    are built from keywords: each field is named where the command line fills it."""
    import dataclasses
    import importlib

    records = {"analysis.eval_request": "EvalRequest", "pipeline.summ_eval": "SummRequest",
               "analysis.compare": "CompareRequest", "analysis.query_types": "QueriesRequest",
               "analysis.nrg": "NRGRequest", "analysis.stability": "StabilityRequest",
               "analysis.repro": "ReproRequest",
               "render.files": "View"}
    for module, name in records.items():
        record = getattr(importlib.import_module(f"ulnorm_eval.{module}"), name)
        assert all(f.kw_only for f in dataclasses.fields(record)), name
    for module in (m for m in MODULES if m.startswith("ulnorm_eval.inputs.")):  # every record of inputs/
        for name, record in vars(importlib.import_module(module)).items():
            if dataclasses.is_dataclass(record) and record.__module__ == module:
                assert all(f.kw_only for f in dataclasses.fields(record)), name
    requests = {node.name for path in ROOT.rglob("*.py") for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.ClassDef) and node.name.endswith("Request")}
    assert requests == {name for name in records.values() if name.endswith("Request")}


# core's positional records: a Metric is a (measure, variant) pair; Ranking and Judgements, the
# kernels' arrays, are built in 60 places across the layers (a change of its own, not yet made); summ's
# TextMeasure and TextMetric have Metric's shape, which analysis.compare builds by position for either
POSITIONAL = {"Metric", "Ranking", "Judgements", "TextMeasure", "TextMetric"}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(("ulnorm_eval.analysis.", "ulnorm_eval.render.",
                                                                             "ulnorm_eval.cli.", "ulnorm_eval.core.",
                                                                             "ulnorm_eval.pipeline.")) or m.count(".") == 1))
def test_records_are_keyword_only(module):
    """Every record analysis/, render/, cli/, core/, pipeline/ and the top-level modules define (a
    settings, result, outcome or view dataclass) is built from keywords (but :data:`POSITIONAL`); a
    subclass answers for the fields it declares (NRGResult's, not pipeline's Result's)."""
    import dataclasses
    import importlib

    mod = importlib.import_module(module)
    records = [value for value in vars(mod).values() if isinstance(value, type) and dataclasses.is_dataclass(value)
               and value.__module__ == module and value.__name__ not in POSITIONAL]
    positional = [f"{record.__name__}.{f.name}" for record in records for f in dataclasses.fields(record)
                  if f.name in record.__dict__.get("__annotations__", {}) and not f.kw_only]
    assert not positional, f"{module}: fields built by position: {positional}"


def test_the_route_of_one_evaluation_names_what_exists():
    """docs/architecture.md's route of one evaluation names modules and functions (`pipeline/evaluate.
    load_qrels`, `orchestrator.plan_source`, `RunFile.check`): each module exists, and each function or
    class in it, so the page follows the code when a step is renamed or removed."""
    import importlib
    import re

    section = DOC[DOC.index("## The route of one evaluation"):DOC.index("## Names")]
    modules = {path.stem: path for path in ROOT.rglob("*.py")}
    orchestrator = importlib.import_module("ulnorm_eval.pipeline.orchestrator")
    named = 0
    for token in re.findall(r"`([\w/]+(?:\.[\w]+)*)`", section):
        head, _, tail = token.replace(".py", "").partition(".")
        if head.endswith("/"):  # a package: its directory
            assert (ROOT / head).is_dir(), f"docs/architecture.md's route names {token}: no package"
            continue
        if "/" in head or head in modules:
            path = ROOT / f"{head}.py" if "/" in head else modules[head]
            assert path.exists(), f"docs/architecture.md's route names {token}: no module {path}"
            obj = importlib.import_module("ulnorm_eval." + ".".join(path.relative_to(ROOT).with_suffix("").parts))
        elif hasattr(orchestrator, head):
            obj, tail = orchestrator, token
        else:
            continue  # a word of the prose (`Run`, `-j N`)
        for part in filter(None, tail.split(".")):
            assert hasattr(obj, part), f"docs/architecture.md's route names {token}: {obj} has no {part}"
            obj = getattr(obj, part)
            named += 1
    assert named > 30
