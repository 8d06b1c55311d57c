"""solvers.progress.ProgressLine: the one progress line of the Simulator, multibody.motion and
monte_carlo (drawn only on terminals or when asked; never changes a result)."""
import io

import numpy as np
import pytest

from solvers.progress import ProgressLine
from systems.analysis import monte_carlo
from systems.primitives import LinearSystem
from systems.analysis import Simulator


def test_drawn_only_on_terminals_or_when_asked():
    quiet = io.StringIO()
    bar = ProgressLine(10.0, "simulating", stream=quiet, delay=0.0, interval=0.0)
    bar.update(5.0)
    bar.close(10.0)
    assert quiet.getvalue() == "" and not bar.drawn      # StringIO is not a TTY
    loud = io.StringIO()
    bar = ProgressLine(10.0, "simulating", start=0.0, enabled=True, stream=loud, delay=0.0,
                       interval=0.0, note_format="t={:.4g} s")
    bar.update(5.0)
    bar.close(10.0)
    out = loud.getvalue()
    assert out.startswith("\rsimulating [" + "#" * 15 + "-" * 15 + "]  50.0%  t=5 s  wall ")
    assert "100.0%  t=10 s" in out and out.endswith("\n") and out.count("\n") == 1


def test_fraction_is_relative_to_start_and_clipped():
    bar = ProgressLine(3.0, "x", start=1.0, enabled=False)
    assert [bar.fraction(d) for d in (0.0, 1.0, 2.0, 3.0, 4.0)] == [0.0, 0.0, 0.5, 1.0, 1.0]
    assert ProgressLine(1.0, "x", start=1.0, enabled=False).fraction(0.0) == 1.0


def test_a_short_run_prints_its_final_line_only_when_asked():
    auto = io.StringIO()
    auto.isatty = lambda: True                            # a terminal, run shorter than delay
    bar = ProgressLine(4, "frames", stream=auto, delay=60.0)
    for k in range(4):
        bar.update(k + 1, f"{k + 1}/4")
    bar.close()
    assert auto.getvalue() == ""
    asked = io.StringIO()
    bar = ProgressLine(4, "frames", enabled=True, stream=asked, delay=60.0)
    for k in range(4):
        bar.update(k + 1, f"{k + 1}/4")
    bar.close()                                           # the last update's note is kept
    assert "100.0%  4/4  wall" in asked.getvalue() and asked.getvalue().endswith("\n")


def _decay(gen):
    system = LinearSystem(A=[[-1.0]])
    ctx = system.create_default_context()
    ctx.set_continuous_state([gen.uniform(1.0, 2.0)])
    return Simulator(system, ctx, integrator="runge_kutta4", max_step=0.05)


def _fails_on_odd_draws(gen):
    if gen.integers(2):
        raise ValueError("odd")
    return _decay(gen)


def _x(sim):
    return float(sim.get_context().get_continuous_state_vector()[0])


def test_monte_carlo_counts_done_and_failed_samples(capsys):
    quiet = monte_carlo(_fails_on_odd_draws, _x, 0.1, 6, seed=3, progress=False)
    assert capsys.readouterr().err == ""
    loud = monte_carlo(_fails_on_odd_draws, _x, 0.1, 6, seed=3, progress=True)
    err = capsys.readouterr().err
    failed = sum(not r.ok for r in loud)
    assert 0 < failed < 6
    assert f"monte_carlo [{'#' * 30}] 100.0%  6/6 done, {failed} failed" in err
    assert [(r.seed, r.output) for r in loud] == [(r.seed, r.output) for r in quiet]
