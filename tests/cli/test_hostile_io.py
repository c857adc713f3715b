"""Hostile inputs and outputs at the process boundary: no input is ever overwritten (outputs compared
with inputs and with each other by file identity, standard input's file included), a path string
never opens a network connection, every input route is bounded (line limit, decompression bombs),
and temporary files a SIGKILL left behind are cleaned up (docs/files.md, docs/errors.md).

Subprocesses where the real file descriptors matter (``< run``, ``>> run``) or a process is killed;
how much memory and time the refusals take is measured by benchmarks/limits.py."""
from __future__ import annotations

import gzip
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner

from ulnorm_eval.cli.main import main
from ulnorm_eval.render import files as outfiles

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq2 0 d4 0\n"
RUN_A = "q1 Q0 d1 1 2.0 A\nq1 Q0 d2 2 1.0 A\nq2 Q0 d4 1 2.0 A\nq2 Q0 d3 2 1.0 A\n"
RUN_B = "q1 Q0 d2 1 2.0 B\nq1 Q0 d1 2 1.0 B\nq2 Q0 d3 1 2.0 B\nq2 Q0 d4 2 1.0 B\n"
DOCS = "d1\tthe cat sat on the mat\tthe cat sat\nd2\tstorms flooded the town\tstorms hit the town\n"
SYS = "d1\tthe cat sat\nd2\tstorms hit\n"
# the command as users start it: a `python -c` program calling main() embeds it, and that program's interpreter
# shutdown can abort in Arrow's threads (apache/arrow#34314: exit -6); the command leaves by os._exit after
# flushing (cli/guard._exit_now)
CMD = [sys.executable, "-m", "ulnorm_eval"]


@pytest.fixture
def d(tmp_path):
    for name, text in (("qrels", QRELS), ("a.run", RUN_A), ("b.run", RUN_B), ("docs.tsv", DOCS), ("sys.tsv", SYS)):
        (tmp_path / name).write_text(text)
    return tmp_path


def run_cli(args, cwd, stdin=None, stdout=None, env=None, timeout=60):
    """(exit code, stdout, stderr) of ulnorm-eval in a subprocess; ``stdin``/``stdout`` file paths."""
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    fout = open(stdout, "ab") if stdout else subprocess.PIPE
    try:
        p = subprocess.run(CMD + [str(a) for a in args], cwd=cwd, stdin=fin, stdout=fout, stderr=subprocess.PIPE,
                           env=env, timeout=timeout)
    finally:
        for f in (fin, fout):
            if hasattr(f, "close"):
                f.close()
    out = p.stdout.decode() if p.stdout is not None else ""
    return p.returncode, out, p.stderr.decode()


def refused(res, expected: str | None = None, contains: str | None = None):
    code, out, err = res
    assert code == 2 and out == "", res
    assert err.count("\n") == 1 and err.startswith("ulnorm-eval: ") and "Traceback" not in err, err
    if expected is not None:
        assert err == f"ulnorm-eval: {expected}\n"
    if contains is not None:
        assert contains in err, err
    return err


def snapshot(d):
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


# --------------------------------------------------------------------------- outputs vs inputs

# every command, with its inputs (R: the run to be clobbered) and its output options
COMMANDS = {
    "eval": (["qrels", "R"], ["-o", "--summary-md"]),
    "compare": (["compare", "qrels", "b.run", "R"], ["-o", "--plot"]),
    "queries": (["queries", "qrels", "R"], ["-o"]),
    "nrg": (["nrg", "qrels", "R"], ["-o"]),
    "stability": (["stability", "-k", "2", "qrels", "R", "b.run"], ["-o", "--plot"]),
}


def argv(command: str, extra: list, r: str) -> list:
    """The command line of ``command`` with options ``extra`` and ``r`` in place of R."""
    args = [r if a == "R" else a for a in COMMANDS[command][0]]
    return args[:1] + extra + args[1:] if command != "eval" else extra + args


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_input_behind_stdin_is_never_an_output(d, command):
    """``-o r qrels - < r``: the file behind standard input is an input, found by its identity."""
    args, outs = COMMANDS[command]
    before = snapshot(d)
    for opt in outs:
        ext = ".png" if opt == "--plot" else ""
        target = d / f"a.run{ext}"
        if ext:
            os.link(d / "a.run", target)  # the plot's extension on a hard link to the run
        res = run_cli(argv(command, [opt, target.name], "-"), d, stdin=d / "a.run")
        refused(res, contains="is the file behind standard input (-), an input")
        if ext:
            target.unlink()
    assert snapshot(d) == before


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_stdout_redirected_onto_an_input_is_refused(d, command):
    """``ulnorm-eval qrels run >> run`` (and ``-o /dev/stdout``) would append results to the run."""
    args, _ = COMMANDS[command]
    before = snapshot(d)
    for extra in ([], ["-o", "/dev/stdout"]):
        code, out, err = run_cli(argv(command, extra, "a.run"), d, stdout=d / "a.run")
        assert code == 2 and err.count("\n") == 1 and "would destroy it" in err, (extra, err)
    assert snapshot(d) == before


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_file_urls_are_refused_before_anything_is_written(d, command):
    """``-o $PWD/r qrels file://$PWD/r`` replaced the run with the results (fsspec opened the URL)."""
    args, outs = COMMANDS[command]
    url = (d / "a.run").as_uri()
    before = snapshot(d)
    for opt in outs:
        res = run_cli(argv(command, [opt, str(d / "a.run")], url), d)
        refused(res, f"{url}: is a file:// URL; give the local path ({d / 'a.run'}) instead")
    assert snapshot(d) == before


def test_every_url_input_option_is_refused(d):
    url = (d / "a.run").as_uri()
    for args in (["--baseline", url, "-o", "a.run", "qrels", "b.run"],
                 ["nrg", "--prior", url, "-o", "a.run", "qrels", "b.run"],
                 ["summ", "-o", "docs.tsv", (d / "docs.tsv").as_uri(), "sys.tsv"],
                 ["summ", "-o", "out.tsv", "docs.tsv", (d / "sys.tsv").as_uri()],
                 [url.replace("a.run", "qrels"), "b.run"]):
        refused(run_cli(args, d), contains="is a file:// URL; give the local path")
    assert not (d / "out.tsv").exists()


def test_two_outputs_naming_one_file_are_refused(d):
    """``-o out.json --summary-md out.json`` appended Markdown after the JSON."""
    (d / "other").mkdir()
    (d / "x.png").write_text("old")
    cases = [
        (["-o", "out.json", "--summary-md", "out.json", "qrels", "a.run"], "out.json: given to both -o and --summary-md"),
        (["-o", "out.json", "--summary-md", "./out.json", "qrels", "a.run"], "out.json: given to both -o and --summary-md"),
        (["compare", "-o", "x.png", "--plot", "other/../x.png", "qrels", "a.run", "b.run"],
         "x.png: given to both -o and --plot"),
        (["stability", "-k", "2", "-o", "x.png", "--plot", "x.png", "qrels", "a.run", "b.run"],
         "x.png: given to both -o and --plot"),
        (["summ", "-o", "x.png", "--plot", "x.png", "docs.tsv", "sys.tsv"], "x.png: given to both -o and --plot"),
    ]
    for args, msg in cases:
        refused(run_cli(args, d), msg)
    assert not (d / "out.json").exists() and (d / "x.png").read_text() == "old"


def test_outputs_in_one_place_through_a_linked_directory(d):
    """``-o new.json --summary-md link/new.json`` (link -> .): the file does not exist yet, so it has no
    identity; its place (resolved directory + name) is compared instead."""
    os.symlink(d, d / "here")
    refused(run_cli(["-o", "new.json", "--summary-md", "here/new.json", "qrels", "a.run"], d),
            "new.json: given to both -o and --summary-md")
    assert not (d / "new.json").exists()


def test_a_device_behind_stdin_is_not_an_input_file(d):
    """``< /dev/null`` with ``-o /dev/null``: a device is not destroyed by writing it (only files are)."""
    code, out, err = run_cli(["-o", "/dev/null", "qrels", "-"], d, stdin="/dev/null")
    assert code == 2 and err == "ulnorm-eval: -:1: empty file: no ranked documents\n", err


def test_summary_md_is_never_an_input(d):
    os.link(d / "a.run", d / "hard")
    for args in (["--summary-md", "hard", "qrels", "a.run"], ["--summary-md", "qrels", "qrels", "a.run"],
                 ["--summary-md", "b.run", "--baseline", "b.run", "qrels", "a.run"]):
        refused(run_cli(args, d), contains="is an input")
    assert (d / "a.run").read_text() == RUN_A and (d / "b.run").read_text() == RUN_B


def test_summ_outputs_are_never_its_inputs(d):
    before = snapshot(d)
    os.symlink("sys.tsv", d / "link.tsv")
    for args in (["summ", "-o", "link.tsv", "docs.tsv", "sys.tsv"], ["summ", "-o", "docs.tsv", "docs.tsv", "sys.tsv"],
                 ["summ", "--plot", "sys.tsv", "docs.tsv", "sys.tsv"]):
        refused(run_cli(args, d), contains="is an input")
    refused(run_cli(["summ", "-o", "sys.tsv", "docs.tsv", "-"], d, stdin=d / "sys.tsv"),
            contains="is the file behind standard input")
    (d / "link.tsv").unlink()
    assert snapshot(d) == before


def test_dev_stdout_as_output_is_written_directly(d):
    """``-o /dev/stdout`` writes standard output (a link out of /dev, but never renamed over)."""
    code, out, err = run_cli(["-f", "tsv", "-m", "P@1", "--norm", "none", "-o", "/dev/stdout", "qrels", "a.run"], d)
    assert (code, err) == (0, "") and out == "run\tquery\tP@1\na.run\tq1\t1.0\na.run\tq2\t0.0\na.run\tall\t0.5\n"


# --------------------------------------------------------------------------- no network

class Listener:
    """A TCP listener on loopback that records whether anyone connected (and says nothing)."""

    def __init__(self, reply: bytes | None = None):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.reply = reply
        self._stop = False
        self._held = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            if self.reply is not None:
                try:
                    conn.sendall(self.reply)
                except OSError:
                    pass
            self._held.append(conn)

    def settled(self) -> int:
        """Stop serving, then take every connection still waiting in the backlog (a connect completes
        in the kernel before anyone accepts it): the number of connections ever made, without sleeping."""
        self._stop = True
        self.thread.join(2)
        self.sock.setblocking(False)
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return self.connections
            self.connections += 1
            self._held.append(conn)

    def close(self):
        self._stop = True
        self.thread.join(2)
        for c in self._held:
            c.close()
        self.sock.close()


@pytest.fixture
def listener():
    srv = Listener(reply=b"220 hello\r\n")
    yield srv
    srv.close()


def test_no_path_string_opens_a_connection(d, listener, monkeypatch):
    """``qrels ftp://127.0.0.1:PORT/run`` connected out and sent USER anonymous (fsspec)."""
    monkeypatch.chdir(d)  # 'qrels' names the file (else it reads as a mistyped command, refused before any URL)
    port = listener.port
    urls = [f"ftp://127.0.0.1:{port}/run", f"http://127.0.0.1:{port}/run", f"https://127.0.0.1:{port}/run",
            f"s3://127.0.0.1:{port}/b/run", "github://o:r@ref/p", f"HTTP://127.0.0.1:{port}/run"]
    for url in urls:
        for args in (["qrels", url], ["-j", "2", "qrels", url, "b.run"], ["--baseline", url, "qrels", "a.run"],
                     ["compare", "qrels", "a.run", url], ["queries", "qrels", url], ["nrg", "--prior", url, "qrels", "a.run"],
                     ["stability", "-k", "2", "qrels", "a.run", url], [url, "a.run"], ["summ", "docs.tsv", url]):
            res = CliRunner().invoke(main, args)
            assert res.exit_code == 2 and res.stdout == "", (args, res.output)
            assert res.stderr == (f"ulnorm-eval: {url}: is a URL: ulnorm-eval reads local files and standard input "
                                  "(-) only, and never opens a network connection; download it first "
                                  "(curl -o FILE URL)\n"), args
    from ulnorm_eval import api
    from ulnorm_eval.inputs.errors import InputError
    from ulnorm_eval.pipeline import evaluate as pipeline

    for fn in (pipeline.load_run, pipeline.load_qrels, lambda u: api.evaluate(str(d / "qrels"), [u]),
               lambda u: api.evaluate(u, [str(d / "a.run")]), lambda u: api.compare(str(d / "qrels"), [u])):
        with pytest.raises(InputError, match="is a URL"):
            fn(urls[0])
    assert listener.settled() == 0  # every call above returned: a connection would be made by now


def test_a_local_path_that_merely_contains_a_scheme_is_a_file(d):
    """Only a path that starts with ``SCHEME://`` is a URL: ``./x://y`` is the file ``x:/y``."""
    (d / "x:").mkdir()
    (d / "x:" / "y").write_text(RUN_A)
    res = CliRunner().invoke(main, ["-f", "tsv", "-m", "P@1", "--norm", "none", str(d / "qrels"), str(d / "x:") + "//y"])
    assert res.exit_code == 0 and res.stdout.endswith("all\t0.5\n"), res.output


# --------------------------------------------------------------------------- limits

def _bounded(args, cwd, timeout=120):
    """Run ulnorm-eval in its own session; return (code, stderr).  ``timeout`` only detects a hang (the
    command and anything under it are killed); how much memory and time a refusal takes is measured by
    benchmarks/limits.py, not asserted here."""
    with subprocess.Popen(CMD + [str(a) for a in args], cwd=cwd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True) as p:
        try:
            _, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            raise
    return p.returncode, err.decode()


def test_a_qrels_without_newline_fails_in_bounded_memory(d):
    """Read whole, a qrels of 2 GB without a newline held 3.8 GB before the line-limit error; the limit
    is now checked block by block: here an endless FIFO writer is cut off after a few blocks."""
    fifo = d / "endless"
    os.mkfifo(fifo)
    written = [0]

    def writer():
        block = b"x" * (1 << 20)
        try:
            with open(fifo, "wb") as fh:
                while written[0] < (4 << 30):
                    fh.write(block)
                    written[0] += len(block)
        except OSError:  # the reader refused and closed
            pass

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    code, err = _bounded(["endless", "a.run"], d)
    t.join(10)
    assert code == 2 and err == (f"ulnorm-eval: endless:1: line longer than {1 << 20} bytes (ULNORM_EVAL_MAX_LINE)\n")
    assert written[0] <= 64 << 20, written[0]  # refused within a few 8 MiB blocks, never held whole


@pytest.fixture
def bomb(d):
    """200 MB of text without a newline in 200 kB of gzip."""
    data = gzip.compress(b"1" * (200 << 20), compresslevel=9)
    assert len(data) < 400_000
    (d / "bomb.gz").write_bytes(data)
    return "bomb.gz"


@pytest.mark.parametrize("route", ["qrels", "run", "run -j 2", "baseline", "prior", "compare", "queries",
                                   "stability", "summ docs", "summ system"])
def test_gzip_bombs_are_refused_on_every_route(d, bomb, route):
    args = {"qrels": [bomb, "a.run"], "run": ["qrels", bomb], "run -j 2": ["-j", "2", "qrels", "a.run", bomb],
            "baseline": ["--baseline", bomb, "qrels", "a.run"], "prior": ["nrg", "--prior", bomb, "qrels", "a.run"],
            "compare": ["compare", "qrels", "a.run", bomb], "queries": ["queries", "qrels", bomb],
            "stability": ["stability", "-k", "2", "qrels", "a.run", bomb],
            "summ docs": ["summ", bomb, "sys.tsv"], "summ system": ["summ", "docs.tsv", bomb]}[route]
    code, err = _bounded(args, d)
    assert code == 2 and err.count("\n") == 1 and f"{bomb}:1: line longer than" in err, err


@pytest.mark.parametrize("compress", ["gzip", "bzip2"])
def test_bombs_of_blank_lines_are_refused_by_their_ratio(d, compress):
    """512 MB of newlines in 0.5 MB of gzip (400 bytes of bzip2) passed the line limit: as QRELS it
    held 4.8 GB for over ten minutes.  Refused once past 64 MiB at more than 100 times expansion."""
    import bz2

    data = b"\n" * (512 << 20)
    name = f"nl.{'gz' if compress == 'gzip' else 'bz2'}"
    (d / name).write_bytes(gzip.compress(data, 9) if compress == "gzip" else bz2.compress(data))
    del data
    for args in ([name, "a.run"], ["qrels", name], ["--baseline", name, "qrels", "a.run"], ["summ", name, "sys.tsv"]):
        code, err = _bounded(args, d)
        assert code == 2 and err.startswith(f"ulnorm-eval: {name}: {compress} data expanding more than 100 times ("), err
        assert err.endswith("; ULNORM_EVAL_MAX_RATIO): a decompression bomb?\n") and err.count("\n") == 1, err


def test_a_file_of_blank_lines_is_read_in_linear_time(d):
    """Each blank line recounted the whole input's newlines (quadratic): 3 million took minutes (the
    bound is the hang guard; benchmarks/limits.py times it)."""
    (d / "blank").write_bytes(b"\n" * 3_000_000 + b"   \n\t\n")
    code, err = _bounded(["blank", "a.run"], d)
    assert code == 2 and err == "ulnorm-eval: blank:1: empty file: no judgements\n", err


# --------------------------------------------------------------------------- temporary files

KILL_SCRIPT = """
import os, signal, sys
from ulnorm_eval.render.files import atomic_path
with atomic_path(sys.argv[1]) as tmp:
    with open(tmp, "w") as fh:
        fh.write("partial")
    os.kill(os.getpid(), signal.SIGKILL)
"""


def _this_host(d) -> str:
    """HOST of a temporary file's name ``.ulnorm-HOST-PID-XXXXXXXX`` (docs/files.md) on this machine, read
    off the name atomic_path gives a write of this process."""
    with outfiles.atomic_path(str(d / "probe")) as tmp:
        open(tmp, "w").close()
        prefix, host, pid, _ = os.path.basename(tmp).split("-")
    os.unlink(d / "probe")
    assert prefix == ".ulnorm" and int(pid) == os.getpid() and re.fullmatch("[0-9a-f]{8}", host), tmp
    return host


def _temps(d):
    return sorted(p.name for p in d.iterdir() if p.name.startswith(".ulnorm-"))


def _age(path, seconds):
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_sigkill_leftover_is_removed_by_the_next_write(d):
    """A SIGKILL during -o leaves its temporary file (it cannot be caught): named with the host and
    pid, it is removed by the next write to that directory once stale, and nothing else is."""
    p = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(d / "out.txt")])
    assert p.wait() == -9
    left, host = _temps(d), _this_host(d)
    assert len(left) == 1 and left[0].startswith(f".ulnorm-{host}-{p.pid}-")
    assert (d / left[0]).read_text() == "partial" and not (d / "out.txt").exists()
    # recent (as a write still in progress on another machine would be): kept
    assert run_cli(["-o", "out.txt", "qrels", "a.run"], d)[0] == 0
    assert _temps(d) == left
    # stale, but the other kinds of file must survive
    _age(d / left[0], outfiles.STALE_SECONDS + 60)
    me, dead = os.getpid(), _dead_pid()
    keep = {
        f".ulnorm-{host}-{me}-abcdefgh": "a live process's write",
        f".ulnorm-00000000-{dead}-abcdefgh": "another host's",
        ".ulnorm-k2j4h5g6": "an old-style name",
        f".ulnorm-{host}-{dead}-abcdefgh.txt.bak": "not exactly our pattern",
        "notes.txt": "not ours at all",
    }
    for name in keep:
        (d / name).write_text("x")
        _age(d / name, outfiles.STALE_SECONDS + 60)
    os.symlink(d / "qrels", d / f".ulnorm-{host}-{dead}-linklink")
    assert run_cli(["-o", "out.txt", "qrels", "a.run"], d)[0] == 0
    assert left[0] not in _temps(d)
    for name in keep:
        assert (d / name).exists(), keep[name]
    assert (d / f".ulnorm-{host}-{dead}-linklink").is_symlink()
    assert (d / "qrels").read_text() == QRELS


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_remove_stale_unit(tmp_path):
    host = _this_host(tmp_path)
    dead = _dead_pid()
    stale = tmp_path / f".ulnorm-{host}-{dead}-a1b2c3d4.png"
    recent = tmp_path / f".ulnorm-{host}-{dead}-zzzzzzzz"
    for p in (stale, recent):
        p.write_text("x")
    _age(stale, outfiles.STALE_SECONDS + 1)
    _age(recent, outfiles.STALE_SECONDS - 30)
    assert outfiles.remove_stale(str(tmp_path)) == [stale.name]
    assert recent.exists() and not stale.exists()
    assert outfiles.remove_stale(str(tmp_path / "missing")) == []


# --------------------------------------------------------------------------- --scheduler

@pytest.mark.parametrize("reply, reason", [
    (None, "no Dask scheduler answered at {addr} within 1 s (--scheduler-timeout): is that a Dask scheduler's address?"),
    (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 4,
     "cannot connect to a Dask scheduler at {addr}: what answered there does not speak Dask's protocol "
     "(is it a Dask scheduler's address?)"),
])
def test_scheduler_that_is_not_dask_fails_in_bounded_time(d, reply, reason):
    """A silent listener held --scheduler for minutes; an HTTP server was read as a frame of exabytes
    ('out of memory') and a Client.__del__ traceback followed.  Now: one line naming the address,
    exit 2, within the timeout plus start-up."""
    import distributed  # noqa: F401 - the test extra installs dask[distributed]

    srv = Listener(reply=reply)
    try:
        addr = f"tcp://127.0.0.1:{srv.port}"
        for cmd in ([], ["compare"], ["queries"], ["nrg", "--leave-one-out"]):
            # the timeout only detects a hang; benchmarks/limits.py measures how soon it gives up
            res = run_cli(cmd + ["--scheduler", addr, "--scheduler-timeout", "1", "qrels", "a.run", "b.run"], d,
                          timeout=120)
            refused(res, reason.format(addr=addr))
        assert srv.connections >= 1  # it was the listener that was asked
    finally:
        srv.close()


def test_scheduler_timeout_must_be_positive(d):
    for bad in ("0", "-1", "nan"):
        res = CliRunner().invoke(main, ["--scheduler-timeout", bad, str(d / "qrels"), str(d / "a.run")])
        assert res.exit_code == 2 and "--scheduler-timeout" in res.stderr and res.stderr.count("\n") == 1
