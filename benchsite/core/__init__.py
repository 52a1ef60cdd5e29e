"""The floor every layer stands on: one cache entry on disk (``cachefile``), where each generated
page lives (``urls``), and which commit holds a file (``gitdata``). Imports nothing else of
benchsite."""
