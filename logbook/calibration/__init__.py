"""The audit's calibration: honest ledgers of many shapes (`scenarios`) and each rule's
violation (`violations`), written through the public API into temporary ledgers, and
`logbook audit --selftest` over them (`selftest`). It signs (throwaway keys), so it lives
above the read-only analysis it checks."""
