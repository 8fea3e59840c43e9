# The simulated board deployed without tinymcp/cborlink.py. With OLD=1 in the environment it
# still advertises CBOR frames, as boards did before the channel checked for the module.
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)
sys.modules["tinymcp.cborlink"] = None  # every import of it fails, as when the file is missing

if __name__ == "__main__":
    import importlib.util
    from ports.cpython import FdStream
    from tinymcp.channel import Channel, Lines
    spec = importlib.util.spec_from_file_location("sim_main", os.path.join(REPO, "boards", "sim",
                                                                           "main.py"))
    sim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim)

    class OldLines(Lines):
        def opened(self, channel, key, session):
            Lines.opened(self, channel, key, session)
            session.link_modes["cbor"] = True

    Channel(sim.build(), (OldLines if os.environ.get("OLD") == "1" else Lines)(FdStream())).run()
