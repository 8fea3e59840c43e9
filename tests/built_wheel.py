# This checkout's wheel, built once per test run (`python -m build --wheel`, as the README says)
# for every pytest-xdist worker: the first worker to ask builds it under a file lock in the run's
# shared temporary folder, the others wait for it and reuse it. tests/test_wheel.py installs it;
# tests/bundle packs it (tools/bundle.py --wheel): one build a run where there were two (the
# bundle's own pip wheel was about 6 s of CPU).
import importlib.util
import os
import shutil
import subprocess
import sys

from filelock import FileLock

from tests.board_process import REPO

CONSTRAINTS = os.path.join(REPO, ".ci", "constraints.txt")


def _bundle_tool():
    # tools/bundle.py's copy_sources: one list of what the distribution is made of.
    spec = importlib.util.spec_from_file_location("tinymcp_bundle_tool",
                                                  os.path.join(REPO, "tools", "bundle.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_root(tmp_path_factory):
    # -> a folder every worker of this run shares: the parent of a worker's own base folder
    # (pytest-of-USER/pytest-N/popen-gwK), or the base folder itself without xdist.
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def wheel_once(tmp_path_factory):
    # -> the path of the wheel, built by whichever worker asked first.
    root = run_root(tmp_path_factory)
    here = root / "wheel-once"
    with FileLock(str(root / "wheel-once.lock")):
        found = sorted((here / "dist").glob("tinymcp_hw-*.whl"))
        if found:
            return found[0]
        src = here / "src"
        if src.exists():   # a build that failed before, in another worker: start again
            shutil.rmtree(str(here))
        _bundle_tool().copy_sources(str(src))
        done = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir",
                               str(here / "dist"), str(src)], cwd=str(here),
                              env=dict(os.environ, PIP_CONSTRAINT=CONSTRAINTS),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
        assert done.returncode == 0, done.stdout.decode()[-3000:]
        (found,) = (here / "dist").glob("tinymcp_hw-*.whl")
        return found
