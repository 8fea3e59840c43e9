# The wheel carries the device tree the host programs copy to a board: ports/ and the bundled
# boards/ go in as tinymcp/host/device/ (tinymcp/ itself is the package). Only the name tinymcp is
# claimed in site-packages. An editable install needs no copy: tinymcp.host.deploy.tree finds the
# checkout beside the package.
import os

from setuptools import setup
from setuptools.command.build_py import build_py

DEVICE = ("ports", "boards")
INTO = os.path.join("tinymcp", "host", "device")


class BuildWithDeviceTree(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for top in DEVICE:
            for here, dirs, files in os.walk(top):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for name in sorted(files):
                    if name.endswith(".py"):
                        target = os.path.join(self.build_lib, INTO, here, name)
                        self.mkpath(os.path.dirname(target))
                        self.copy_file(os.path.join(here, name), target)


setup(cmdclass={"build_py": BuildWithDeviceTree})
