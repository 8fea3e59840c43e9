# python -m tinymcp.host.deploy
import sys

from tinymcp.host.deploy import main

sys.exit(main())
