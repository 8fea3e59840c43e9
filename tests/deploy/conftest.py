# Shared fixtures for the deploy tests: the repo root and a fake board on a pty.
import os

import pytest

from tests.deploy.fakeboard import FakeBoard, REPO


@pytest.fixture
def repo():
    return REPO


@pytest.fixture
def make_board(tmp_path):
    made = []

    def make(**kwargs):
        board = FakeBoard(str(tmp_path / ("fs%d" % len(made))), **kwargs)
        made.append(board)
        return board
    yield make
    for board in made:
        board.close()
    # a fault inside the fake board is a test failure, not a silent hang
    assert not [e for b in made for e in b.events if e.startswith("fake board error")]


def tree(root):
    # -> {relative path: bytes} of every file under root.
    out = {}
    for here, _dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(here, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, root).replace(os.sep, "/")] = f.read()
    return out

