"""Claims: sentences the build checks against the data beside them.

A sentence whose truth depends on the data is wrapped in a claim (on one source line)::

    <!-- bench:claim fig-dispatch-vs-completion growth("dispatch") < growth("completed") -->the
    dispatch time grows less than the completed time<!-- /bench:claim -->

The condition is a small expression read with :mod:`ast` (nothing is executed) and
evaluated on the figure's table model (:class:`table.Table`) on the machine the prose
quotes (``Catalog.prose_machine``): it reads the same cells the tables show, and two
variants' ratio and verdicts by the one query a sentence's value uses (``quotes.pair`` on the
row's samples: the runs both variants have, as the ratio column pairs them). The functions
(``sel``: group_by params, where ``first`` / ``last`` pick the first / last row among those
the other params keep):

* ``median(variant, **sel)``: the cell's median (seconds);
* ``ratio(**sel)``: the figure's ratio (the table's ratio column); ``ratio(a, b, **sel)``: the
  per-run ratio of two variants of one row (median over runs, as ``bench:value stat=ratio``);
* ``growth(variant, **sel)``: the last selected row's median over the first's;
* ``result(a=None, b=None, **sel)``: the paired verdict (``stats.paired_verdict``, the
  verdict page's rule) says "a result"; ``faster(a, b, **sel)`` / ``slower(a, b, **sel)``:
  a result and a below / above b;
* in ``ratio``, ``result``, ``faster``, ``slower`` and ``same``, ``a_KEY=`` / ``b_KEY=`` pick one
  side's row, so two rows are compared (``result("step", "step", a_devices=8, b_devices=1)``),
  paired run by run as ``bench:value``'s ``a.KEY=`` / ``b.KEY=`` pair them (``quotes.pair``);
* ``same(a=None, b=None, margin=M, **sel)``: the equivalence rule (``stats.paired_equivalence``)
  says the two variants (the figure's ratio pair unless named) are the same within ±M, M a
  fraction (0.05 = ±5 %) the claim must state; ``not same(...)`` says only that it could not show it;
* ``metric(name, variant, **sel)``: the median of another quantity (``metrics.py``: error,
  bandwidth, flop_rate, size);
* ``spread(variant, **sel)`` / ``within(variant, **sel)``: the cell's between-run range and
  within-run IQR over its median, as fractions (the spread text's numbers);
* ``clusters(variant, **sel)``: how many runs of the cell hold an outlying cluster (``outliers.py``).

Comparisons (chained too: ``0.9 < ratio(n="last") < 1.1``), ``and``, ``or``, ``not`` and
arithmetic on those values. ``on=gpu,tpu`` before the expression limits the claim to
those platforms: elsewhere it is shown as an expectation, labelled unchecked.

A false claim is reported through ``on_problem`` (a warning: a strict build fails with
``page:line``, the claim and the measured values) and rendered flagged; a true one is
plain prose with its values in a tooltip. Captions may hold claims too
(:func:`caption_html`); ``Figure.caption`` is their plain text.
"""

from __future__ import annotations

import ast
import html
import math
import re
from dataclasses import dataclass, field, replace

from markupsafe import Markup

from benchsite.model import metrics, quotes, stats
from benchsite.model.catalog import Unavailable
from benchsite.model.claim_syntax import ARITH, COMPARE, ClaimError, parse, split
from benchsite.model.figures import CLAIM, Figure
from benchsite.model.table import Row, Table
from benchsite.views import fmt, quantities
from benchsite.views.html import inline_code
from benchsite.views.html import render as template


@dataclass(frozen=True)
class Outcome:
    """What a claim came to on one machine."""

    # "true", "false", "expected" (not checked on this platform) or "not-held" (false on a machine
    # other than the reference: shown, listed, not a build failure)
    state: str
    values: tuple[str, ...]  # "median('dispatch', n='last') = 45.9 µs [41.3..56.5]", ...
    machine: str
    platform: str

    @property
    def measured(self) -> str:
        return "; ".join(self.values)


# --- evaluation on one table ---------------------------------------------------------------

@dataclass
class _Env:
    tab: Table
    seen: list[str] = field(default_factory=list)

    def rows(self, sel: dict[str, object]) -> list[Row]:
        unknown = sorted(set(sel) - set(self.tab.fig.group_by))
        if unknown:
            raise ClaimError(f"{self.tab.fig.id} has no group_by param {', '.join(unknown)} "
                             f"(group_by: {', '.join(self.tab.fig.group_by) or 'none'})")
        fixed = {k: str(v) for k, v in sel.items() if v not in ("first", "last")}
        rows = [r for r in self.tab.rows if all(r.params.get(k) == v for k, v in fixed.items())]
        for key, pick in sel.items():
            if pick in ("first", "last") and rows:
                values = [r.params[key] for r in rows]  # rows are in the table's (numeric) order
                want = values[0] if pick == "first" else values[-1]
                rows = [r for r in rows if r.params[key] == want]
        if not rows:
            raise ClaimError(f"no row of {self.tab.fig.id} on {self.tab.machine} matches {sel}")
        return rows

    def row(self, sel: dict[str, object]) -> Row:
        rows = self.rows(sel)
        if len(rows) != 1:
            raise ClaimError(f"{sel or 'no selection'} matches {len(rows)} rows of {self.tab.fig.id}; "
                             f"name the row ({', '.join(r.label for r in rows)})")
        return rows[0]

    def cell(self, row: Row, variant: str) -> stats.Summary:
        if variant not in self.tab.fig.variants:
            raise ClaimError(f"{variant!r} is not a variant of {self.tab.fig.id} "
                             f"({', '.join(self.tab.fig.variants)})")
        if variant not in row.cells:
            raise ClaimError(f"no {variant} cell at {row.label or 'the only row'} on {self.tab.machine}")
        return row.cells[variant]

    def pair(self, a: str | None, b: str | None, sel: dict[str, object]) -> tuple[str, str, str, quotes.Pair]:
        """The two sides, each a variant (the figure's ratio unless named) in the row ``sel`` picks
        (``a_KEY`` / ``b_KEY``: in one side's row only), and their pair from ``quotes.pair``: the
        ratio and the verdicts a sentence's value quotes, by the same code. With what each side is
        and where both are, for the notes ("" when the sides are rows of their own)."""
        try:
            a, b = quotes.variants({k: v for k, v in (("a", a), ("b", b)) if v}, self.tab.fig)
        except ValueError:
            raise ClaimError(f"{self.tab.fig.id} declares no ratio: name the two variants") from None
        sided = [k for k in sel if k[:2] in ("a_", "b_") and k not in self.tab.fig.group_by]
        if not sided:  # two variants of one row: the row's own samples
            row = self.row(sel)
            self.cell(row, a), self.cell(row, b)
            return a, b, f" at {row.label or 'the only row'}", quotes.pair(row.samples, {"a": a, "b": b}, self.tab.fig)
        both = {k: v for k, v in sel.items() if k not in sided}
        rows = [self.row({**both, **{k[2:]: sel[k] for k in sided if k[0] == s}}) for s in quotes.SIDES]
        self.cell(rows[0], a), self.cell(rows[1], b)
        opts = {"a": a, "b": b, **{f"{s}.{k}": v for s, row in zip(quotes.SIDES, rows) for k, v in row.params.items()}}
        return (f"{a} at {rows[0].label}", f"{b} at {rows[1].label}", "",
                quotes.pair(self.tab.frame, opts, self.tab.fig))

    # The functions a claim may call; each returns a plain value and notes what it read.

    def median(self, variant: str, **sel) -> float:
        row = self.row(sel)
        s = self.cell(row, variant)
        return self._note(f"{variant} at {row.label or 'the only row'}", s.median,
                          fmt.time_range(s.median, s.low, s.high))

    def ratio(self, a: str | None = None, b: str | None = None, **sel) -> float:
        a, b, at, found = self.pair(a, b, sel)
        s = found.ratio()
        return self._note(f"{a} / {b}{at}", s.median, fmt.ratio_range(s.median, s.low, s.high))

    def growth(self, variant: str, **sel) -> float:
        rows = [r for r in self.rows(sel) if variant in r.cells]
        if len(rows) < 2:
            raise ClaimError(f"growth of {variant} needs two rows with it in {self.tab.fig.id}")
        first, last = self.cell(rows[0], variant), self.cell(rows[-1], variant)
        return self._note(f"{variant} from {rows[0].label} to {rows[-1].label}", last.median / first.median,
                          f"{fmt.sig(last.median / first.median)}× ({fmt.time_one(first.median)} → "
                          f"{fmt.time_one(last.median)})")

    def verdict(self, a: str | None, b: str | None, sel: dict) -> tuple[stats.Verdict, float]:
        a, b, at, found = self.pair(a, b, sel)
        decided = found.verdict()
        self._note(f"verdict {a} vs {b}{at}", 0.0, f"{decided.text} ({fmt.sig(decided.ratio)}×; {decided.reason})")
        return decided, decided.ratio

    def result(self, a: str | None = None, b: str | None = None, **sel) -> bool:
        return self.verdict(a, b, sel)[0].is_result

    def faster(self, a: str, b: str, **sel) -> bool:
        decided, ratio = self.verdict(a, b, sel)
        return decided.is_result and ratio < 1

    def slower(self, a: str, b: str, **sel) -> bool:
        decided, ratio = self.verdict(a, b, sel)
        return decided.is_result and ratio > 1

    def same(self, a: str | None = None, b: str | None = None, *, margin: float, **sel) -> bool:
        a, b, at, found = self.pair(a, b, sel)
        decided = found.equivalence(margin)
        self._note(f"equivalence {a} vs {b}{at}", 0.0, f"{decided.text} ({decided.reason})")
        return decided.is_same

    def metric(self, name: str, variant: str, **sel) -> float:
        row = self.row(sel)
        self.cell(row, variant)
        s = row.metric(name).get(variant)
        if s is None:
            raise ClaimError(f"no {name} data for {variant} at {row.label or 'the only row'}")
        return self._note(f"{name} of {variant} at {row.label or 'the only row'}", s.median,
                          quantities.metric(metrics.get(name), s))

    def spread(self, variant: str, **sel) -> float:
        """Between-run spread of a cell: (max - min) / median of its run medians, as the table's."""
        row = self.row(sel)
        s = self.cell(row, variant)
        return self._note(f"run-to-run range of {variant} at {row.label or 'the only row'}", s.range_frac,
                          fmt.percent(s.range_frac))

    def within(self, variant: str, **sel) -> float:
        """Within-run spread of a cell: median over runs of IQR / median, as the spread text's."""
        row = self.row(sel)
        self.cell(row, variant)
        spread = next(s for s in self.tab.spreads if s.variant == variant)
        with_it = [r for r in self.tab.rows if variant in r.cells]
        value = spread.within[with_it.index(row)]
        return self._note(f"within-run IQR / median of {variant} at {row.label or 'the only row'}", value,
                          fmt.percent(value))

    def clusters(self, variant: str, **sel) -> int:
        """How many runs of a cell hold a cluster of outlying samples (outliers.py, as the spread text)."""
        from benchsite.model import outliers

        row = self.row(sel)
        self.cell(row, variant)
        where = f"{variant} at {row.label}" if row.label else variant
        found = [c for c in outliers.clusters(self.tab) if c.cell == where]
        self._note(f"runs with an outlying cluster in {where}", 0.0,
                   "; ".join(f"run {c.run}: {c.count} of {c.samples}" for c in found) or "none")
        return len(found)

    def _note(self, what: str, value: float, shown: str) -> float:
        line = f"{what}: {shown}"
        if line not in self.seen:
            self.seen.append(line)
        return value


def _eval(node: ast.AST, env: _Env):
    if isinstance(node, ast.Expression):
        return _eval(node.body, env)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Call):
        call = getattr(env, node.func.id)  # parse() allowed only FUNCTIONS
        return call(*(a.value for a in node.args), **{k.arg: k.value.value for k in node.keywords})
    if isinstance(node, ast.BoolOp):  # every operand is evaluated, so every value is shown
        values = [bool(_eval(v, env)) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, env)
        return (not value) if isinstance(node.op, ast.Not) else -value
    if isinstance(node, ast.BinOp):
        return ARITH[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.Compare):
        values = [_eval(node.left, env), *(_eval(c, env) for c in node.comparators)]
        return all(COMPARE[type(op)](x, y) for op, x, y in zip(node.ops, values, values[1:]))
    raise ClaimError(f"{type(node).__name__} is not allowed in a claim")


def evaluate(tab: Table, expr: str, on: tuple[str, ...] = ()) -> Outcome:
    """The claim ``expr`` on ``tab``; on a platform outside ``on``, an unchecked expectation."""
    platform = ",".join(sorted({str(p) for p in tab.frame["platform"].dropna()})) or "unknown"
    if on and platform not in on:
        return Outcome("expected", (), tab.machine, platform)
    env = _Env(tab)
    held = _eval(parse(expr), env)
    if isinstance(held, float) and math.isnan(held):
        held = False
    return Outcome("true" if held else "false", tuple(env.seen), tab.machine, platform)


# --- run by run: how many runs alone point the claim's way -----------------------------------

PER_RUN_SKIPS = ("spread", "within", "clusters")  # statistics of several runs: one run has none


class _OneRun(_Env):
    """A claim read on one run's table: a verdict function asks only which way that run's ratio
    points (beyond the rule's minimum effect, for ``result``), since one run decides nothing."""

    def verdict(self, a: str | None, b: str | None, sel: dict):
        found = self.pair(a, b, sel)[3]
        ratio = found.ratio().median
        beyond = abs(math.log(ratio)) > math.log1p(stats.MIN_EFFECT) if ratio > 0 else False
        return _Direction(beyond), ratio


@dataclass(frozen=True)
class _Direction:
    is_result: bool


class _WholeVerdictAbsent(ast.NodeTransformer):
    """``not result(...)`` (or ``not faster``/``not slower``) and ``same(...)`` read on every run
    together: that a verdict did not find a difference, or that the runs show two things the same
    within a margin, is a statement about all runs, and one run's direction neither makes nor
    breaks it. Each such term is replaced by its value on the whole table."""

    def __init__(self, env: _Env) -> None:
        self.env = env

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if node.func.id == "same":  # equivalence is shown by all runs together, never by one
            return ast.copy_location(ast.Constant(bool(_eval(node, self.env))), node)
        return self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        operand = node.operand
        if (isinstance(node.op, ast.Not) and isinstance(operand, ast.Call)
                and operand.func.id in ("result", "faster", "slower")):
            return ast.copy_location(ast.Constant(not _eval(operand, self.env)), node)
        return self.generic_visit(node)


def support(tab: Table, expr: str) -> tuple[int, int] | None:
    """How many of the table's runs bear the claim out on their own, of how many: each run's own
    table, with a verdict read as that run's direction (:class:`_OneRun`) and a verdict's absence
    read on all runs together (:class:`_WholeVerdictAbsent`). None for a claim about the spread
    between runs, which one run cannot have."""
    tree = parse(expr)
    if any(isinstance(n, ast.Call) and n.func.id in PER_RUN_SKIPS for n in ast.walk(tree)):
        return None
    tree = ast.fix_missing_locations(_WholeVerdictAbsent(_Env(tab)).visit(tree))
    runs = sorted(tab.frame["run"].unique())
    held = 0
    for run in runs:
        one = Table.of(tab.frame[tab.frame["run"] == run], tab.fig)
        try:
            value = _eval(tree, _OneRun(one))
        except (ClaimError, ZeroDivisionError, KeyError, IndexError):
            value = False  # the run lacks a cell the claim reads
        held += bool(value) and not (isinstance(value, float) and math.isnan(value))
    return held, len(runs)


# --- pages and captions --------------------------------------------------------------------

class Unreadable(Exception):
    """A sound claim the quoted machine's results cannot check (:func:`readable`): flagged on the
    page like a claim that does not hold there, and listed by ``make claims``."""


def readable(reference: Table | None, expr: str, on: tuple[str, ...]) -> bool:
    """Whether a claim that cannot be read on a machine (a cell or row its results lack) reads on
    the reference machine's table (``Catalog.reference_table``; None: there is none to ask): then
    the claim is sound and that machine's results cannot check it (an older session, a figure that
    changed since, a cell its hardware does not make), rather than a claim written wrong, which
    stops the build."""
    if reference is None:
        return False
    try:
        evaluate(reference, expr, on)
    except ClaimError:
        return False
    return True


def _check(spec: str, text: str, where: str, ctx) -> Outcome:
    """Evaluate one claim for the page or caption at ``where``; a false one is reported."""
    fig_id, on, expr = split(spec)
    if fig_id not in ctx.catalog.figures:
        raise ClaimError(f"no figure script defines {fig_id}")
    machine = ctx.catalog.prose_machine(fig_id)
    tab, reference = ctx.catalog.table(fig_id, machine), ctx.catalog.reference_table(fig_id, machine)
    try:
        outcome = evaluate(tab, expr, on)
    except ClaimError as err:
        if readable(reference, expr, on):
            raise Unreadable(f"cannot be checked on {machine} ({err}); it reads on the reference machine, "
                             f"{ctx.catalog.declared}") from None
        raise
    if outcome.state == "false" and not (ctx.claims_fatal and ctx.catalog.is_reference(machine)):
        return replace(outcome, state="not-held")  # shown as such; `make claims` lists it
    if outcome.state == "false":
        ctx.on_problem(f"{where}: claim contradicted by {fig_id} on {machine}: \"{plain(text)}\" "
                       f"[{expr}]; measured: {outcome.measured}")
    return outcome


def plain(text: str) -> str:
    """A claim's words for a message: markers and tags dropped, spaces collapsed."""
    return " ".join(re.sub(r"<!--.*?-->|<[^>]+>", "…", re.sub(r"</?code>", "", text)).split())


def _rendered(outcome: Outcome, body: Markup, fig_id: str, on: tuple[str, ...]) -> Markup:
    title = (f"checked against {fig_id} on {outcome.machine}: {outcome.measured}"
             if outcome.state != "expected" else
             f"expected on {', '.join(on)}; {fig_id} on {outcome.machine} is {outcome.platform}, not checked")
    return template("claim.html", state=outcome.state, body=body, title=title, measured=outcome.measured,
                    on=", ".join(on), platform=outcome.platform, machine=outcome.machine)


def expand_line(line: str, ctx, number: int) -> str:
    """Every claim on one Markdown line, checked and wrapped (the words stay Markdown)."""
    def one(match) -> str:
        spec, body = match.group(1), match.group(2)
        return str(_checked(spec, Markup(body), f"{ctx.page}:{number}", ctx))
    return CLAIM.sub(one, line)


def _checked(spec: str, body: Markup, where: str, ctx) -> Markup:
    """One claim rendered: checked, or flagged as unchecked when its data is unavailable."""
    try:
        outcome = _check(spec, body, where, ctx)
    except Unavailable as err:  # a bad or missing results file: said once, the words flagged
        ctx.on_problem(str(err))
        return template("claim.html", state="unavailable", body=body, title=str(err), measured="",
                        on="", platform="", machine="")
    except Unreadable as err:  # not this site's fault: shown, not reported (as a claim not held there)
        return template("claim.html", state="unavailable", body=body, title=str(err), measured="",
                        on="", platform="", machine="")
    except ClaimError as err:
        raise ClaimError(f"{where}: bench:claim {spec.strip()}: {err}") from None
    fig_id, on, _ = split(spec)
    return _rendered(outcome, body, fig_id, on)


def caption_html(fig: Figure, ctx) -> Markup:
    """The figure's caption as HTML: plain words escaped (inline `code` spans as ``<code>``), each
    claim checked and wrapped."""
    out, last = [], 0
    for match in CLAIM.finditer(fig.caption_src or fig.caption):
        out.append(inline_code(match.string[last:match.start()], html.escape))
        where = f"{fig.script_rel}:{fig.line}: FIGURE caption (shown on {ctx.page})"
        out.append(str(_checked(match.group(1), inline_code(match.group(2), html.escape), where, ctx)))
        last = match.end()
    out.append(inline_code((fig.caption_src or fig.caption)[last:], html.escape))
    return Markup("".join(out))


def count(text: str) -> int:
    """How many claims a page or caption carries."""
    return len(CLAIM.findall(text))
