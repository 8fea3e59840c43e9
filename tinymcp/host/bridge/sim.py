# --sim: a board's main.py run under this Python behind a pseudo-terminal, like a USB board.
import asyncio
import ctypes
import logging
import os
import pty
import signal
import subprocess
import sys
from pathlib import Path

from tinymcp.host.bridge.link import open_port, PortError
from tinymcp.host.deploy import DeployError
from tinymcp.host.deploy import tree

log = logging.getLogger("tinymcp.bridge.sim")


def find_board(name):
    # BOARD (a bundled board: "sim") or PATH (a folder holding main.py, or a board's .py file)
    # -> tree.Board, found as tinymcp-deploy --board finds it.
    try:
        return tree.find_board(name)[1]
    except DeployError as e:
        raise PortError(str(e)) from None


def _die_with_parent():
    # The board must never outlive the bridge, even if the bridge is killed with SIGKILL.
    # (It runs in its own session, so a Ctrl-C in the terminal reaches only the bridge.)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


class SimBoard:
    # The board process speaks on the pty master; the bridge opens the slave, a real tty, by its
    # path through the same link code as a USB port. The bridge keeps its own copy of the master,
    # so a board that dies and restarts looks like a UART board that reset: the port stays.
    restart_delay = 0.2

    def __init__(self, name="sim", python=None, identity=None):
        # identity: who the board says it is (boards/sim takes $TINYMCP_SIM_ID), so that a
        # restarted process comes back as the same board.
        board = find_board(name)
        self.main = Path(board.main)
        self.cwd = board.dir   # as on a board's flash: main.py's folder is where it runs
        self.python = python or sys.executable
        self.env = dict(os.environ, TINYMCP_SIM_ID=identity) if identity else None
        self.name = identity or board.name
        self.master = None
        self.device = None
        self.proc = None
        self.starts = 0
        self._stopping = False

    def check(self, timeout=10.0):
        # A board that fails before it serves (a syntax error, an ImportError, build() raising)
        # is one line at start, not a board restarted again and again: run it once with nothing
        # to read. A board that serves ends at the end of its input (or is still up at timeout).
        try:
            done = subprocess.run([self.python, str(self.main)], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.cwd,
                                  env=self.env, timeout=timeout)
        except subprocess.TimeoutExpired:
            return
        except OSError as e:
            raise PortError("cannot start the sim board %s: %s" % (self.main, e)) from None
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip().splitlines()
            raise PortError("the sim board %s does not start: %s"
                            % (self.main, said[-1] if said else "exit status %d" % done.returncode))

    def open(self):
        # -> (device path, open serial port)
        self.master, slave = pty.openpty()
        self.device = os.ttyname(slave)
        try:
            port = open_port(self.device)
        finally:
            os.close(slave)
        return self.device, port

    async def run(self, board_session):
        # Keep the board running; a crash is a reset the board session must notice at once.
        quick_deaths = 0
        loop = asyncio.get_running_loop()
        while not self._stopping:
            started = loop.time()
            try:
                self.proc = await asyncio.create_subprocess_exec(
                    self.python, str(self.main), stdin=self.master, stdout=self.master,
                    cwd=self.cwd, env=self.env, start_new_session=True,
                    preexec_fn=_die_with_parent)
            except OSError as e:   # EMFILE, EAGAIN: the machine is short of something; retry
                log.warning("cannot start the sim board (%s); retrying", e)
                quick_deaths += 1
                await asyncio.sleep(min(5.0, self.restart_delay * (1 << min(quick_deaths, 5))))
                continue
            self.starts += 1
            log.info("sim board %s started, pid %d", self.name, self.proc.pid)
            code = await self.proc.wait()
            if self._stopping:
                return
            log.warning("sim board %s exited with status %s; restarting it", self.name, code)
            board_session.reset("the sim board process exited")
            quick_deaths = quick_deaths + 1 if loop.time() - started < 2 else 0
            # A board that cannot start at all (a syntax error) is retried slowly.
            await asyncio.sleep(min(5.0, self.restart_delay * (1 << min(quick_deaths, 5))))

    def stop(self):
        self._stopping = True
        proc = self.proc
        if proc is not None and proc.returncode is None:
            try:
                proc.terminate()
            except ProcessLookupError:
                pass

    async def wait_stopped(self, timeout=2.0):
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()

    def close(self):
        if self.master is not None:
            os.close(self.master)
            self.master = None
