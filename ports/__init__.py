# Per-runtime glue: the byte streams and serve(), picked for the runtime we run on.
import sys


def serve(server, stream=None, max_frame=None):
    if sys.implementation.name == "micropython":
        import gc
        gc.collect()  # building the board left garbage: the port's modules load into a clean heap
        from ports.micropython import serve as run
    else:
        from ports.cpython import serve as run
    return run(server, stream, max_frame)
