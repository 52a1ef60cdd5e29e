"""The pages: ``<!-- bench:… -->`` markers expanded in a chapter, the generated /bench pages, the
page for after ``make bench``, and ``make claims``. They import the layers below them; the
build hands in its cache of finished HTML (``markers.Blocks``)."""
