"""The dataclass methods the command's entry point serves compiled (ulnorm_eval/dataclass_code.py,
scripts/gen_dataclass_code.py): the same code ``exec`` would compile, every dataclass of a plain
evaluation served, the generated file current, and a library import left alone."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ulnorm_eval import dataclass_code
from ulnorm_eval.__main__ import as_compiled

ROOT = Path(__file__).resolve().parents[1]
ATTRS = ("co_code", "co_names", "co_varnames", "co_cellvars", "co_freevars", "co_filename", "co_name", "co_qualname",
         "co_firstlineno", "co_linetable", "co_exceptiontable", "co_flags", "co_stacksize", "co_argcount",
         "co_posonlyargcount", "co_kwonlyargcount", "co_nlocals")


def differences(served, compiled, where="") -> list:
    """Every attribute in which two code objects (and their nested ones) differ, positions included."""
    out = [f"{where}{a}" for a in ATTRS if getattr(served, a) != getattr(compiled, a)]
    if list(served.co_positions()) != list(compiled.co_positions()):
        out.append(f"{where}co_positions")
    if len(served.co_consts) != len(compiled.co_consts):
        return out + [f"{where}co_consts"]
    for i, (s, c) in enumerate(zip(served.co_consts, compiled.co_consts)):
        if hasattr(s, "co_code") and hasattr(c, "co_code"):
            out += differences(s, c, f"{where}{compiled.co_name}.")
        elif type(s) is not type(c) or s != c:
            out.append(f"{where}co_consts[{i}]")
    return out


def test_served_code_is_what_exec_compiles():
    """Each served function's code equals, attribute by attribute (file ``<string>``, lines and columns
    included), the ``__create_fn__`` that compiling its text gives."""
    assert len(dataclass_code.TEXTS) == len(dataclass_code.CODES) > 100
    for text, code in zip(dataclass_code.TEXTS, dataclass_code.CODES):
        # as dataclasses' exec compiles it: no __future__ flags (this file's are not inherited)
        compiled = [c for c in compile(text, "<string>", "exec", dont_inherit=True).co_consts if hasattr(c, "co_code")]
        assert len(compiled) == 1 and compiled[0].co_name == "__create_fn__"
        assert differences(as_compiled(code), compiled[0]) == [], text[:200]


def test_as_compiled_moves_the_file_and_lines():
    """The check above can fail: a function defined on line 3 of another file differs until moved."""
    text = "def __create_fn__(x):\n def __init__(self):\n  self.x = x\n return __init__"
    namespace: dict = {}
    exec(compile("\n\n" + text, "elsewhere.py", "exec", dont_inherit=True), namespace)
    code = namespace["__create_fn__"].__code__
    compiled = compile(text, "<string>", "exec", dont_inherit=True).co_consts[0]
    assert "co_filename" in differences(code, compiled) and "co_firstlineno" in differences(code, compiled)
    assert differences(as_compiled(code), compiled) == []


PLAIN_EVAL = """
import builtins, sys
compiled = []
real = builtins.exec
def counting(source, *a, **k):
    if type(source) is str and source.startswith("def __create_fn__("):
        compiled.append(source)
    return real(source, *a, **k)
builtins.exec = counting
sys.argv = ["ulnorm-eval", {q!r}, {r!r}, "--norm", "none", "-m", "nDCG@10", "-m", "AP"]
from ulnorm_eval.__main__ import run
try:
    run()
except SystemExit as e:
    assert not e.code, e.code
import dataclasses
print("compiled", len(compiled), "served", "exec" in vars(dataclasses))
"""


def _plain_eval(tmp_path, compiled: bool) -> list:
    """A plain evaluation run by the entry point from a copy of the package, compiled as an install
    compiles it (``compiled``) or as bare source that may not be compiled to .pyc files."""
    import compileall
    import os
    import shutil

    pkg = tmp_path / "pkg"
    shutil.copytree(ROOT / "ulnorm_eval", pkg / "ulnorm_eval", ignore=shutil.ignore_patterns("__pycache__"))
    if compiled:
        assert compileall.compile_dir(pkg, quiet=1)
    q, r = tmp_path / "q", tmp_path / "r"
    q.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    r.write_text("1 Q0 a 1 2.5 t\n1 Q0 x 2 1.5 t\n2 Q0 c 1 3 t\n1 Q0 b 3 1.5 t\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(pkg), os.environ.get("PYTHONPATH", "")]),
               PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", PLAIN_EVAL.format(q=str(q), r=str(r))], capture_output=True,
                         text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert any(line.split()[:2] == ["nDCG@10", "all"] for line in lines)
    return lines[-1].split()


def test_command_compiles_no_dataclass_method_of_a_plain_eval(tmp_path):
    """In the command's process, installed (compiled), every dataclass a plain evaluation creates is
    served: the built-in ``exec`` compiles none of their methods."""
    last = _plain_eval(tmp_path, compiled=True)
    if dataclass_code.PYTHON == tuple(sys.version_info[:2]):
        assert last == ["compiled", "0", "served", "True"]
    else:  # another Python's dataclasses write other texts: nothing to serve, dataclasses left alone
        assert last[-1] == "False"


def test_source_without_bytecode_compiles_as_before(tmp_path):
    """From source that may not be compiled to .pyc files (PYTHONDONTWRITEBYTECODE), the generated
    module's 280 KB would be compiled at every start, which costs more than it saves: dataclasses
    compile their methods as usual."""
    last = _plain_eval(tmp_path, compiled=False)
    assert last[-1] == "False" and int(last[1]) > 20


def test_generated_file_is_current():
    """scripts/gen_dataclass_code.py --check: the file holds the texts this Python's dataclasses write
    for the package (rewritten after a dataclass changes); under another Python the check fails."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_dataclass_code.py"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == (0 if dataclass_code.PYTHON == tuple(sys.version_info[:2]) else 1), out.stderr


def test_library_import_leaves_dataclasses_alone():
    code = ("import dataclasses\nimport ulnorm_eval.cli.main, ulnorm_eval.pipeline.evaluate\n"
            "print('exec' in vars(dataclasses))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
