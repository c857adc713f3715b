"""inputs/compute.py calls Arrow's kernels without importing pyarrow.compute: every function gives the
array pyarrow.compute's function of the same name gives on the same arguments (values, types, nulls
and errors), and the command's process asks OpenBLAS for one thread and Arrow for the C library's allocator,
unless the user chose."""
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as ref
import pytest

from ulnorm_eval.inputs import compute as pc

S = pa.array(["b", "a", None, "#c", "a", "", "10", "+3", "0x9", "d"])
CH = pa.chunked_array([["x", "a"], ["b", "x"]])
F = pa.array([1.5, float("inf"), None, -0.0, float("nan")])
B = pa.array([True, False, None, True])
I = pa.array([3, 1, 2, 1], pa.int64())
T = pa.table({"q": pa.array([1, 0, 1, 0]), "s": pa.array([0.5, 0.5, 2.0, 0.5]), "d": pa.array(["a", "c", "b", "b"])})
KEYS = [("q", "ascending"), ("s", "descending"), ("d", "descending")]

CASES = [
    ("take", (S, pa.array([9, 0, 2, 2])), {}),
    ("take", (CH, pa.array([3, 0])), {}),
    ("cast", (I, pa.float64()), {}),
    ("cast", (pa.array(["1", "-2", None]), pa.int64()), {}),
    ("cast", (CH, pa.large_string()), {}),
    ("dictionary_encode", (S,), {}),
    ("dictionary_encode", (CH,), {}),
    ("unique", (S,), {}),
    ("index_in", (S,), {"value_set": pa.array(["a", "d", "zz"])}),
    ("is_in", (S,), {"value_set": pa.array(["a", "d", "zz"])}),
    ("fill_null", (pa.array([1, None, 3], pa.int32()), -1), {}),
    ("fill_null", (B, False), {}),
    ("fill_null", (pa.array([None, 2], pa.int64()), pa.scalar(7, pa.int8())), {}),
    ("index", (B, True), {}),
    ("index", (S, "zz"), {}),
    ("sort_indices", (T,), {"sort_keys": KEYS}),
    ("all_", (B,), {}),
    ("all_", (pa.array([], pa.bool_()),), {}),
    ("any_", (pa.array([False, None]),), {}),
    ("is_finite", (F,), {}),
    ("equal", (S, pa.array(["b"] * len(S))), {}),
    ("and_", (B, pa.array([True, True, True, None])), {}),
    ("starts_with", (S, "#"), {}),
    ("match_substring_regex", (S, r"^[+-]?[0-9]+$"), {}),
    ("replace_substring_regex", (S, r"^\+", ""), {}),
]


@pytest.mark.parametrize("name,args,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_same_result_as_pyarrow_compute(name, args, kw):
    want = getattr(ref, name.rstrip("_"))(*args, **kw)
    got = getattr(pc, name)(*args, **kw)
    assert type(got) is type(want)
    assert got.type == want.type
    assert got.equals(want)


@pytest.mark.parametrize("name,args", [("cast", (pa.array(["1.5"]), pa.int64())),
                                       ("cast", (pa.array([300]), pa.int8())),
                                       ("take", (S, pa.array([10])))])
def test_same_errors_as_pyarrow_compute(name, args):
    with pytest.raises(pa.ArrowException) as want:
        getattr(ref, name)(*args)
    with pytest.raises(type(want.value)):
        getattr(pc, name)(*args)


def _after_command(tmp_path, env, report: str, imports: str = "") -> str:
    """``repr(report)`` (a Python expression, after ``imports``) in the process of a command run on toy
    qrels (``main()``, with ``env``): what the command set up for itself and left there."""
    q = tmp_path / "q"
    q.write_text("1 0 a 1\n")
    code = ("import os, sys\nfrom ulnorm_eval.cli.main import main\n"
            f"sys.argv = ['ulnorm-eval', {str(q)!r}, {str(q)!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"{imports}sys.stderr.write(repr({report}))\n"
            # then leave as the command itself does (cli/guard._exit_now), not through the interpreter's
            # shutdown, which can abort in Arrow's threads (apache/arrow#34314) before stderr is flushed
            "sys.stdout.flush()\nsys.stderr.flush()\nos._exit(0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    return out.stderr.strip().splitlines()[-1]


def _settings(tmp_path, env):
    return _after_command(tmp_path, env, "(os.environ.get('OPENBLAS_NUM_THREADS'), pa.default_memory_pool().backend_name)",
                          "import pyarrow as pa\n")


MINE = ("OPENBLAS_NUM_THREADS", "ARROW_DEFAULT_MEMORY_POOL")


def test_command_asks_for_one_blas_thread_and_malloc_unless_the_user_chose(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in MINE}
    assert _settings(tmp_path, env) == "('1', 'system')"
    chosen = {**env, "OPENBLAS_NUM_THREADS": "3", "ARROW_DEFAULT_MEMORY_POOL": "jemalloc"}
    if _settings(tmp_path, {**env, "ARROW_DEFAULT_MEMORY_POOL": "jemalloc"}).endswith("'system')"):
        chosen["ARROW_DEFAULT_MEMORY_POOL"] = "mimalloc"  # a pyarrow built without jemalloc
    assert _settings(tmp_path, chosen) == f"('3', '{chosen['ARROW_DEFAULT_MEMORY_POOL']}')"


def test_library_leaves_blas_and_arrow_alone():
    code = ("import os, ulnorm_eval, pyarrow as pa\n"
            "print(os.environ.get('OPENBLAS_NUM_THREADS'), os.environ.get('ARROW_DEFAULT_MEMORY_POOL'))\n"
            "print(pa.default_memory_pool().backend_name)")
    env = {k: v for k, v in os.environ.items() if k not in MINE}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    first, backend = out.stdout.strip().splitlines()
    assert first == "None None"
    assert backend != "system"  # the wheel's own allocator (mimalloc or jemalloc), as without ulnorm_eval


def _arena_setting(tmp_path, env):
    return _after_command(tmp_path, env, "os.environ.get('MALLOC_ARENA_MAX')")


def test_command_asks_for_one_malloc_arena_unless_the_user_chose(tmp_path, monkeypatch):
    """glibc's malloc arenas: on Linux one arena unless the user chose; elsewhere nothing is set or called."""
    linux = sys.platform.startswith("linux")
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    assert _arena_setting(tmp_path, env) == ("'1'" if linux else "None")
    assert _arena_setting(tmp_path, {**env, "MALLOC_ARENA_MAX": "4"}) == "'4'"
    # and in the process itself, by mallopt (glibc reads the variable only as a process starts)
    import ctypes
    from ulnorm_eval.cli import guard

    calls = []

    class FakeLibc:
        def mallopt(self, option, value):
            calls.append((option, value))

    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: FakeLibc())
    guard.lean_process()
    if not linux:
        assert calls == [] and "MALLOC_ARENA_MAX" not in os.environ
        return
    assert calls == [(-8, 1)] and os.environ["MALLOC_ARENA_MAX"] == "1"
    calls.clear()
    guard.lean_process()  # once set, left alone
    assert calls == []


def test_library_leaves_malloc_arenas_alone():
    code = "import os, ulnorm_eval, ulnorm_eval.api\nprint(os.environ.get('MALLOC_ARENA_MAX'))"
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.stdout.strip() == "None"
