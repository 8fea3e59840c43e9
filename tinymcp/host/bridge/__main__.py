# `python -m tinymcp.host.bridge`: the same as the tinymcp-bridge console script.
import sys

from tinymcp.host.bridge.cli import main

sys.exit(main())
