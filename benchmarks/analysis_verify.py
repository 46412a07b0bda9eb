"""Budget (issue 14): the check every analysis makes before it prints
(logbook.verify.integrity) costs at most 20% of `logbook report`'s time, on the report benchmark's
ledger (2 arms x 10 runs x 10,000 items).

Two ratios, both measured in this process tree on the same ledger, alternating:

* the check's time over the time of the whole `logbook report PLAN --json` command, which
  includes the check (what a user waits for): budget <= 0.20;
* the check's time over the in-process report computation without the check (the numbers
  alone, without start-up and printing): printed for reference, the stricter view.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import paired_medians, report, run_checked
from report import build


def main() -> None:
    from logbook.analysis.audit import findings_for_plan
    from logbook.analysis.report import build_report
    from logbook.analysis.view import LedgerView
    from logbook.ledger.service import Ledger
    from logbook.storage.sqlite.read_model import ReadModel
    from logbook.verify.integrity import check

    tmp = Path(tempfile.mkdtemp(prefix="logbook-bench-analysis-verify-"))
    try:
        build(tmp)
        env = {**os.environ, "LOGBOOK_DIR": str(tmp), "LOGBOOK_STATE_DIR": "off"}
        exe = str(Path(sys.executable).parent / "logbook")
        subprocess.run([exe, "verify"], env=env, check=True, capture_output=True)

        def the_check() -> None:
            with Ledger.open(tmp, write=False) as ledger, ledger.snapshot():
                check(ledger.entry_log, ReadModel.in_memory())

        def the_numbers() -> None:
            with Ledger.open(tmp, write=False) as ledger, ledger.snapshot():
                view = LedgerView(ledger)
                rep = build_report(view, "bench-plan")
                findings_for_plan(view, rep.plan["digest"])

        t_check, t_command = paired_medians(
            the_check, lambda: run_checked([exe, "report", "bench-plan", "--json"], env=env))
        report("analysis check / `logbook report` (2 arms x 10 runs x 10,000 items)",
               t_check / t_command, "<= 0.20",
               f"check {t_check * 1000:.1f} ms, logbook report --json {t_command:.2f} s "
               "(medians of 7, alternating)")
        t_check, t_numbers = paired_medians(the_check, the_numbers)
        report("analysis check / report computation in-process", t_check / t_numbers,
               "reference", f"check {t_check * 1000:.1f} ms, report computation "
               f"{t_numbers * 1000:.1f} ms (medians of 7, alternating)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
