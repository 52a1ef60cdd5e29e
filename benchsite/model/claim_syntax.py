"""What a claim may say: the grammar of its condition, read with :mod:`ast` (nothing is executed).

``benchsite/views/claims.py`` says what each function means and evaluates a claim on a table model;
this module only reads one, so that reading a figure's caption (``figures.read_figure``, which
refuses a claim it cannot read) needs nothing of the tables.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable


class ClaimError(ValueError):
    """A claim the build cannot read (unknown figure, variant or row, bad syntax)."""


FUNCTIONS = ("median", "ratio", "growth", "result", "faster", "slower", "same", "metric", "spread", "within",
             "clusters")
COMPARE: dict[type, Callable[[object, object], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
ARITH: dict[type, Callable[[float, float], float]] = {
    ast.Div: operator.truediv, ast.Mult: operator.mul, ast.Add: operator.add, ast.Sub: operator.sub}


def parse(expr: str) -> ast.Expression:
    """The claim's condition as a syntax tree; only the grammar benchsite/views/claims.py's docstring gives."""
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as err:
        raise ClaimError(f"cannot read the claim {expr.strip()!r}: {err.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS):
            raise ClaimError(f"unknown function in {expr.strip()!r} (known: {', '.join(FUNCTIONS)})")
        if isinstance(node, ast.Call) and not all(isinstance(a, ast.Constant) for a in
                                                  [*node.args, *(k.value for k in node.keywords)]):
            raise ClaimError(f"arguments must be literals in {expr.strip()!r}")
        if isinstance(node, ast.Call) and node.func.id == "same":
            _check_same(node, expr)
        allowed = (ast.Expression, ast.Compare, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not,
                   ast.USub, ast.BinOp, ast.Call, ast.Name, ast.Constant, ast.keyword, ast.Load,
                   *COMPARE, *ARITH)
        if not isinstance(node, allowed):
            raise ClaimError(f"{type(node).__name__} is not allowed in a claim ({expr.strip()!r})")
    return tree


def _check_same(node: ast.Call, expr: str) -> None:
    """``same(...)`` states its margin, a fraction between 0 and 1: "the same" has no default width."""
    margin = [k.value.value for k in node.keywords if k.arg == "margin"]
    if not margin:
        raise ClaimError(f"same() needs margin= (a fraction: 0.05 for ±5 %) in {expr.strip()!r}")
    value = margin[0]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ClaimError(f"same() margin must be a fraction between 0 and 1, not {value!r}, in {expr.strip()!r}")


def split(spec: str) -> tuple[str, tuple[str, ...], str]:
    """``fig-id [on=gpu,tpu] EXPR`` -> (figure id, platforms or (), expression)."""
    parts = spec.strip().split(None, 1)
    if len(parts) != 2 or not parts[0].startswith("fig-"):
        raise ClaimError("a claim starts with a figure id (fig-...) and then its condition")
    fig_id, rest = parts
    on: tuple[str, ...] = ()
    if rest.startswith("on="):
        head, _, rest = rest.partition(" ")
        on = tuple(p for p in head[3:].split(",") if p)
    parse(rest)
    return fig_id, on, rest.strip()
