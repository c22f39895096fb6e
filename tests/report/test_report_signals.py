"""Ctrl-C (SIGINT) or SIGTERM while the report's C extensions load or draw: held back until they
are done (profiler.io.signalmask), then the run ends as on any Ctrl-C (exit 130, one line). Raised
inside Agg's drawing it came out as a ValueError or EBADF (exit 1); inside numpy's or PIL's
initialisation as a SystemError, a crash (SIGSEGV) or an abort while finalizing."""

import os
import signal
import threading
import time

import pytest

from profiler.io import signalmask
from profiler.report import charts, holdings
from profiler.run.profile import run_profile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "samples", "sample-5k.cdx.gz")


def test_a_signal_in_a_held_block_arrives_after_it():
    done = []
    with pytest.raises(KeyboardInterrupt):
        with signalmask.held():
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
            time.sleep(0.05)                 # Python code: the handler would run here
            done.append(1)
    assert done == [1]


def test_a_ctrl_c_while_a_chart_is_drawn_arrives_after_the_chart(tmp_path, monkeypatch):
    profile = tmp_path / "p.cdxj"
    run_profile([SAMPLE], str(profile))
    real, drawn = charts.render, []

    def render(chart, with_png=False):
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        time.sleep(0.05)
        out = real(chart, with_png=with_png)
        drawn.append(chart.id)
        return out
    monkeypatch.setattr(charts, "render", render)
    out = tmp_path / "r.html"
    with pytest.raises(KeyboardInterrupt):
        holdings.write_report(str(profile), str(out), png_dir=str(tmp_path / "png"))
    assert len(drawn) == 1                  # the first chart drawn whole, then the interrupt
    assert not out.exists() and not os.listdir(tmp_path / "png")
