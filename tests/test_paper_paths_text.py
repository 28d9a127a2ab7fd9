"""dd_text's paper path: TDD's corpora (IMDB, SST-5, TREC-6/50) read from local copies in their distributed formats
under ``data_root`` (``scale: paper`` reads TREC-6); the ``cpu`` default stays on the shipped fortunes."""

import pytest
import torch

from compendium.core import text
from compendium.core.data import DataError
from compendium.distill.unrolled import text_experiment
from compendium.pipeline import paper_hparams
from compendium.pipeline.schemas import dd_text
from conftest import params_at, params_file, write_fake_corpora


def test_paper_scale_reads_trec6_and_cpu_the_fortunes():
    v, cpu = params_at("paper", "dd_text"), params_at("cpu", "dd_text")
    assert (v["corpus"], cpu["corpus"], cpu["data_root"]) == ("trec6", "fortunes", "") and v["data_root"]
    assert dd_text.check(v) == [] and dd_text.check(cpu) == []
    assert dd_text.check(dict(v, data_root=""))[0].startswith("data_root: corpus 'trec6'")
    rows = paper_hparams.compare(params_file()).set_index(["stage", "key"])
    assert rows.loc[("dd_text", "corpus"), "status"] == "matches"


def test_the_corpora_in_their_distributed_formats(tmp_path):
    root = write_fake_corpora(tmp_path)
    tr, te = text.load_text_corpus("imdb", root)
    assert len(tr) == len(te) == 6 and tr.labels.tolist() == [0, 0, 0, 1, 1, 1] and "<br />" not in tr.texts[0]
    tr, te = text.load_text_corpus("trec6", root)
    assert tr.classes == text.TREC_COARSE and te.labels.tolist() == [1, 3, 4, 5, 2, 0]
    tr50, _ = text.load_text_corpus("trec50", root)
    assert len(tr50.classes) == 6 and tr50.classes[0] == "ABBR:exp" and tr50.texts[0] == "How did it happen ?"
    tr, te = text.load_text_corpus("sst5", root)
    assert tr.texts == ("It works .", "Dreadful film .") and tr.labels.tolist() == [3, 0] and len(tr.classes) == 5
    capped, _ = text.load_text_corpus("imdb", root, max_per_class=2)
    assert capped.labels.tolist() == [0, 0, 1, 1]
    with pytest.raises(DataError, match="data_root"):
        text.load_text_corpus("imdb", "")
    with pytest.raises(DataError, match="TREC_10.label"):
        text.load_trec(tmp_path / "aclImdb")


def test_the_stage_embeds_a_local_corpus(tmp_path):
    corp = text_experiment.load_corpus(
        [],
        max_tokens=48,
        test_fraction=0.3,
        entry_std=0.3,
        length=8,
        corpus="trec6",
        data_root=str(write_fake_corpora(tmp_path)),
    )
    assert (
        corp.classes == text.TREC_COARSE
        and corp.x_tr.shape[:2] == (12, 8)
        and torch.equal(corp.y_te, torch.tensor([1, 3, 4, 5, 2, 0]))
    )
    table = text_experiment.corpus_table(corp, max_tokens=48, length=8)
    assert table["train"].tolist() == [2] * 6 and "quotes in file" not in table
