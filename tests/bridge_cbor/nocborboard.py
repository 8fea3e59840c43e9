# The simulated board deployed without tinymcp/cborlink.py (it still advertises CBOR frames).
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)
sys.modules["tinymcp.cborlink"] = None  # every import of it fails, as when the file is missing

if __name__ == "__main__":
    import importlib.util
    from ports import serve
    spec = importlib.util.spec_from_file_location("sim_main", os.path.join(REPO, "boards", "sim",
                                                                           "main.py"))
    sim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim)
    serve(sim.build())
