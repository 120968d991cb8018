"""Imported by the fork server only, first of its preloads (``forkserver.PRELOAD``), and by nothing else:
the server, and each worker it forks, ends quietly when the command that asked for a worker was killed
in the middle of asking.

A command SIGKILLed between connecting to the server and sending its descriptors leaves the server an
EOFError in its read of them; killed after that but before writing the worker's start data, it leaves the
new worker one in its first read. multiprocessing prints both as tracebacks, into the stderr the killed
command shared with them, where a user (and the results drill) reads them as a crash of ours. An
EOFError reaching the top of these processes means only that: no peer but the command writes to them.
Any other error is printed as before.
"""

from __future__ import annotations

import sys
from types import TracebackType

_printed = sys.excepthook


def _quiet_when_the_asker_is_gone(kind: type[BaseException], value: BaseException,
                                  tb: TracebackType | None) -> None:
    if issubclass(kind, EOFError):
        return
    _printed(kind, value, tb)


sys.excepthook = _quiet_when_the_asker_is_gone
