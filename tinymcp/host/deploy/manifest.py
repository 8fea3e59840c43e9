# The mip manifests: package.json (core + MicroPython port) and package-BOARD.json (+ its drivers).
import json
import os

from tinymcp.host.deploy.files import boards, core_files, static_files

# Boards that run on the host (simulated, test fixtures): no mip manifest.
HOST_BOARDS = ("sim", "conformance")

def package_version(root):
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(root, "setup.cfg"))
    return cfg.get("metadata", "version", fallback="0.0.0")


def manifests(root):
    # -> {filename: manifest}: package.json installs the core and the MicroPython port;
    # package-BOARD.json adds every driver BOARD's main.py may import (a driver left out by
    # today's wiring constants is one edit away). URLs are relative to the
    # manifest (mip resolves them against its own URL), so forks install themselves.
    version = package_version(root)
    core = core_files(root)
    out = {"package.json": {"urls": [[p, p] for p in core], "deps": [], "version": version}}
    for board in boards(root):
        if board in HOST_BOARDS:
            continue
        drivers = [f for f in static_files(root, board) if f.startswith("tinymcp/sensors/")]
        out["package-%s.json" % board] = {"urls": [[p, p] for p in sorted(set(core) | set(drivers))],
                                          "deps": [], "version": version}
    return out


def manifest_text(data):
    # One [dest, src] pair per line: diffs stay readable when a module comes or goes.
    urls = ",\n".join("    " + json.dumps(pair) for pair in data["urls"])
    return ('{\n  "urls": [\n%s\n  ],\n  "deps": %s,\n  "version": %s\n}\n'
            % (urls, json.dumps(data["deps"]), json.dumps(data["version"])))


def write_manifests(root):
    for name, data in manifests(root).items():
        with open(os.path.join(root, name), "w") as f:
            f.write(manifest_text(data))
        print("wrote %s (%d files)" % (name, len(data["urls"])))
