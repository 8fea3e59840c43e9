# A board declaring JSON Schema 2020-12 as plain dicts (tests/core/test_jsonschema.py's), for the
# tests that look at it through the bridge.
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)

from tests.core.test_jsonschema import rich_board  # noqa: E402


def build():
    return rich_board(initialized=False)


if __name__ == "__main__":
    from ports import serve
    serve(build())
