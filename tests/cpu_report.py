# Where the suite's CPU goes, per test module: TINYMCP_TEST_CPU=FILE ./run test writes one line
# per test to FILE.WORKER (this process's user + system CPU and that of every process the test
# started and waited for, its fixtures' set-up and teardown included), and the run ends with the
# modules that burnt the most. Wall time on a loaded machine says little; CPU seconds add up.
import json
import os
import time

try:
    import resource
except ImportError:   # not on Windows: the report is for the CI machine (Linux)
    resource = None

ENV = "TINYMCP_TEST_CPU"


def _cpu():
    # -> CPU seconds of this process and of its children waited for, so far.
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measuring():
    return bool(os.environ.get(ENV)) and resource is not None


class Meter:
    # Around one test's protocol (set-up, call, teardown): one line to this worker's file.
    def __init__(self):
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self.path = "%s.%s" % (os.environ[ENV], worker)
        self.mode = "w"   # a run before this one with the same FILE: its lines replaced

    def around(self, item):
        cpu, wall = _cpu(), time.monotonic()
        yield
        line = {"test": item.nodeid, "cpu": round(_cpu() - cpu, 3),
                "wall": round(time.monotonic() - wall, 3)}
        with open(self.path, self.mode, encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
        self.mode = "a"


def summary(path, top=25):
    # -> lines naming the modules that burnt the most CPU, from every worker's file.
    folder, stem = os.path.split(os.path.abspath(path))
    modules = {}
    for name in sorted(os.listdir(folder or ".")):
        if not name.startswith(stem + "."):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                module = row["test"].split("::")[0]
                cpu, count = modules.get(module, (0.0, 0))
                modules[module] = (cpu + row["cpu"], count + 1)
    total = sum(cpu for cpu, _ in modules.values())
    ranked = sorted(modules.items(), key=lambda kv: -kv[1][0])
    lines = ["CPU per test module (%s.*): %.0f s in all" % (path, total)]
    lines += ["%8.1f s %5d tests  %s" % (cpu, count, module)
              for module, (cpu, count) in ranked[:top]]
    return lines
