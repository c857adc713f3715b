"""ulnorm_eval.malloc.set_malloc: glibc's mallopt for the command's processes (cli/guard's one arena,
pipeline/parallel's steady worker heap), never when the user chose, off Linux, or without mallopt."""
from __future__ import annotations

import ctypes
import sys

import pytest

from ulnorm_eval import malloc

ARENA = ((malloc.M_ARENA_MAX, 1),)
HEAP = ((malloc.M_MMAP_THRESHOLD, 32 << 20), (malloc.M_TRIM_THRESHOLD, 64 << 20))


def test_glibc_constants():
    # malloc.h: M_TRIM_THRESHOLD -1, M_MMAP_THRESHOLD -3, M_ARENA_MAX -8
    assert (malloc.M_TRIM_THRESHOLD, malloc.M_MMAP_THRESHOLD, malloc.M_ARENA_MAX) == (-1, -3, -8)


def test_each_option_in_order(libc):
    assert malloc.set_malloc(HEAP, ("MALLOC_TRIM_THRESHOLD_",), "glibc.malloc") is True
    assert libc == [(-3, 32 << 20), (-1, 64 << 20)]


@pytest.mark.parametrize("name,value", [("MALLOC_ARENA_MAX", "4"), ("MALLOC_ARENA_MAX", ""),
                                        ("GLIBC_TUNABLES", "glibc.malloc.arena_max=2"),
                                        ("GLIBC_TUNABLES", "glibc.rtld.nns=2:glibc.malloc.arena_max=8")])
def test_the_users_variable_or_tunable_is_kept(libc, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    assert malloc.set_malloc(ARENA, ("MALLOC_ARENA_MAX",), "glibc.malloc.arena_max") is False
    assert libc == []


def test_another_tunable_does_not_count(libc, monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=4096")
    assert malloc.set_malloc(ARENA, ("MALLOC_ARENA_MAX",), "glibc.malloc.arena_max") is True
    assert libc == [(-8, 1)]
    libc.clear()  # but any of malloc's, when the prefix asks for all of them
    assert malloc.set_malloc(HEAP, ("MALLOC_TRIM_THRESHOLD_",), "glibc.malloc") is False
    assert libc == []


@pytest.mark.parametrize("platform", ["darwin", "win32", "freebsd14"])
def test_nothing_off_linux(libc, monkeypatch, platform):
    monkeypatch.setattr(sys, "platform", platform)
    assert malloc.set_malloc(ARENA, ("MALLOC_ARENA_MAX",), "glibc.malloc.arena_max") is False
    assert libc == []


def test_no_mallopt_no_error(monkeypatch, libc):
    class Musl:  # a C library without mallopt
        pass

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Musl())
    assert malloc.set_malloc(ARENA, ("MALLOC_ARENA_MAX",), "glibc.malloc.arena_max") is False

    def no_library(name):
        raise OSError("no C library")

    monkeypatch.setattr(ctypes, "CDLL", no_library)
    assert malloc.set_malloc(HEAP, ("MALLOC_TRIM_THRESHOLD_",), "glibc.malloc") is False


def test_real_c_library():
    """On this machine's C library, in a child process (the settings stay in it): done exactly where the
    library has mallopt, on Linux."""
    import subprocess

    code = ("import ctypes, sys\nfrom ulnorm_eval import malloc\n"
            "have = sys.platform.startswith('linux') and hasattr(ctypes.CDLL(None), 'mallopt')\n"
            "print(have, malloc.set_malloc(((malloc.M_ARENA_MAX, 1), (malloc.M_MMAP_THRESHOLD, 32 << 20)), (), "
            "'glibc.malloc'))\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    have, done = out.stdout.split()
    assert done == have
