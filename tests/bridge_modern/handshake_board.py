# boards/conformance with tinymcp/stateless.py missing: a board that only knows the handshake era.
import os
import runpy
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.modules["tinymcp.stateless"] = None   # `import tinymcp.stateless` now fails, as on a trimmed board
runpy.run_path(os.path.join(REPO, "boards", "conformance", "main.py"), run_name="__main__")
