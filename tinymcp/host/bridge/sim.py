# --sim: a board's main.py run under this Python behind a pseudo-terminal, like a USB board; where
# there are no ptys (Windows), on pipes the link reads like a serial port.
import asyncio
import ctypes
import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from tinymcp.host.bridge.link import READ_WAIT, open_port, PortError
from tinymcp.host.deploy import DeployError
from tinymcp.host.deploy import tree

try:
    import pty
except ImportError:   # Windows
    pty = None

log = logging.getLogger("tinymcp.bridge.sim")


def find_board(name):
    # BOARD (a bundled board: "sim") or PATH (a folder holding main.py, or a board's .py file)
    # -> tree.BoardSource, found as tinymcp-deploy --board finds it.
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


class PipePort:
    # The board process's stdin and stdout as one port that outlives each process, as a pty does:
    # the link reads and writes it as it does a serial port. A board that exits is an end of file
    # here, and the next process's pipes take its place; bytes written meanwhile are lost, as on a
    # UART with nobody listening.
    in_waiting = 0

    def __init__(self, name):
        self.name = name
        self._from_board = None                 # the read end of its stdout
        self._to_board = None                   # the write end of its stdin
        self._readable = threading.Condition()
        self._writing = threading.Lock()

    def pipes(self):
        # -> (stdin, stdout) for a new board process, to be closed once it has them.
        board_in, to_board = os.pipe()
        from_board, board_out = os.pipe()
        with self._writing:
            if self._to_board is not None:
                os.close(self._to_board)
            self._to_board = to_board
        with self._readable:
            self._from_board = from_board   # the reader closes the last one at its end of file
            self._readable.notify_all()
        return board_in, board_out

    def read(self, size=1):
        # -> what the board wrote (b"" after READ_WAIT without a board, or when one exited).
        with self._readable:
            if self._from_board is None:
                self._readable.wait(READ_WAIT)
            fd = self._from_board
        if fd is None:
            return b""
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if not data:
            with self._readable:
                if self._from_board == fd:
                    self._from_board = None
            os.close(fd)
        return data

    def write(self, data):
        with self._writing:
            view = memoryview(data)
            try:
                while view and self._to_board is not None:
                    view = view[os.write(self._to_board, view):]
            except OSError:   # the board exited: its restart gets new pipes
                pass
        return len(data)

    def close(self):
        with self._writing:
            if self._to_board is not None:
                os.close(self._to_board)
                self._to_board = None


class SimBoard:
    # The board process speaks on the pty master; the bridge opens the slave, a real tty, by its
    # path through the same link code as a USB port. The bridge keeps its own copy of the master,
    # so a board that dies and restarts looks like a UART board that reset: the port stays.
    # Without pty the board speaks on pipes, and the PipePort stays.
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
        self.pipes = None
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
        if pty is None:
            self.pipes = PipePort(self.name)
            self.device = "pipes to %s" % self.name
            return self.device, self.pipes
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
                self.proc = await self._start()
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

    async def _start(self):
        # Its own session (or process group): a Ctrl-C in the terminal reaches only the bridge.
        if self.pipes is None:
            return await asyncio.create_subprocess_exec(
                self.python, str(self.main), stdin=self.master, stdout=self.master,
                cwd=self.cwd, env=self.env, start_new_session=True, preexec_fn=_die_with_parent)
        # On pipes the board ends with the bridge by itself: its stdin reaches its end.
        board_in, board_out = self.pipes.pipes()
        try:
            return await asyncio.create_subprocess_exec(
                self.python, str(self.main), stdin=board_in, stdout=board_out, cwd=self.cwd,
                env=self.env, start_new_session=True,
                creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0))
        finally:
            os.close(board_in)
            os.close(board_out)

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
        if self.pipes is not None:
            self.pipes.close()
        if self.master is not None:
            os.close(self.master)
            self.master = None
