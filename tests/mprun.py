# Runs the shared test modules under MicroPython (pytest runs the same files on CPython).
#   micropython tests/mprun.py tests/core [more dirs or files]   (from the repo root)
# Every function named test_* in every test_*.py module is called with no arguments;
# a test passes when it returns without raising. A board may hold the suites compiled (.mpy)
# elsewhere on sys.path, e.g. in its ROMFS at /rom, while the current directory stays writable.
#
# A test that needs what a runtime may lack is declared so in its module, NEEDS = {"test_name":
# "threads"}; where that is missing the test is skipped with its reason (printed, and counted).
import os
import sys

sys.path.insert(0, ".")


def lacks(module):
    try:
        __import__(module)
        return False
    except ImportError:
        return True


# need -> (is it missing here?, the reason a skip prints)
LACKING = {
    "threads": (lambda: lacks("_thread"), "no _thread module"),
    "sockets": (lambda: lacks("socket"), "no socket module"),
}


def _listdir(path):
    return [entry[0] for entry in os.ilistdir(path)] if hasattr(os, "ilistdir") else os.listdir(path)


def modules(target):
    if target.endswith(".py"):
        return [target]
    for base in [""] + [p + "/" for p in sys.path if p and p != "."]:
        try:
            names = _listdir(base + target)
        except OSError:
            continue
        return [target + "/" + n for n in sorted(names)
                if n.startswith("test_") and n.endswith((".py", ".mpy"))]
    raise OSError("no test folder " + target)


def collect(targets):
    # [(name, function, why it is skipped here or None)] in run order
    found = []
    for target in targets:
        for path in modules(target):
            name = path.rsplit(".", 1)[0].replace("/", ".")
            module = __import__(name, None, None, ("x",))
            needs = getattr(module, "NEEDS", {})
            for attr in sorted(dir(module)):
                if attr.startswith("test_"):
                    need = needs.get(attr)
                    missing, reason = LACKING[need] if need else (None, None)
                    found.append((name + "." + attr, getattr(module, attr),
                                  reason if need and missing() else None))
    return found


def release(path):
    # Forget a test module collect() imported (its code is garbage then).
    name = path.rsplit(".", 1)[0].replace("/", ".")
    sys.modules.pop(name, None)
    package, _, attr = name.rpartition(".")
    if package in sys.modules and hasattr(sys.modules[package], attr):
        delattr(sys.modules[package], attr)


def run(name, test, skip, counts):
    # counts: [passed, failed, skipped]
    if skip:
        counts[2] += 1
        print("SKIP", name + ":", skip)
        return
    try:
        test()
        counts[0] += 1
    except Exception as e:
        counts[1] += 1
        print("FAIL", name)
        sys.print_exception(e) if hasattr(sys, "print_exception") else print(repr(e))


def summary(counts):
    print(str(counts[0]) + " passed, " + str(counts[1]) + " failed"
          + (", " + str(counts[2]) + " skipped" if counts[2] else ""))
    return counts[1]


def outcome(output):
    # For the host running this: (passed, failed, {test: skip reason}) from a run's output.
    skipped = {}
    for line in output.splitlines():
        if line.startswith("SKIP "):
            name, _, reason = line[5:].partition(": ")
            skipped[name] = reason
    counts = [int(part.split()[0]) for part in output.strip().splitlines()[-1].split(", ")]
    return counts[0], counts[1], skipped


def defined(target, root="."):
    # How many tests a target folder defines, read from its source (not from what ran).
    folder = root + "/" + target
    return sum(open(folder + "/" + name).read().count("\ndef test_")
               for name in _listdir(folder) if name.startswith("test_") and name.endswith(".py"))


def main(targets):
    counts = [0, 0, 0]
    for name, test, skip in collect(targets):
        run(name, test, skip, counts)
    return summary(counts)


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1:] or ["tests/core"]) else 0)
