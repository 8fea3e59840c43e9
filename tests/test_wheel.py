# The distribution: `python -m build --wheel` makes a wheel that carries the device tree, and with it
# installed in a fresh virtual environment (or by pipx), the working directory outside the checkout
# and no checkout on any path, a starter board runs under both runtimes, deploys, and serves an SDK
# session through the bridge.
import asyncio
import json
import os
import subprocess
import sys
import zipfile

import pytest
from mcp import Client, StdioServerParameters

from tests.board_process import MICROPYTHON, REPO
from tests.built_wheel import CONSTRAINTS, wheel_once
from tests.deploy.conftest import make_board, tree  # noqa: F401  (make_board: a fake board)
from tinymcp.host.bridge.pins import PINS_ENV
from tinymcp.host.deploy import main as deploy

pytest.importorskip("build", reason="needs build: pip install build")
# One worker for the module under pytest-xdist (./run test): one venv.
pytestmark = pytest.mark.xdist_group("wheel")

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}
READ = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "read_temperature", "arguments": {"samples": 2}}}


def run(command, cwd, env, stdin=b"", timeout=300):
    return run_both(command, cwd, env, stdin, timeout)[0]


def run_both(command, cwd, env, stdin=b"", timeout=300):
    # -> (stdout, stderr) of a command that must succeed
    done = subprocess.run(command, cwd=str(cwd), env=env, input=stdin, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout)
    assert done.returncode == 0, (command, done.stderr.decode()[-2000:])
    return done.stdout.decode(), done.stderr.decode()


def answers(command, cwd, env):
    frames = "".join(json.dumps(f) + "\n" for f in (INITIALIZE, READ)).encode()
    return [json.loads(line) for line in run(command, cwd, env, frames, 60).splitlines()]


def outside_env(bin_dir):
    # No checkout on any path: only the environment's own commands first on PATH. The test's
    # pins file stays (tests/conftest.py): the installed bridge never writes the user's.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "MICROPYPATH", "VIRTUAL_ENV")
           and (k == PINS_ENV or not k.startswith("TINYMCP_"))}
    env["PATH"] = str(bin_dir) + os.pathsep + env.get("PATH", "")
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    # Built once per run from a copy of what the distribution is made of (tests/built_wheel.py:
    # the bundle's tests pack the same wheel), no build/ left in the checkout.
    return wheel_once(tmp_path_factory)


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    # -> the bin folder of a fresh venv with the wheel and its host extra installed.
    venv = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "-c", CONSTRAINTS,
         "%s[host]" % wheel], venv, outside_env(bin_dir), timeout=600)
    return bin_dir


def test_the_wheel_carries_the_core_the_host_programs_and_the_device_tree_only(wheel):
    names = zipfile.ZipFile(str(wheel)).namelist()
    tops = {n.split("/")[0] for n in names}
    assert tops == {"tinymcp", "tinymcp_hw-%s.dist-info" % wheel.name.split("-")[1]}
    device = "tinymcp/host/device/"
    for path in ("tinymcp/server.py", "tinymcp/port.py", "tinymcp/host/deploy/trace_board.py",
                 device + "ports/__init__.py", device + "ports/micropython/__init__.py",
                 device + "ports/cpython/__init__.py", device + "boards/sim/main.py",
                 device + "boards/rpi_pico/main.py"):
        assert path in names, path
    assert not [n for n in names if n.startswith(("tests/", "tools/")) or "/tests/" in n
                or n.endswith((".pyc", ".mpy"))]


def test_a_starter_board_runs_deploys_and_serves_from_an_installed_wheel(installed, tmp_path,
                                                                         make_board):  # noqa: F811
    env = outside_env(installed)
    work = tmp_path / "work"
    work.mkdir()
    where = run([str(installed / "python"), "-c", "import tinymcp; print(tinymcp.__file__)"],
                work, env)
    assert not where.startswith(REPO) and "site-packages" in where
    printed = run([str(installed / "tinymcp-deploy"), "--new", "myboard"], work, env)
    assert "tinymcp-bridge --sim ./myboard" in printed
    cpython = answers([str(installed / "python"), "myboard/main.py"], work, env)
    assert cpython[0]["result"]["serverInfo"]["name"] == "myboard"
    assert cpython[1]["result"]["structuredContent"]["units"] == {"celsius": "Cel"}

    built = run([str(installed / "tinymcp-deploy"), "--board", "./myboard", "--dry-run",
                 "--build", "out"], work, env)
    assert "myboard: " in built and "ports/micropython/__init__.mpy" in built
    # the same tree a checkout builds for this board, byte for byte
    assert deploy(["--board", str(work / "myboard"), "--dry-run", "--build",
                   str(tmp_path / "checkout")]) == 0
    assert tree(work / "out") == tree(tmp_path / "checkout")
    frozen = run([str(installed / "tinymcp-firmware"), "--board", "./myboard", "--out", "fw"],
                 work, env)
    assert "as main.py" in frozen and "FROZEN_MANIFEST=" in frozen
    manifest = (work / "fw" / "manifest.py").read_text()
    assert "site-packages" in manifest and REPO not in manifest   # the wheel's own tree
    if MICROPYTHON:
        board = answers([MICROPYTHON, "main.py"], work / "out", dict(env, MICROPYPATH="."))
        assert board[1]["result"]["structuredContent"]["units"] == {"celsius": "Cel"}
        fake = make_board(serving=False)
        copied = run([str(installed / "tinymcp-deploy"), "--board", "./myboard", "--port",
                      fake.port], work, env)
        assert "ok: myboard 0.1.0 answers on " + fake.port in copied

    async def session(target, tool, arguments):
        params = StdioServerParameters(command=str(installed / "tinymcp-bridge"),
                                       args=["--sim", target], cwd=str(work), env=env)
        async with Client(params, mode="legacy") as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            return tools, await client.call_tool(tool, arguments)
    tools, result = asyncio.run(session("./myboard", "read_temperature", {"samples": 2}))
    assert tools == ["read_temperature", "wait_for_event"] and not result.is_error   # + the bridge's own
    tools, result = asyncio.run(session("sim", "read_adc", {"channel": 1}))   # a bundled board
    assert "read_adc" in tools and not result.is_error


def test_pipx_install_of_the_wheel_gives_working_commands(wheel, tmp_path):
    pytest.importorskip("pipx", reason="needs pipx: pip install pipx")
    env = outside_env(tmp_path / "bin")
    env.update(PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "bin"),
               PIP_CONSTRAINT=CONSTRAINTS)
    run([sys.executable, "-m", "pipx", "install", "%s[host]" % wheel], tmp_path, env, timeout=600)
    run([str(tmp_path / "bin" / "tinymcp-deploy"), "--new", "myboard"], tmp_path, env)
    frames = "".join(json.dumps(f) + "\n" for f in (INITIALIZE,)).encode()
    out, said = run_both([str(tmp_path / "bin" / "tinymcp-bridge"), "--sim", "./myboard",
                          "--log-level", "info"], tmp_path, env, frames, 60)
    assert out.splitlines(), said[-3000:]   # once (session 10, a loaded machine): no answer, exit 0
    assert json.loads(out.splitlines()[0])["result"]["protocolVersion"] == "2025-11-25"


def test_the_readme_builds_the_wheel_with_build_installed_first_and_a_build_folder_is_harmless():
    # Without the build package, python -m build in a checkout finds its build/ folder (the
    # tests' artifacts, deploy's --build) and fails with "'build' is a package and cannot be
    # directly executed": the README installs it first, and ./run keeps its logs elsewhere.
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert readme.index("python -m pip install build") < readme.index("python -m build --wheel")
    with open(os.path.join(REPO, "run"), encoding="utf-8") as f:
        assert "build/setup-logs" not in f.read()
    os.makedirs(os.path.join(REPO, "build"), exist_ok=True)
    assert run([sys.executable, "-m", "build", "--version"], REPO, dict(os.environ)).startswith(
        "build ")
