"""Qrels from ir_datasets (the 'irds' extra): ``ulnorm-eval irds:DATASET_ID RUN`` and the API, on a small
dataset registered through ir_datasets' own API from the shared qrels; nothing is downloaded."""
from __future__ import annotations

import pytest

from conftest import invoke

import ir_datasets  # noqa: E402 - the test extra installs it


def register(name, dataset):
    if name not in ir_datasets.registry:
        ir_datasets.registry.register(name, dataset)
    return f"irds:{name}"


@pytest.fixture
def dlhard(shared):
    d = shared / "dlhard-passage"
    ds = ir_datasets.create_dataset(qrels_trec=str(d / "qrels.txt"))  # ir_datasets' local-dataset API
    return register("ulnorm-eval-test/dl-hard", ds), d


def cli(args):
    return invoke(*args)


def test_cli_irds_qrels_equal_the_file(dlhard):
    source, d = dlhard
    run = str(d / "runs" / "bm25_rm3.run.gz")
    args = ["-f", "tsv", "-q", "-m", "nDCG@10", "-m", "AP", "--norm", "e,ul2"]
    a, b = cli(args + [source, run]), cli(args + [str(d / "qrels.txt"), run])
    assert a.exit_code == 0 and b.exit_code == 0, a.output
    assert a.stdout == b.stdout and len(a.stdout.splitlines()) == 52


def test_api_irds_qrels_equal_the_file(dlhard):
    from ulnorm_eval import compare, evaluate

    source, d = dlhard
    runs = [str(d / "runs" / "bm25.run.gz"), str(d / "runs" / "bm25_t5_zs.run.gz")]
    a = evaluate(source, runs, ["nDCG@10"], variants=["UL2"])
    b = evaluate(str(d / "qrels.txt"), runs, ["nDCG@10"], variants=["UL2"])
    assert a.frame.equals(b.frame)
    assert compare(source, runs, ["nDCG@10"]).pairs.equals(compare(str(d / "qrels.txt"), runs, ["nDCG@10"]).pairs)


def test_unknown_dataset_exits_2(dlhard):
    _, d = dlhard
    res = cli(["irds:no-such/dataset", str(d / "runs" / "bm25.run.gz")])
    assert res.exit_code == 2
    assert res.output == "ulnorm-eval: irds:no-such/dataset: ir_datasets has no dataset 'no-such/dataset'\n"


def test_remote_qrels_are_not_downloaded(dlhard, tmp_path):
    """A dataset whose qrels live on a server: refused in one line, exit 2, and no request is made."""
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import Cache, RequestsDownload

    _, d = dlhard
    remote = RequestsDownload("http://127.0.0.1:9/qrels.txt")  # would be refused anyway: nothing listens there
    ds = ir_datasets.Dataset(TrecQrels(Cache(remote, tmp_path / "qrels.txt"), {}))
    source = register("ulnorm-eval-test/remote", ds)
    res = cli([source, str(d / "runs" / "bm25.run.gz")])
    assert res.exit_code == 2
    assert res.output == (f"ulnorm-eval: {source}: the qrels of 'ulnorm-eval-test/remote' are not available locally "
                          "and ulnorm-eval does not download; fetch them with: ir_datasets export "
                          "ulnorm-eval-test/remote qrels\n")
    assert not (tmp_path / "qrels.txt").exists()


def test_a_download_with_mirrors_is_refused_in_one_line(dlhard, tmp_path, capfd):
    """ir_datasets' Download (a data-use notice, mirrors, its own log lines) says nothing either."""
    from ir_datasets.formats import TrecQrels
    from ir_datasets.util import Download, RequestsDownload

    _, d = dlhard
    dl = Download([RequestsDownload("http://127.0.0.1:9/a"), RequestsDownload("http://127.0.0.1:9/b")],
                  cache_path=str(tmp_path / "q"), dua="please agree to the terms")
    source = register("ulnorm-eval-test/mirrors", ir_datasets.Dataset(TrecQrels(dl, {})))
    from ulnorm_eval.cli.main import main as entry

    with pytest.raises(SystemExit) as exc:
        entry([source, str(d / "runs" / "bm25.run.gz")])
    assert exc.value.code == 2
    assert capfd.readouterr().err == (f"ulnorm-eval: {source}: the qrels of 'ulnorm-eval-test/mirrors' are not "
                                      "available locally and ulnorm-eval does not download; fetch them with: "
                                      "ir_datasets export ulnorm-eval-test/mirrors qrels\n")


def test_without_ir_datasets(monkeypatch, dlhard):
    import sys

    _, d = dlhard
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # as if not installed
    res = cli(["irds:anything", str(d / "runs" / "bm25.run.gz")])
    assert res.exit_code == 2
    assert res.output == ("ulnorm-eval: irds:anything: irds:DATASET_ID needs ir-datasets, from the 'irds' extra: "
                          "pip install '.[irds]' in a checkout of ulnorm-eval\n")
