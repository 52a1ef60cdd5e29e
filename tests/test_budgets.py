"""Every figure declares the wall time one run may take, and the declared plan of a whole session
fits the ten minutes of measuring a 2-core machine gets (issue 36). Declared numbers, not timings:
the run-it-yourself page shows each figure's measured runs beside its budget."""

from benchkit.layout import figure_scripts
from benchkit.runner import DEFAULT_RUNS, Figure, figure_settings
from benchsite import BENCH_DIR

SESSION_BUDGET_S = 600  # ten minutes of measuring for a default make bench


def test_every_figure_declares_a_budget_per_run():
    missing = [s.stem for s in figure_scripts(BENCH_DIR) if "budget_s" not in figure_settings(s)]
    assert not missing, f"FIGURE lacks budget_s: {missing}"


def test_the_budgets_of_a_default_session_fit_ten_minutes():
    planned = sum(Figure(s).budget_s for s in figure_scripts(BENCH_DIR)) * DEFAULT_RUNS
    assert 0 < planned <= SESSION_BUDGET_S, f"{planned:.0f} s planned"
