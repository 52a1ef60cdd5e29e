"""The chart kit (benchsite/views/axes.py): text widths, nice linear and log ticks, tick labels; and that
every SVG chart engine takes them from it instead of keeping its own."""

import ast
import math
import re
from pathlib import Path

import pytest

from benchsite.views import axes, fmt

PACKAGE = Path(axes.__file__).resolve().parents[1]  # benchsite/
ENGINES = ("views/chart.py", "views/roofline.py", "views/history_chart.py", "views/timeline.py")


# --- text width ----------------------------------------------------------------------------

def test_text_width_grows_with_length_and_font_size():
    widths = [axes.text_width("x" * n, 11) for n in range(0, 40)]
    assert widths[0] == 0 and all(a < b for a, b in zip(widths, widths[1:]))
    by_font = [axes.text_width("2026-12-01 21:17", font) for font in (8, 10.5, 11, 12, 13, 20)]
    assert all(a < b for a, b in zip(by_font, by_font[1:]))
    assert axes.text_width("abcd", 11) == axes.text_width(4, 11)  # a text or its length
    assert axes.text_width("abcd", 10) == pytest.approx(4 * axes.GLYPH * 10)


def test_chars_fit_is_the_inverse_of_text_width():
    for width in (10, 57.5, 100, 312):
        for font in (11, 12, 13):
            n = axes.chars_fit(width, font)
            assert axes.text_width(n, font) <= width < axes.text_width(n + 1, font)


# --- linear axes ---------------------------------------------------------------------------

@pytest.mark.parametrize("high", [1e-9, 3e-7, 1e-3, 0.0123, 0.99, 1, 1.1, 2.5, 7, 10, 42, 1234.5])
def test_nice_top_is_a_round_step_above_the_data_in_four_or_five_ticks(high):
    top, step = axes.nice_top(high)
    mantissa = step / 10 ** math.floor(math.log10(step) + 1e-12)
    assert any(mantissa == pytest.approx(m) for m in (1, 2, 2.5, 5))
    assert top >= high * (1 - 1e-9) and top - step < high
    ticks = axes.linear_ticks(top, step)
    assert len(ticks) in (4, 5) and ticks[0] == 0 and ticks[-1] == pytest.approx(top)
    assert all(b - a == pytest.approx(step) for a, b in zip(ticks, ticks[1:]))


def test_a_round_top_is_its_own_top():
    assert axes.nice_top(1.0) == (1.0, 0.25)
    assert axes.nice_top(2e-3) == pytest.approx((2e-3, 5e-4))


def test_one_value_and_zero_span_on_a_linear_axis():
    """Linear axes start at zero, so one value (or many equal ones) is a top like any other; all
    zeros have no top, and the caller says what its empty axis spans instead of a math error."""
    assert axes.nice_top(5e-6) == pytest.approx((6e-6, 2e-6))
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="positive finite top"):
            axes.nice_top(bad)


def test_linear_ticks_do_not_drift():
    top, step = axes.nice_top(0.7)  # 0.8 in steps of 0.2: summing 0.2 four times is not 0.8
    assert axes.linear_ticks(top, step) == [i * step for i in range(5)]


def test_fractions():
    assert axes.fractions(4) == [0.0, 0.25, 0.5, 0.75, 1.0]


# --- log axes ------------------------------------------------------------------------------

def test_decades_round_out_to_whole_powers_of_ten():
    assert axes.decades(3e-5, 4e-2) == (1e-5, 1e-1)
    assert axes.decades(1e-3, 1e3) == (1e-3, 1e3)  # already whole: unchanged


def test_log_ticks_include_both_ends_and_every_decade_between():
    lo, hi = axes.decades(2.2, 3.1e4)
    assert axes.log_ticks(lo, hi) == [1.0, 10.0, 100.0, 1000.0, 1e4, 1e5]
    assert axes.log_ticks(1.5e-6, 4.5e-6, (1.0, 2.0, 5.0)) == [2e-6]  # a narrow range: maybe one
    assert axes.log_ticks(3e-6, 4e-6) == []
    for low, high in ((0.0, 1.0), (-1.0, 1.0), (2.0, 1.0)):
        with pytest.raises(ValueError, match="log axis"):
            axes.log_ticks(low, high)


@pytest.mark.parametrize("low, high", [(3e-6, 3e-6), (1e-3, 1e-3), (7e-9, 7.1e-9), (1e-4, 1.2e-4)])
def test_log_axis_of_one_value_or_a_sliver_still_has_two_ticks_around_it(low, high):
    lo, hi, ticks = axes.log_axis(low, high)
    assert len(ticks) >= 2 and lo <= ticks[0] and ticks[-1] <= hi
    assert lo < low and high < hi


def test_log_axis_over_few_decades_ticks_1_2_5_and_over_many_thins_out():
    _, _, few = axes.log_axis(3e-6, 4e-4)  # two decades: 1-2-5
    assert {round(t / 10 ** math.floor(math.log10(t) + 1e-12)) for t in few} == {1, 2, 5}
    _, _, some = axes.log_axis(1e-7, 1e-2)  # five decades: each decade
    assert len(some) >= 6 and all(b / a == pytest.approx(10) for a, b in zip(some, some[1:]))
    _, _, many = axes.log_axis(1e-9, 10.0)  # ten decades: every other
    assert all(b / a == pytest.approx(100) for a, b in zip(many, many[1:]))
    for low, high in ((3e-6, 4e-4), (1e-7, 1e-2), (1e-9, 10.0)):
        lo, hi, ticks = axes.log_axis(low, high)
        assert lo < low and high < hi and all(lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9) for t in ticks)


# --- tick labels ---------------------------------------------------------------------------

def test_time_ticks():
    assert axes.time_tick(2.5e-3) == "2.5 ms"
    assert axes.time_tick(2e-4) == "200 µs"
    assert axes.time_tick(0.0, unit_of=1e-3) == "0 ms"  # the axis's unit, from its top tick
    assert axes.time_tick(2.5e-4, unit_of=1e-3) == "0.25 ms"
    assert axes.time_tick(0.1 + 0.2, unit_of=1.0) == "0.3 s"  # no float noise (0.30000000000000004)
    for t in (2.5e-3, 1.234e-5, 42.0):
        assert axes.time_tick(t, figures=3) == fmt.time_one(t)  # the three-figure form: 2.50 ms


# --- the engines use the kit ---------------------------------------------------------------

def test_every_chart_engine_takes_its_widths_and_ticks_from_the_kit():
    """No engine keeps a glyph-width constant or tick rule of its own: each imports the kit, none
    multiplies a length by a width a character, none rounds ticks to 1-2-2.5-5 or to decades."""
    for name in ENGINES:
        source = (PACKAGE / name).read_text(encoding="utf-8")
        tree = ast.parse(source)
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "benchsite.views"
                    for a in n.names}
        assert "axes" in imported, name
        assigned = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                    if isinstance(t, ast.Name)}
        assert not {a for a in assigned if "CHAR" in a}, name
        assert not re.search(r"len\([^)]*\)\s*\*\s*[\w.]*(CHAR|[0-9])|[0-9]\s*\*\s*len\(", source), name
        assert "2.5, 5" not in source and "math.floor(math.log10" not in source, name


