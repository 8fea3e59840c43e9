# Debian's headless Chromium, driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
# JSON messages separated by NUL bytes, Chromium reading fd 3 and writing fd 4): no port, no
# WebSocket library, no downloaded browser.
import base64
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time

from tests.needs import missing

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio"]


def chromium_path():
    found = shutil.which("chromium")
    if found is None:
        missing("chromium is not installed: run .ci/install-chromium")
    return found


def _above_9(fd):
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class DevToolsError(AssertionError):
    pass


class Chromium:
    # One browser with one page; send() a DevTools command and get its result, or read the
    # events it sent (console messages, exceptions, network answers) from .events.
    def __init__(self, *flags):
        self.profile = tempfile.mkdtemp(prefix="tinymcp-chromium-")
        # Both pipe ends the browser keeps sit at 10 or above, so bash's redirections to
        # fds 3 and 4 cannot overwrite one with the other.
        to_browser, self._to_browser = (_above_9(fd) for fd in os.pipe())
        self._from_browser, from_browser = (_above_9(fd) for fd in os.pipe())
        self.proc = subprocess.Popen(
            ["bash", "-c", 'exec "$0" "$@" 3<&%d 4>&%d %d<&- %d>&-'
             % (to_browser, from_browser, to_browser, from_browser), chromium_path()]
            + FLAGS + ["--user-data-dir=" + self.profile, "--remote-debugging-pipe"]
            + list(flags) + ["about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(to_browser, from_browser))
        os.close(to_browser)
        os.close(from_browser)
        self._ids = iter(range(1, 1 << 30))
        self._answers = {}
        self._answered = threading.Condition()
        self.events = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.session = None
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target,
                                                           "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.send(domain + ".enable")

    def _read(self):
        pending = b""
        while True:
            try:
                chunk = os.read(self._from_browser, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                break
            pending += chunk
            *messages, pending = pending.split(b"\0")
            for raw in messages:
                msg = json.loads(raw)
                if "id" in msg:
                    with self._answered:
                        self._answers[msg["id"]] = msg
                        self._answered.notify_all()
                else:
                    self.events.put(msg)
        with self._answered:
            self._answers[None] = {"error": {"message": "chromium closed its pipe"}}
            self._answered.notify_all()

    def send(self, method, params=None, timeout=30):
        rid = next(self._ids)
        msg = {"id": rid, "method": method, "params": params or {}}
        if self.session is not None:
            msg["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        end = time.monotonic() + timeout
        with self._answered:
            while rid not in self._answers and None not in self._answers:
                left = end - time.monotonic()
                if left <= 0:
                    raise DevToolsError("chromium did not answer %s in %g s" % (method, timeout))
                self._answered.wait(left)
            answer = self._answers.pop(rid, None) or self._answers[None]
        if "error" in answer:
            raise DevToolsError("%s: %s" % (method, answer["error"].get("message")))
        return answer["result"]

    def evaluate(self, expression, timeout=30):
        # The value of a JavaScript expression in the page (promises awaited).
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, timeout)
        if "exceptionDetails" in result:
            raise DevToolsError("%s threw: %s" % (expression[:80], json.dumps(
                result["exceptionDetails"])[:600]))
        return result["result"].get("value")

    def navigate(self, url):
        self.send("Page.navigate", {"url": url})
        self.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'")

    def wait_for(self, expression, timeout=30):
        # Polls a JavaScript expression until it is truthy; -> its value.
        end = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > end:
                raise AssertionError("never true in the page after %g s: %s"
                                     % (timeout, expression))
            time.sleep(0.2)

    def drain(self):
        # -> every event received so far.
        found = []
        while True:
            try:
                found.append(self.events.get_nowait())
            except queue.Empty:
                return found

    def screenshot(self, path, width=1280, height=1100):
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1, "mobile": False})
        shot = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def close(self):
        try:
            self.session = None
            self.send("Browser.close", timeout=10)
        except (DevToolsError, OSError):
            pass
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
