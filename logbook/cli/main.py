"""The command line: parses and prints, nothing else. Exit codes are mapped here, once (§6).

0 success; 1 a check found a problem; 2 bad input or usage (nothing written); 3 environment
(no ledger, no key, locked); 70 an internal error (a bug), with its traceback.

`append` of drafts and `note` start lean (logbook.cli.lean, without typer); everything else,
and anything the lean start does not read, runs through the typer application
(logbook.cli.app). Both end in the one mapping below.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

from logbook import config

# logbook.cli.app's names, for the callers that reach them through this module (the tests of
# help, an in-process caller registering commands): loaded, with typer, on first use
_APP_NAMES = ("app", "MODULES", "_register", "_name", "_name_placeholders", "_command_of")


def __getattr__(name: str) -> Any:
    if name in _APP_NAMES:
        from logbook.cli import app

        return getattr(app, name)
    raise AttributeError(name)


def run(argv: list[str] | None = None) -> int:
    """Entry point of the `logbook` console script."""
    from logbook.cli.lean import lean_call
    from logbook.format.canonical import escape_text

    # argv bytes that are not UTF-8 arrive as lone surrogates: escape them before any model
    args = [escape_text(a) for a in (sys.argv[1:] if argv is None else argv)]
    config.start_command()
    call = lean_call(args, os.environ)
    if call is None:
        from logbook.cli.app import invoke

        call = partial(invoke, args, run)
    code = _mapped(call, "--debug" in args or config.debug())
    sys.stdout.flush()
    return code


def _mapped(call: Callable[[], int], debug: bool) -> int:
    """The exit code of ``call``, with a LogbookError printed as its one sentence and any other
    exception as a bug."""
    from logbook.errors import LogbookError

    try:
        return call()
    except LogbookError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        message = str(exc)
        if "://" in message:  # a URL's credentials never reach a message
            from logbook.capture.redact import scrub_urls

            message = scrub_urls(message)
        print(f"logbook: {message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("logbook: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception:
        print("logbook: internal error (a bug; please report it with this traceback):",
              file=sys.stderr)
        import traceback

        traceback.print_exc()
        return 70


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":  # pragma: no cover
    main()
