"""compendium.core.progress: progress lines to the runner's file (whole lines across processes) or printed."""

import io
import subprocess
import sys
import time

from compendium.core import progress


def test_without_a_runner_a_line_is_printed(monkeypatch, capsys):
    monkeypatch.delenv(progress.PROGRESS_ENV, raising=False)
    progress.say("[x] epoch 1/3")
    assert capsys.readouterr().out == "[x] epoch 1/3\n"


def test_lines_of_several_processes_arrive_whole(tmp_path, monkeypatch):
    f = tmp_path / "progress.log"
    monkeypatch.setenv(progress.PROGRESS_ENV, str(f))
    code = (
        "import sys; from compendium.core.progress import say\n"
        "for i in range(300): say(f'[p{sys.argv[1]}] line {i} ' + 'x' * 200)"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(k)]) for k in range(3)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    lines = f.read_text().splitlines()
    assert len(lines) == 900
    assert all(line.startswith("[p") and line.endswith("x" * 200) and len(line.split()) == 4 for line in lines)
    progress.say("two\nlines")  # one line, never two
    assert f.read_text().splitlines()[-1] == "two | lines"


def test_rate_gives_throughput_and_time_left():
    r = progress.Rate(total=10)
    r.t0 -= 20.0  # 20 s for the first 4 units
    text = r.update(4, items=100)
    assert "20 img/s" in text and "ETA 0:30" in text
    assert "ETA" not in r.update(10)  # done
    resumed = progress.Rate(total=10, start=6)
    resumed.t0 -= 10.0  # 2 units in 10 s after resuming at 6
    assert "ETA 0:10" in resumed.update(8)
    assert progress._clock(3725) == "1:02:05"


def test_the_follower_streams_the_file_while_it_grows_and_flushes_the_rest(tmp_path):
    f, out = tmp_path / "p.log", io.StringIO()
    f.write_text("")
    with progress.Follower(f, "  ", out=out, poll=0.01):
        with open(f, "a") as w:
            w.write("first\n")
        deadline = time.monotonic() + 5
        while "first" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert out.getvalue() == "  first\n"  # streamed before the end
        with open(f, "a") as w:
            w.write("second\nunfinished")
    assert out.getvalue() == "  first\n  second\n  unfinished\n"
