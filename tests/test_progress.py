import io

from compendium import progress


def test_epoch_lines_are_plain_and_complete():
    s = io.StringIO()
    log = progress.EpochLogger("byol", 10, stream=s)
    line = log.log(3, loss=0.123456, acc=0.9, step=7)
    assert line.startswith("[byol] epoch  3/10  loss 0.1235  acc 0.9  step 7  (")
    assert s.getvalue() == line + "\n"


def test_no_bar_under_the_pipeline(monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    it = range(3)
    assert progress.bar(it) is it
    assert [e for e, _ in progress.epochs(2, "x")] == [1, 2]
