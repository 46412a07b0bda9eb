"""`logbook serve`: a read-only local web view of the ledger, every page with a JSON twin
(docs/web.md). Needs the ``web`` extra (Starlette, uvicorn, matplotlib); nothing here is
imported unless `serve` runs."""
