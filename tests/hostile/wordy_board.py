# A board whose instructions are whatever $TINYMCP_TEST_INSTRUCTIONS says (for the bridge's
# bound on a board's instructions, and their pins).
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)

from tinymcp import Server  # noqa: E402


def build():
    server = Server("tinymcp-wordy", "0.1.0",
                    instructions=os.environ.get("TINYMCP_TEST_INSTRUCTIONS", "A wordy board."))

    @server.tool("hello", "Says hello.", read_only=True)
    def hello():
        return {"hello": True}

    return server


if __name__ == "__main__":
    from ports import serve
    serve(build())
