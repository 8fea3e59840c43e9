# Who may use the HTTP front when nobody said: a loopback bridge makes its own token and prints
# it as Jupyter does; --no-auth is for loopback only; and secrets stay out of --print-config.
import re
import subprocess

import httpx2 as httpx

from tests.bridge.conftest import BRIDGE, Bridge, clean_env
from tests.free_port import free_port
from tests.bridge.test_http import INIT, post
from tests.windows_shim import as_on_windows  # noqa: F401
from tests.windows_shim import windows_paths_run_by


# Under the Windows shim (tests/windows_shim), the bridge named below starts its HTTP front with a
# token of its own and serves it; the others differ in the token or the addresses allowed, decided
# in OS-independent code. Tests marked @windows_covered run once, as on POSIX: under the shim they
# would take no path the tests named below do not.
windows_covered = windows_paths_run_by(
    "test_a_loopback_bridge_makes_a_token_and_prints_the_links_that_work")


def test_a_loopback_bridge_makes_a_token_and_prints_the_links_that_work():
    bridge = Bridge(["--sim", "--http", "127.0.0.1:0", "--log-level", "info"], stdin=subprocess.DEVNULL)
    try:
        url = bridge.wait_stderr(r"serving (http://\S+/mcp)").group(1)
        page = bridge.wait_stderr(r"live dashboard at (http://\S+/\?token=(\S+))")
        token = page.group(2)
        assert len(token) >= 24 and re.match(r"^[A-Za-z0-9_-]+$", token)
        assert 'Authorization: Bearer %s"' % token in bridge.stderr()
        bridge.wait_stderr("board ready")
        assert post(url, INIT).status_code == 401                      # a local process
        assert post(url, INIT, authorization="Bearer nope").status_code == 401
        assert post(url, INIT, authorization="Bearer " + token).status_code == 200
        data = url.rsplit("/", 1)[0] + "/dashboard/data"
        assert httpx.get(data, timeout=20).status_code == 401
        assert httpx.get(data, headers={"authorization": "Bearer " + token},
                         timeout=20).status_code == 200
        assert httpx.get(page.group(1), timeout=20).status_code == 200   # the page itself
    finally:
        assert bridge.stop() == 0, bridge.stderr()


@windows_covered
def test_each_start_makes_another_token():
    tokens = []
    for _ in range(2):
        bridge = Bridge(["--sim", "--http", "127.0.0.1:0", "--log-level", "info"], stdin=subprocess.DEVNULL)
        try:
            tokens.append(bridge.wait_stderr(r"/\?token=(\S+)").group(1))
        finally:
            assert bridge.stop() == 0
    assert tokens[0] != tokens[1]


@windows_covered
def test_no_auth_opens_loopback_and_nothing_else():
    bridge = Bridge(["--sim", "--http", "127.0.0.1:0", "--no-auth", "--log-level", "info"], stdin=subprocess.DEVNULL)
    try:
        url = bridge.wait_stderr(r"serving (http://\S+/mcp)").group(1)
        bridge.wait_stderr("board ready")
        assert post(url, INIT).status_code == 200
        assert "token=" not in bridge.stderr()
    finally:
        assert bridge.stop() == 0
    for args in (["--http", "0.0.0.0:%d" % free_port(), "--no-auth"],
                 ["--http", "127.0.0.1:%d" % free_port(), "--no-auth", "--token", "x"]):
        done = subprocess.run(BRIDGE + ["--sim"] + args, env=clean_env(), capture_output=True,
                              timeout=30, stdin=subprocess.DEVNULL, text=True)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) <= 2 and "--no-auth" in done.stderr


@windows_covered
def test_print_config_shows_a_placeholder_for_the_board_token(tmp_path):
    for given, env in ((["--board-token", "s3cret-b0ard"], {}),
                       ([], {"TINYMCP_BOARD_TOKEN": "s3cret-b0ard"})):
        done = subprocess.run(BRIDGE + ["--print-config", "claude-desktop", "--port",
                                        "socket://192.0.2.7:8080"] + given,
                              env=clean_env(HOME=str(tmp_path), **env), capture_output=True,
                              timeout=30, stdin=subprocess.DEVNULL, text=True)
        assert done.returncode == 0, done.stderr
        assert "s3cret-b0ard" not in done.stdout + done.stderr
        assert '"TINYMCP_BOARD_TOKEN": "<set TINYMCP_BOARD_TOKEN>"' in done.stdout, done.stdout
