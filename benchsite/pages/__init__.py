"""The pages: ``<!-- bench:… -->`` markers expanded in a chapter, the generated /bench pages, the
page for after ``make bench``, and ``make claims``. They import the layers below them (and, for
now, ``build.buildcache`` in two places: CONTRIBUTING.md lists them)."""
