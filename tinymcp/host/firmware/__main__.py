# python -m tinymcp.host.firmware
import sys

from tinymcp.host.firmware import main

sys.exit(main())
