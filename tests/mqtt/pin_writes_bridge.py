# tinymcp-bridge with each write of its pins file noted, for tests/mqtt/test_fleet_pins.py: a
# line per write in the file $TINYMCP_TEST_PIN_WRITES, "loop" when the bridge's event loop made
# it (the loop waits for the file meanwhile), "off" otherwise, and how many boards it wrote.
import asyncio
import os
import sys

from tinymcp.host.bridge import pins
from tinymcp.host.bridge.cli import main

_save = pins.PinBook.save


def save(self, keys, records=None):
    try:
        asyncio.get_running_loop()
        where = "loop"
    except RuntimeError:
        where = "off"
    with open(os.environ["TINYMCP_TEST_PIN_WRITES"], "a") as f:
        f.write("%s %d\n" % (where, len(keys)))
    return _save(self, keys, records)


pins.PinBook.save = save
sys.exit(main())
