"""Number formatting for display. Data stays in SI seconds; units appear only here."""

from __future__ import annotations

import html
import math
import re

TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def time_unit(seconds: float) -> tuple[float, str]:
    """The largest unit in which ``seconds`` reads as at least 1."""
    for scale, name in TIME_UNITS:
        if abs(seconds) >= scale:
            return scale, name
    return TIME_UNITS[-1]


def sig(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures, without an exponent for display ranges."""
    if value == 0 or not math.isfinite(value):
        return str(value)
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(value)))))
    return f"{value:.{decimals}f}"


def time_range(median: float, low: float, high: float) -> str:
    """``12.3 ms [11.9..13.0]``: one unit for all three, chosen by the median."""
    scale, unit = time_unit(median)
    return f"{sig(median / scale)} {unit} [{sig(low / scale)}..{sig(high / scale)}]"


def time_one(seconds: float) -> str:
    scale, unit = time_unit(seconds)
    return f"{sig(seconds / scale)} {unit}"


def count_range(median: float, low: float, high: float) -> str:
    """A count such as compiles: ``6`` when every run agrees, else ``6 [5..7]``."""
    if low == high:
        return f"{median:g}"
    return f"{median:g} [{low:g}..{high:g}]"


def ratio_range(median: float, low: float, high: float) -> str:
    return f"{sig(median)}× [{sig(low)}..{sig(high)}]"


def rate_range(median: float, low: float, high: float) -> str:
    """Events per second: ``96.2 /s [85.4..102]``."""
    return f"{sig(median)} /s [{sig(low)}..{sig(high)}]"


def percent(frac: float) -> str:
    return f"{sig(100 * frac, 2)} %" if math.isfinite(frac) else "n/a"


def percent_span(values) -> str:
    """One spread per table row as a percentage: ``36 %`` when the rows agree to two figures, else
    ``22 % to 36 % across rows``; a row with too few samples a run to say (NaN) is counted, not
    hidden."""
    values = list(values)
    known = [v for v in values if v == v]
    if not known:
        return "not measurable (too few samples a run)"
    lo, hi = percent(min(known)), percent(max(known))
    shown = lo if lo == hi else f"{lo} to {hi} across rows"
    missing = len(values) - len(known)
    return shown + (f"; {missing} of {len(values)} rows had too few samples a run to say" if missing else "")


def esc(value: object) -> str:
    """Every text from a results file goes through here before it reaches a page."""
    return html.escape(str(value), quote=True)


_MD_SPECIAL = str.maketrans({c: f"&#{ord(c)};" for c in "|*_[]`\\"})


def md(text: object) -> str:
    """Text from a results file, safe inside a Markdown table cell."""
    return esc(text).translate(_MD_SPECIAL)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``word`` for one, else ``many`` (default ``word + "s"``)."""
    return word if n == 1 else (many or word + "s")


def count(n: int, word: str, many: str | None = None) -> str:
    """``1 sample``, ``45 samples``."""
    return f"{n} {plural(n, word, many)}"


def count_span(low: int, high: int, word: str = "") -> str:
    """A count that may vary: ``10 samples`` when both ends agree, else ``3–10 samples``."""
    span = f"{low}" if low == high else f"{low}–{high}"
    return f"{span} {plural(high, word)}" if word else span


GLUED_URL = re.compile(r"(?<=[^\s(<\"'])(https?://)")


def unglue_urls(text: str) -> str:
    """A URL run on to the end of a log line (JAX's cache-miss message appends its docs link
    with no space: ``{weak_type=True}https://docs.jax.dev/…``) starts its own line. Display
    only: the stored text stays as JAX wrote it."""
    return GLUED_URL.sub(r"\n\1", text)
