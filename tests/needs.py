# A test whose tool is not installed: skipped on a developer's machine, a failure in CI, where
# ./run test installs everything (a skip there would hide a missing install step).
import os

import pytest


def missing(reason):
    if os.environ.get("CI"):
        pytest.fail(reason + " (CI installs it: see ./run test)")
    pytest.skip(reason)
