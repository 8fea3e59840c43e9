# Running the bridge's suites a second time as if on Windows: the `as_on_windows` fixture below,
# imported into a test module, runs each of its tests twice, the second time with every process
# the tests start through tests.bridge.conftest.clean_env() under sitecustomize.py here.
import os

import pytest

SHIM_DIR = os.path.dirname(os.path.abspath(__file__))
SHIM_ENV = "TINYMCP_TEST_OS"


def shimmed(env):
    # env (a dict for a child process) -> the same, with the Windows shim when the test asks.
    if env.get(SHIM_ENV) == "windows":
        env["PYTHONPATH"] = os.pathsep.join(p for p in (SHIM_DIR, env.get("PYTHONPATH")) if p)
    return env


# A test of such a module that starts no process, or none the shim changes, runs once (as on
# POSIX) under this mark rather than twice.
same_on_every_os = pytest.mark.parametrize("as_on_windows", ["posix"], indirect=True)


def windows_paths_run_by(*tests):
    # A mark for a test whose processes take, under the shim, only the Windows paths that TESTS
    # (of the same module, each run twice) already take: stdin read in a thread, the sim board
    # on pipes and its stdin in a thread, the port served by threads, no signal handlers, the
    # same kind of frames through them. What differs is OS-independent code (the protocol's
    # rules, routing, auth), so the test runs once, as on POSIX, and the suite's time goes to
    # runs that can find a Windows fault. test_windows.py checks each name given exists and
    # itself runs twice.
    assert tests, "name the tests whose Windows runs cover this one's"
    return same_on_every_os


@pytest.fixture(autouse=True, params=["posix", "windows"])
def as_on_windows(request, monkeypatch):
    if request.param == "windows":
        monkeypatch.setenv(SHIM_ENV, "windows")
    else:
        monkeypatch.delenv(SHIM_ENV, raising=False)
    return request.param == "windows"
