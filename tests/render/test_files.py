"""Output files (render/files.py, docs/files.md): an input is never overwritten, a bad -o is refused
before anything is read, errors and signals leave no temporary file and exit 2/130/143, never 1."""
from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from conftest import invoke as cli, wait_for_signal_state

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq2 0 d4 0\n"
RUN_A = "q1 Q0 d1 1 2.0 A\nq1 Q0 d2 2 1.0 A\nq2 Q0 d4 1 2.0 A\nq2 Q0 d3 2 1.0 A\n"
RUN_B = "q1 Q0 d2 1 2.0 B\nq1 Q0 d1 2 1.0 B\nq2 Q0 d3 1 2.0 B\nq2 Q0 d4 2 1.0 B\n"
LETOR = "1 qid:1 1:0.5\n0 qid:1 1:0.1\n"


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (("qrels", QRELS), ("a.run", RUN_A), ("b.run", RUN_B)):
        (tmp_path / name).write_text(text)
        paths[name] = str(tmp_path / name)
    return paths


def digest(d) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir()) if p.is_file()}


def leftovers(d) -> list:
    return sorted(p.name for p in d.iterdir() if p.name.startswith(".ulnorm-"))


def assert_refused(res, message: str):
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1] == f"ulnorm-eval: {message}"


# --------------------------------------------------------------------------- -o naming an input

COMMANDS = {
    "eval": lambda f, o: ["-o", o, f["qrels"], f["a.run"], f["b.run"]],
    "eval-baseline": lambda f, o: ["-o", o, "--baseline", f["b.run"], f["qrels"], f["a.run"]],
    "compare": lambda f, o: ["compare", "-o", o, f["qrels"], f["a.run"], f["b.run"]],
    "queries": lambda f, o: ["queries", "-o", o, f["qrels"], f["a.run"], f["b.run"]],
    "nrg": lambda f, o: ["nrg", "-o", o, "--prior", f["b.run"], f["qrels"], f["a.run"]],
    "stability": lambda f, o: ["stability", "-k", "2", "--restarts", "0", "-o", o, f["qrels"], f["a.run"], f["b.run"]],
    "stability-plot": lambda f, o: ["stability", "-k", "2", "--restarts", "0", "--plot", o, f["qrels"], f["a.run"],
                                    f["b.run"]],
    # --summary-md appends to its file: an input named there would be corrupted, not replaced
    "eval-summary-md": lambda f, o: ["--fail-below", "AP=0.1", "--summary-md", o, f["qrels"], f["a.run"], f["b.run"]],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("victim", ["qrels", "a.run", "b.run"])
def test_output_naming_an_input_is_refused_in_every_command(files, tmp_path, command, victim):
    before = digest(tmp_path)
    res = cli(*COMMANDS[command](files, files[victim]))
    assert_refused(res, f"{files[victim]}: is an input: writing it would destroy it")
    assert digest(tmp_path) == before and leftovers(tmp_path) == []


@pytest.mark.parametrize("how", ["symlink", "hardlink", "dotted"])
def test_output_reaching_an_input_by_another_path_is_refused(files, tmp_path, how):
    alias = tmp_path / "alias"
    if how == "symlink":
        alias.symlink_to(files["a.run"])
    elif how == "hardlink":
        os.link(files["a.run"], alias)
    else:
        alias = tmp_path / "." / ".." / tmp_path.name / "a.run"
    before = digest(tmp_path)
    res = cli("-o", alias, files["qrels"], files["a.run"])
    assert_refused(res, f"{alias}: is an input ({files['a.run']}): writing it would destroy it")
    assert digest(tmp_path) == before


def test_output_naming_the_letor_group_file_is_refused(tmp_path):
    (tmp_path / "train.txt").write_text("1 1:0.5\n0 1:0.1\n")
    (tmp_path / "train.txt.query").write_text("2\n")
    (tmp_path / "scores").write_text("0.1\n0.2\n")
    group = str(tmp_path / "train.txt.query")
    res = cli("-o", group, tmp_path / "train.txt", tmp_path / "scores")
    assert_refused(res, f"{group}: is an input: writing it would destroy it")
    assert (tmp_path / "train.txt.query").read_text() == "2\n"


def test_output_is_checked_before_any_input_is_read(files, tmp_path):
    """The refusal names -o, not the (missing) run a reading pass would have stumbled on first."""
    res = cli("-o", files["qrels"], files["qrels"], tmp_path / "missing.run")
    assert_refused(res, f"{files['qrels']}: is an input: writing it would destroy it")


def test_empty_output_name_is_refused(files):
    res = cli("-o", "", files["qrels"], files["a.run"])
    assert_refused(res, "-o: empty file name")
    assert res.stdout == ""


def test_missing_output_directory_is_refused_before_evaluating(files, tmp_path):
    out = tmp_path / "nope" / "eval.txt"
    res = cli("-o", out, files["qrels"], tmp_path / "missing.run")
    assert_refused(res, f"{out}: directory {tmp_path / 'nope'} does not exist")


def test_read_only_output_directory_is_refused(files, tmp_path):
    out = "/proc/sys/eval.txt"  # not writable even by root
    res = cli("-o", out, files["qrels"], files["a.run"])
    assert_refused(res, f"{out}: directory /proc/sys is not writable")


def test_dev_full_is_a_one_line_error(files):
    res = cli("-o", "/dev/full", files["qrels"], files["a.run"])
    assert_refused(res, "/dev/full: cannot write: no space left on device")


def test_symlink_into_another_directory_is_refused(files, tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "target.txt").write_text("keep")
    link = tmp_path / "link.txt"
    link.symlink_to(other / "target.txt")
    res = cli("-o", link, files["qrels"], files["a.run"])
    assert_refused(res, f"{link}: is a symbolic link into another directory ({other / 'target.txt'}); "
                        "give that path if you mean to replace it")
    assert (other / "target.txt").read_text() == "keep" and link.is_symlink()


def test_dangling_symlink_is_refused(files, tmp_path):
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "gone")
    res = cli("-o", link, files["qrels"], files["a.run"])
    assert_refused(res, f"{link}: is a dangling symbolic link (give the path to write)")
    assert not (tmp_path / "gone").exists()


def test_symlink_loop_as_output_is_refused(files, tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    res = cli("-o", loop, files["qrels"], files["a.run"])
    assert_refused(res, f"{loop}: symbolic link loop")


def test_plot_and_output_may_not_be_the_same_file(files, tmp_path):
    import matplotlib  # noqa: F401 - the test extra installs it
    out = tmp_path / "x.png"
    res = cli("compare", "-o", out, "--plot", out, files["qrels"], files["a.run"], files["b.run"])
    assert_refused(res, f"{out}: given to both -o and --plot")


def test_existing_output_keeps_its_mode(files, tmp_path):
    out = tmp_path / "eval.txt"
    out.write_text("old")
    out.chmod(0o604)
    res = cli("-m", "AP", "--norm", "none", "-o", out, files["qrels"], files["a.run"])
    assert res.exit_code == 0
    assert out.stat().st_mode & 0o777 == 0o604 and out.read_text() == "AP\tall\t0.7500\n"


# --------------------------------------------------------------------------- signals

SIGNAL_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from ulnorm_eval.render import files
    from ulnorm_eval.cli.main import main

    real = open
    class Killer:
        def __init__(self, fh): self.fh = fh
        def __enter__(self): return self
        def __exit__(self, *a): self.fh.close()
        def flush(self): self.fh.flush()
        def fileno(self): return self.fh.fileno()
        def write(self, text):
            self.fh.write(text[: len(text) // 2]); self.fh.flush()
            os.kill(os.getpid(), getattr(signal, sys.argv[1]))
            self.fh.write(text[len(text) // 2:])
    def opener(*a, **k):
        fh = real(*a, **k)
        return Killer(fh) if "w" in (a[1] if len(a) > 1 else k.get("mode", "r")) else fh
    files.open = opener  # files.py writes a command's outputs
    main(sys.argv[2:])
""")


@pytest.mark.parametrize("sig, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_signal_while_writing_cleans_up_and_exits_conventionally(files, tmp_path, sig, code):
    out = tmp_path / "eval.txt"
    out.write_text("previous\n")
    res = subprocess.run([sys.executable, "-c", SIGNAL_SCRIPT, sig, "-o", str(out), files["qrels"], files["a.run"]],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == code, res.stderr
    assert "Traceback" not in res.stderr
    assert out.read_text() == "previous\n" and leftovers(tmp_path) == []


def test_sigterm_while_reading_a_fifo_exits_143(files, tmp_path):
    """A run read from a FIFO nobody writes: the process waits; SIGTERM ends it with 143."""
    import errno
    import time

    fifo = tmp_path / "fifo.run"
    os.mkfifo(fifo)
    # the command as users start it (not a `python -c` program embedding main(), whose interpreter shutdown can
    # abort in Arrow's threads: apache/arrow#34314)
    proc = subprocess.Popen([sys.executable, "-m", "ulnorm_eval", "-o", str(tmp_path / "o.txt"),
                             files["qrels"], str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_signal_state(proc.pid, signal.SIGTERM)  # its handler installed: SIGTERM is handled now
        writer, deadline = None, time.monotonic() + 60
        while writer is None and time.monotonic() < deadline:  # until the process has the FIFO open to read
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as exc:
                assert exc.errno == errno.ENXIO, exc  # no reader yet
                time.sleep(0.01)  # polling the condition, not a guess at how long it takes
        proc.terminate()  # the process is reading a FIFO nobody writes to
        _, err = proc.communicate(timeout=60)
        if writer is not None:
            os.close(writer)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143 and "Traceback" not in err
    assert leftovers(tmp_path) == [] and not (tmp_path / "o.txt").exists()


def test_output_path_through_a_file_or_ending_in_a_slash(files, tmp_path):
    res = cli("-o", files["qrels"] + "/x", files["qrels"], tmp_path / "missing.run")
    assert_refused(res, f"{files['qrels']}/x: a component of the path is a file, not a directory")
    res = cli("-o", str(tmp_path / "new") + "/", files["qrels"], tmp_path / "missing.run")
    assert_refused(res, f"{tmp_path / 'new'}/: names a directory (ends with /), not a file")


@pytest.mark.parametrize("victim", ["docs.tsv", "sysA.tsv"])
@pytest.mark.parametrize("flag", ["-o", "--plot"])
def test_summ_output_naming_an_input_is_refused(tmp_path, victim, flag):
    (tmp_path / "docs.tsv").write_text("d1\tthe cat sat on the mat\tthe cat sat\n")
    (tmp_path / "sysA.tsv").write_text("d1\tthe cat sat\n")
    before = digest(tmp_path)
    extra = ["--correlate"] if flag == "--plot" else []
    res = cli("summ", flag, tmp_path / victim, *extra, tmp_path / "docs.tsv", tmp_path / "sysA.tsv")
    assert_refused(res, f"{tmp_path / victim}: is an input: writing it would destroy it")
    assert digest(tmp_path) == before and leftovers(tmp_path) == []
