# Runs the shared test modules under MicroPython (pytest runs the same files on CPython).
#   micropython tests/mprun.py tests/core [more dirs or files]   (from the repo root)
# Every function named test_* in every test_*.py module is called with no arguments;
# a test passes when it returns without raising. A board may hold the suites compiled (.mpy)
# elsewhere on sys.path, e.g. in its ROMFS at /rom, while the current directory stays writable.
import os
import sys

sys.path.insert(0, ".")


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


def main(targets):
    passed = failed = 0
    for target in targets:
        for path in modules(target):
            name = path.rsplit(".", 1)[0].replace("/", ".")
            module = __import__(name, None, None, ("x",))
            for attr in sorted(dir(module)):
                if not attr.startswith("test_"):
                    continue
                try:
                    getattr(module, attr)()
                    passed += 1
                except Exception as e:
                    failed += 1
                    print("FAIL", name + "." + attr)
                    sys.print_exception(e) if hasattr(sys, "print_exception") else print(repr(e))
    print(str(passed) + " passed, " + str(failed) + " failed")
    return failed


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1:] or ["tests/core"]) else 0)
