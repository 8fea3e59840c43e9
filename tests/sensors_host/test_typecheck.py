# Device code is pyright-clean against the MicroPython rp2 and esp32 stubs, and the bridge's
# classes fit its named seams (tinymcp/host/bridge/seams.py) (.ci/typecheck).
import os
import subprocess

from tests.board_process import REPO


def test_device_code_type_checks_against_the_micropython_stubs():
    run = subprocess.run(["bash", os.path.join(REPO, ".ci", "typecheck")], cwd=REPO,
                         capture_output=True, text=True, timeout=900)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    summaries = [line for line in run.stdout.splitlines() if " errors, " in line]
    assert len(summaries) == 3 and all(s.startswith("0 errors") for s in summaries), out[-4000:]
