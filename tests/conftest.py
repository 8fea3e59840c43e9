# The whole suite: no test touches the user's own state. Every bridge a test starts (a process,
# or tinymcp.host.bridge.cli.main in this one) keeps its pins (tinymcp/host/bridge/pins.py) in a
# file of that test's own: $TINYMCP_PINS, which every process the tests start inherits. A test
# that wants to share pins between two bridges gives both the same --pins FILE.
import itertools
import os
import shutil
import tempfile

import pytest

from tests import cpu_report
from tinymcp.host.bridge.pins import PINS_ENV

_FOLDER = tempfile.mkdtemp(prefix="tinymcp-test-pins-")
_COUNT = itertools.count(1)
# Before any fixture of any scope starts a bridge: never the user's state directory.
os.environ[PINS_ENV] = os.path.join(_FOLDER, "session.json")
# Nor for a process started with an environment of its own without $TINYMCP_PINS (on Linux, where
# the state directory follows $XDG_STATE_HOME): test_wheel.py and the discover scenario once
# dropped every TINYMCP_ variable, and their bridges wrote into the user's pins file.
os.environ["XDG_STATE_HOME"] = os.path.join(_FOLDER, "state")


@pytest.fixture(autouse=True)
def own_pins(monkeypatch):
    # -> this test's pins file (not created until a bridge writes it).
    path = os.path.join(_FOLDER, "%d.json" % next(_COUNT))
    monkeypatch.setenv(PINS_ENV, path)
    return path


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_FOLDER, ignore_errors=True)


# TINYMCP_TEST_CPU=FILE: the CPU each test burns, summed per module at the end (tests/cpu_report.py).
_METER = cpu_report.Meter() if cpu_report.measuring() else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _METER is None:
        yield
        return
    yield from _METER.around(item)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _METER is not None and not hasattr(config, "workerinput"):
        for line in cpu_report.summary(os.environ[cpu_report.ENV]):
            terminalreporter.write_line(line)
