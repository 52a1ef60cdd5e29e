"""Fakes whose timing the tests control: a clock that only moves when told to."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FakeClock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
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
    """Returning costs ``dispatch_s``; the result becomes ready ``work_s`` later."""

    clock: FakeClock
    dispatch_s: float
    work_s: float
    calls: int = 0
    results: list = field(default_factory=list)

    def __call__(self, *args: object) -> FakeResult:
        self.calls += 1
        self.clock.advance(self.dispatch_s)
        result = FakeResult(self.clock, self.work_s)
        self.results.append(result)
        return result


def block(tree):
    """Block a FakeResult or a list/tuple/dict of them (a pytree stand-in)."""
    leaves = tree.values() if isinstance(tree, dict) else tree if isinstance(tree, (list, tuple)) else [tree]
    for leaf in leaves:
        leaf.block_until_ready()
    return tree
