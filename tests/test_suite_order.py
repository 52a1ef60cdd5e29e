"""make test's schedule (tests/conftest.py, LONG_FIRST): a name there that is no test module puts
nothing first, silently, and the module it meant runs in pytest's order, perhaps last and alone."""

from conftest import LONG_FIRST, REPO


def test_every_module_scheduled_first_is_a_test_module():
    modules = {p.stem for p in (REPO / "tests").glob("test_*.py")}
    assert [name for name in LONG_FIRST if name not in modules] == []
    assert len(set(LONG_FIRST)) == len(LONG_FIRST)
