# tinymcp-firmware: the freeze manifest it writes, run by an evaluator that stands in for
# MicroPython's manifest functions (include, freeze, module, package, require) as
# tools/manifestfile.py defines them, so no MicroPython tree is needed; the build commands it
# prints; its one-line errors.
import os
import textwrap

import pytest

from tinymcp.host.deploy.files import CBOR_LINK, board_files, boards
from tinymcp.host.firmware.cli import main

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ManifestError(Exception):
    pass


class Manifest:
    # Freeze mode of MicroPython's manifestfile.py: $(VAR) paths, paths relative to the manifest
    # being run, a directory included as its manifest.py, each manifest run once, and any error
    # inside an include raised again as a manifest error (its cause kept as __context__).
    def __init__(self, variables):
        self.variables = variables
        self.frozen = {}        # target path on the board -> source file
        self.required = []      # micropython-lib packages asked for by name
        self.visited = set()
        self.here = [os.getcwd()]

    def resolve(self, path):
        for name, value in self.variables.items():
            path = path.replace("$(%s)" % name, value)
        return os.path.normpath(os.path.join(self.here[-1], path))

    def add(self, full, target):
        if not os.path.isfile(full):
            raise ManifestError("Cannot stat %s" % full)
        if target in self.frozen:
            raise ManifestError("frozen twice: %s" % target)
        self.frozen[target] = full

    def walk(self, base, sub):
        start = os.path.join(base, sub) if sub else base
        for here, _dirs, names in os.walk(start):
            for name in names:
                if name.endswith((".py", ".mpy")):
                    full = os.path.join(here, name)
                    self.add(full, os.path.relpath(full, base).replace(os.sep, "/"))

    def include(self, path, **_options):
        path = self.resolve(path)
        if os.path.isdir(path):
            path = os.path.join(path, "manifest.py")
        if path in self.visited:
            return
        self.visited.add(path)
        try:
            with open(path) as f:
                source = f.read()
            self.here.append(os.path.dirname(path))
            try:
                exec(source, self.functions())
            finally:
                self.here.pop()
        except Exception as e:
            raise ManifestError("Error in manifest file: %s: %s" % (path, e))

    def package(self, package_path, files=None, base_path=".", opt=None):
        base = self.resolve(base_path)
        if files is None:
            self.walk(base, package_path)
        for name in files or ():
            target = package_path + "/" + name
            self.add(os.path.join(base, package_path, name), target)

    def module(self, module_path, base_path=".", opt=None):
        if not module_path.endswith(".py"):
            raise ManifestError("module must be .py file")
        self.add(os.path.join(self.resolve(base_path), module_path), module_path)

    def freeze(self, path, script=None, opt=None):
        base = self.resolve(path)
        if script is None:
            self.walk(base, None)
        else:
            for name in (script,) if isinstance(script, str) else script:
                self.add(os.path.join(base, name), name)

    def require(self, name, **_options):
        self.required.append(name)

    def functions(self):
        return {"include": self.include, "package": self.package, "module": self.module,
                "freeze": self.freeze, "require": self.require}


def stand_in_rp2(tmp_path):
    # What MicroPython's ports/rp2 manifests do: the port's own modules, asyncio, micropython-lib
    # packages by name; the Pico W's board manifest includes the port's and adds its own.
    mpy = tmp_path / "micropython"
    (mpy / "extmod" / "asyncio").mkdir(parents=True)
    (mpy / "extmod" / "asyncio" / "__init__.py").write_text("")
    (mpy / "extmod" / "asyncio" / "manifest.py").write_text('package("asyncio", base_path="..")\n')
    port = mpy / "ports" / "rp2"
    (port / "modules").mkdir(parents=True)
    (port / "modules" / "_boot.py").write_text("# the port's own: mounts the flash filesystem\n")
    (port / "boards" / "RPI_PICO").mkdir(parents=True)   # no manifest: the port's is used
    (port / "boards" / "manifest.py").write_text(textwrap.dedent('''\
        freeze("$(PORT_DIR)/modules")
        include("$(MPY_DIR)/extmod/asyncio")
        require("onewire")
    '''))
    w = port / "boards" / "RPI_PICO_W"
    (w / "modules").mkdir(parents=True)
    (w / "modules" / "wlan_helper.py").write_text("# stands in for the Pico W's networking helpers\n")
    (w / "manifest.py").write_text(textwrap.dedent('''\
        include("$(PORT_DIR)/boards/manifest.py")
        freeze("$(BOARD_DIR)/modules")
    '''))
    return mpy


def frozen(manifest, mpy, port, board):
    m = Manifest({"MPY_DIR": str(mpy), "PORT_DIR": str(mpy / "ports" / port),
                  "BOARD_DIR": str(mpy / "ports" / port / "boards" / board)})
    m.include(manifest)
    return m


def traced(board):
    # The file set tinymcp-deploy ships (and the CBOR link), as the board sees it.
    files, _how = board_files(REPO, board, extra=CBOR_LINK)
    main_py = "boards/%s/main.py" % board
    return {("main.py" if f == main_py else f): os.path.join(REPO, f) for f in files}


def ours(m):
    return {t: p for t, p in m.frozen.items() if p.startswith(REPO + os.sep)}


def run(*args):
    return main(list(args) + ["--root", REPO])


def one_line_error(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tinymcp-firmware: "), err
    return err


def test_the_rp2_manifest_freezes_exactly_the_traced_files_and_the_ports_own(tmp_path, capsys):
    out = tmp_path / "pico"
    assert run("--board", "rpi_pico", "--out", str(out)) == 0
    manifest = str(out / "manifest.py")
    mpy = stand_in_rp2(tmp_path)
    pico = frozen(manifest, mpy, "rp2", "RPI_PICO")
    assert ours(pico) == traced("rpi_pico")                    # the board as main.py, tinymcp, ports
    assert "main.py" in pico.frozen
    assert not [t for t in pico.frozen if t.startswith(("tinymcp/host", "ports/cpython"))]
    assert {"_boot.py", "asyncio/__init__.py"} <= set(pico.frozen)   # the port's own
    assert pico.required == ["onewire"]
    pico_w = frozen(manifest, mpy, "rp2", "RPI_PICO_W")        # its board manifest is taken
    assert set(pico_w.frozen) == set(pico.frozen) | {"wlan_helper.py"}
    printed = capsys.readouterr().out
    for board in ("RPI_PICO", "RPI_PICO_W"):
        assert "BOARD=%s" % board in printed
    assert "make -C <micropython>/ports/rp2 BOARD=RPI_PICO FROZEN_MANIFEST=%s" % manifest in printed
    assert "firmware.uf2" in printed and "git checkout v" in printed


@pytest.mark.parametrize("board", boards(REPO))
def test_every_bundled_board_freezes_its_traced_file_set(board, tmp_path):
    out = tmp_path / board
    assert run("--board", board, "--out", str(out)) == 0
    m = frozen(str(out / "manifest.py"), stand_in_rp2(tmp_path), "rp2", "RPI_PICO")
    assert ours(m) == traced(board)


@pytest.mark.parametrize("as_file", [False, True])
def test_a_board_of_your_own_from_a_folder_or_a_file_is_frozen_as_main_py(as_file, tmp_path):
    from tinymcp.host.deploy.starter import main_py
    folder = tmp_path / "greenhouse"
    folder.mkdir()
    (folder / "probes.py").write_text("WET = 42\n")
    source = main_py("greenhouse").replace("import random\n", "import random\n\nimport probes\n")
    board = folder / ("greenhouse.py" if as_file else "main.py")
    board.write_text(source)
    out = tmp_path / "out"
    assert run("--board", str(board if as_file else folder), "--out", str(out)) == 0
    m = frozen(str(out / "manifest.py"), stand_in_rp2(tmp_path), "rp2", "RPI_PICO")
    with open(m.frozen["main.py"]) as f:
        assert f.read() == source
    assert m.frozen["probes.py"] == str(folder / "probes.py")
    assert {"tinymcp/server.py", "tinymcp/port.py", "ports/micropython/__init__.py"} <= set(m.frozen)


def test_a_broken_board_manifest_is_not_silently_replaced_by_the_ports(tmp_path):
    out = tmp_path / "pico"
    assert run("--board", "rpi_pico", "--out", str(out)) == 0
    mpy = stand_in_rp2(tmp_path)
    (mpy / "ports" / "rp2" / "boards" / "RPI_PICO_W" / "manifest.py").write_text("include(\n")
    with pytest.raises(ManifestError):
        frozen(str(out / "manifest.py"), mpy, "rp2", "RPI_PICO_W")


def test_the_evaluator_refuses_what_micropython_refuses(tmp_path):
    # So the tests above can fail: a missing file, a file frozen twice, a non-.py module.
    for text in ('module("nope.py", base_path=%r)' % str(tmp_path),
                 'package("tinymcp", base_path=%r, files=("server.py", "server.py"))' % REPO,
                 'module("README.md", base_path=%r)' % REPO):
        (tmp_path / "manifest.py").write_text(text + "\n")
        with pytest.raises(ManifestError):
            Manifest({}).include(str(tmp_path / "manifest.py"))


def test_esp32_gets_its_build_command(tmp_path, capsys):
    out = tmp_path / "esp32"
    (tmp_path / "ports" / "esp32").mkdir(parents=True)
    assert run("--board", "esp32", "--out", str(out), "--micropython", str(tmp_path)) == 0
    printed = capsys.readouterr().out
    assert ("make -C %s/ports/esp32 BOARD=ESP32_GENERIC FROZEN_MANIFEST=%s"
            % (tmp_path, out / "manifest.py")) in printed
    assert "export.sh" in printed and "deploy" in printed
    text = (out / "manifest.py").read_text()
    assert "module('main.py', base_path=%r)" % os.path.join(REPO, "boards", "esp32") in text


@pytest.mark.parametrize("args, says", [
    (["--board", "nope", "--out", "x"], "no board 'nope'"),
    (["--board", "sim"], "--board and --out are required"),
    (["--board", "sim", "--out", "x", "--target", "mips"], "invalid choice"),
    (["--board", "sim", "--out", "x", "--run"], "unrecognized arguments: --run"),
])
def test_bad_arguments_get_one_line_and_exit_2(args, says, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run(*args) == 2
    assert says in one_line_error(capsys)


def test_a_build_needs_a_checkout_with_the_port(tmp_path, capsys):
    tarball = tmp_path / "micropython.tar.xz"
    tarball.write_bytes(b"")
    for src in (tarball, tmp_path):   # a tarball; a tree without ports/rp2
        assert run("--board", "rpi_pico", "--out", str(tmp_path / "o"), "--micropython", str(src)) == 2
        assert "has no ports/rp2: building for rp2 needs a MicroPython git checkout" in one_line_error(capsys)


def test_an_unwritable_out_folder_gets_one_line_not_a_traceback(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["--board", "sim", "--out", str(blocker / "out")]) == 2
    assert str(blocker) in one_line_error(capsys)
