"""A command killed while it asks the fork server for a parse worker leaves no traceback behind.

The fork server and the workers it forks share the command's stderr. When the command is SIGKILLed
between connecting to the server and sending its descriptors, the server's read ends early (EOFError
in ``reduction.recvfds``); killed after that but before the worker's start data is written, the new
worker's first read does (EOFError in ``spawn._main``). Both printed a traceback into the killed
command's stderr (the results drill caught one after a killed ``serve``). A kill cannot be timed to
land in that window, so each case cuts the request at exactly that point, as the kill leaves it, in
a process of its own (the fork server is the subject), for the stock server and for the one
``reading.forkserver`` forks from the command.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

# Starts a fork server (the stock one, or the one forked from this process as `score` and `batch` do),
# cuts one request short as a killed command would, and reports how the process that read it ended.
_CUT_REQUEST = r"""
import os, socket, sys
import multiprocessing.forkserver as mfs
from checklist_eval.reading import forkserver

kind, cut = sys.argv[1], sys.argv[2]
forkserver.context()
if kind == "forked":
    assert forkserver._fork_the_fork_server(), "the fork server could not be forked here"
else:
    mfs.ensure_running()
server = mfs._forkserver
if cut == "before descriptors":  # connected, then gone: the server's recvfds reads EOF
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(server._forkserver_address)
    _, status = os.waitpid(server._forkserver_pid, 0)  # alive_w still held here: only that EOF ends it
    print("server", os.waitstatus_to_exitcode(status))
else:  # descriptors sent, then gone before the start data: the new worker's first read is EOF
    status_r, data_w = server.connect_to_new_process([])
    os.close(data_w)
    pid = mfs.read_signed(status_r)
    print("worker", pid > 0, mfs.read_signed(status_r) != 0)
    os.close(server._forkserver_alive_fd)
    os.waitpid(server._forkserver_pid, 0)
"""


@pytest.mark.parametrize("kind", ["stock", "forked"])
@pytest.mark.parametrize("cut", ["before descriptors", "before start data"])
def test_request_cut_by_a_killed_command_prints_no_traceback(kind, cut):
    done = subprocess.run([sys.executable, "-c", _CUT_REQUEST, kind, cut], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    # the request was really cut where the kill leaves it: the server or the new worker read EOF and ended
    assert done.stdout.split()[0] == ("server" if cut == "before descriptors" else "worker"), done.stdout
    if cut == "before descriptors":
        assert done.stdout.split()[1] == "1", done.stdout  # ended by that read, not by its alive pipe
    else:
        assert done.stdout.split()[1:] == ["True", "True"], done.stdout  # it started, and did not run
    assert "Traceback" not in done.stderr and "EOFError" not in done.stderr, done.stderr
