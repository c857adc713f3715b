"""The speed-ups of issue 13 change no number: scipy.stats' results reproduced bit for bit, and a
command that never uses pandas does not import it.  The t interval is rebuilt here from the sample
standard deviation (scipy's ttest gives no interval to compare with)."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

from ulnorm_eval.analysis import stats


def _cases():
    rng = np.random.default_rng(7)
    out = []
    for k in range(200):
        n = int(rng.integers(2, 120))
        kind = k % 4
        if kind == 0:
            d = rng.normal(size=(int(rng.integers(1, 40)), n))
        elif kind == 1:
            d = rng.random((int(rng.integers(1, 40)), n)).round(3) - rng.random((1, n)).round(3)
        elif kind == 2:
            d = rng.integers(0, 3, (int(rng.integers(1, 40)), n)) / 7.0  # many ties, constant rows
        else:
            y = rng.random((9, n))
            i, j = np.triu_indices(9, 1)
            d = y[i] - y[j]
        out.append(d)
    return out


def test_pairwise_t_equals_scipy_bit_for_bit():
    import scipy.stats as sps
    for d in _cases():
        res = stats.pairwise_t(d)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # scipy's note on constant rows
            ref = sps.ttest_1samp(d, 0.0, axis=-1)
        zero = np.all(d == 0, axis=-1)
        assert np.array_equal(res.statistic, np.where(zero, 0.0, ref.statistic), equal_nan=True)
        assert np.array_equal(res.p, np.where(zero, 1.0, ref.pvalue), equal_nan=True)
        n = d.shape[-1]
        sd = d.std(axis=-1, ddof=1)
        sd = np.where(sd <= 1e-12 * np.abs(d).max(axis=-1, initial=0.0), 0.0, sd)  # equal differences: sd 0
        half = sps.t.ppf(0.975, n - 1) * sd / np.sqrt(n)
        assert np.array_equal(res.ci_high - res.ci_low, (res.diff + half) - (res.diff - half))


def test_kendall_tau_equals_scipy():
    import scipy.stats as sps
    rng = np.random.default_rng(3)
    for k in range(300):
        n = int(rng.integers(2, 30))
        a = rng.integers(0, 1 + k % 7, n).astype(float) if k % 2 else rng.random(n)
        b = rng.integers(0, 1 + k % 5, n).astype(float) if k % 3 else rng.random(n)
        ref = float(sps.kendalltau(a, b).statistic)
        got = stats.kendall_tau(a, b)
        assert (np.isnan(ref) and np.isnan(got)) or got == round(ref, 12)
    assert stats.kendall_tau([1, 2, 3], [1, 2, 3]) == 1.0
    assert stats.kendall_tau([1, 2, 3], [3, 2, 1]) == -1.0
    # one discordant pair of three: (2 - 1) / 3
    assert stats.kendall_tau([1, 2, 3], [1, 3, 2]) == round(1 / 3, 12)


# The last lines of a program below that embeds the command (python -c): it leaves as the command itself does
# (cli/guard._exit_now), not through the interpreter's shutdown, which can abort in Arrow's threads
# (apache/arrow#34314: exit -6); everything asserted on was printed and is flushed first.
LEAVE = "sys.stdout.flush()\nsys.stderr.flush()\n__import__('os')._exit(0)\n"


def _toy_command(tmp_path, entry: str, argv, watched, then: str = "", flags=(), env=None) -> list[str]:
    """Run the command through ``entry`` ('module:function') in a fresh ``python *flags`` process (with
    ``env``), on toy qrels and a toy run (``argv(q, r)``: its arguments); the lines it printed, the
    last one the sorted names of ``watched`` that were imported, then ``then`` (more code in the same
    process) run."""
    q = tmp_path / "q"
    q.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    r = tmp_path / "r"
    r.write_text("1 Q0 a 1 2.5 t\n1 Q0 x 2 1.5 t\n2 Q0 c 1 3 t\n1 Q0 b 3 1.5 t\n")
    module, function = entry.split(":")
    code = (f"import sys\nfrom {module} import {function}\n"
            f"sys.argv = ['ulnorm-eval', *{argv(str(q), str(r))!r}]\n"
            f"try:\n    {function}()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            f"print(sorted(m for m in {tuple(watched)!r} if m in sys.modules))\n" + then + LEAVE)
    out = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()


@pytest.mark.parametrize("args", [[], ["-q", "--names", "trec", "-m", "all_trec", "--norm", "none"],
                                  ["--ties", "rank", "-m", "AP"]])
def test_eval_does_not_import_pandas_or_scipy_stats(tmp_path, args):
    """Nor the modules of the other subcommands (cli/main.py: LAZY_COMMANDS)."""
    lines = _toy_command(tmp_path, "ulnorm_eval.cli.main:main", lambda q, r: [*args, q, r],
                         ("pandas", "scipy.stats", "ulnorm_eval.cli.compare", "ulnorm_eval.cli.summ",
                          "ulnorm_eval.cli.nrg", "ulnorm_eval.cli.stability"),
                         # pandas stays usable in the same process, pyarrow's conversions included
                         then="import pandas, pyarrow as pa\nassert pa.table({'a': [1]}).to_pandas()['a'][0] == 1\n")
    assert lines[-1] == "[]"


def test_compressed_input_still_read_after_lazy_import(tmp_path):
    """gzip, bz2 and xz are imported when an input starts with their magic bytes: each still reads."""
    import bz2
    import gzip
    import lzma

    q = tmp_path / "q"
    q.write_text("1 0 a 1\n1 0 b 0\n")
    text = b"1 Q0 a 1 2.5 t\n1 Q0 b 2 1.5 t\n"
    outs = []
    for name, pack in (("r", bytes), ("r.gz", gzip.compress), ("r.bz2", bz2.compress), ("r.xz", lzma.compress)):
        path = tmp_path / name
        path.write_bytes(pack(text))
        # the command as users start it (its entry point, run()), not a program embedding it
        out = subprocess.run([sys.executable, "-m", "ulnorm_eval", str(q), str(path), "--norm", "none", "-m", "AP"],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout)
    assert outs[0] == "AP\tall\t1.0000\n" and set(outs) == {outs[0]}
