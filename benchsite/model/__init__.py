"""The model: results files read through one validator, sessions, figures' metadata, the table
model, statistics and verdicts, claims' grammar, comparisons. Data in, data out. Imports
``core`` only (and, for now, ``views.fmt`` in three places: CONTRIBUTING.md lists them)."""
