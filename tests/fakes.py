"""Fakes whose timing the tests control: a clock that only moves when told to."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field


@dataclass
class FakeClock:
    now: float = 0.0
    reads: int = 0  # how many times the clock was read

    def __call__(self) -> float:
        self.reads += 1
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass(eq=False)
class FakeResult:
    """An output whose readiness costs ``ready_after`` seconds of the fake clock."""

    clock: FakeClock
    ready_after: float
    waited: bool = False

    def block_until_ready(self) -> FakeResult:
        if not self.waited:
            self.clock.advance(self.ready_after)
            self.waited = True
        return self


@dataclass
class FakeFunction:
    """Returning costs ``dispatch_s``; the result becomes ready ``work_s`` later.

    ``keep=False`` holds no reference to the results, so a test can see when the
    caller frees one: ``released`` gets the clock's read count at that moment.
    ``log`` (a list shared by several fakes) gets ``name`` on every call.
    """

    clock: FakeClock
    dispatch_s: float
    work_s: float
    calls: int = 0
    results: list = field(default_factory=list)
    keep: bool = True
    released: list = field(default_factory=list)
    name: str = ""
    log: list | None = None

    def __call__(self, *args: object) -> FakeResult:
        self.calls += 1
        if self.log is not None:
            self.log.append(self.name)
        self.clock.advance(self.dispatch_s)
        result = FakeResult(self.clock, self.work_s)
        if self.keep:
            self.results.append(result)
        else:
            weakref.finalize(result, lambda: self.released.append(self.clock.reads))
        return result


def block(tree):
    """Block a FakeResult or a list/tuple/dict of them (a pytree stand-in)."""
    leaves = tree.values() if isinstance(tree, dict) else tree if isinstance(tree, (list, tuple)) else [tree]
    for leaf in leaves:
        leaf.block_until_ready()
    return tree
