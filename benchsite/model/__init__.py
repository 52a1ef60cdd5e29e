"""The model: results files read through one validator, sessions, figures' metadata, the table
model, statistics and verdicts, claims' grammar, comparisons. Data in, data out: no text for a
reader (``views`` formats it). Imports ``core`` only."""
