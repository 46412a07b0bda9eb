"""Code that runs inside other tools (DESIGN §3): the Inspect AI hook, lm-evaluation-harness's
``record()``, and the spool that keeps a run the ledger could not take (docs/recording.md).

Each goes through the adapters of ``logbook.ingest`` and their one append path
(``logbook.ingest.appending``), so a run recorded from inside a harness is the run `logbook
append --from` makes of the same output.
"""
