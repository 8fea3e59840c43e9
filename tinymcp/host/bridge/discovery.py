# --port auto: MicroPython boards found by their USB identity, asked a harmless question, and
# watched: a board plugged in later is served, one unplugged is let go (it comes back under its
# label: the router remembers boards by the identity they report, not by their port).
import asyncio
import json
import logging
import re
import time

from serial.tools import list_ports

from tinymcp.host.bridge.link import PortError, open_port, read_some

log = logging.getLogger("tinymcp.bridge.discovery")

# USB vendor -> (what it is, the products that are serial ports; None: every product).
USB = {0x2E8A: ("Raspberry Pi RP2040/RP2350 (MicroPython's own USB CDC)", None),
       0x303A: ("Espressif native USB (ESP32-S2/S3/C3/C6)", None),
       0xF055: ("MicroPython (pyboard)", None),
       0x239A: ("Adafruit", None),
       0x10C4: ("Silicon Labs CP210x USB-UART", {0xEA60, 0xEA70}),
       0x1A86: ("WCH CH340/CH9102 USB-UART", {0x7522, 0x7523, 0x55D4}),
       0x0403: ("FTDI USB-UART", {0x6001, 0x6010, 0x6014, 0x6015})}
PROBE_ID = "tinymcp-probe"
# An empty line ends whatever half line the board holds; a ping is harmless to a serving board,
# and at a Python REPL it is a dict literal that evaluates to itself.
PROBE = b'\r\n{"jsonrpc":"2.0","id":"%s","method":"ping"}\n' % PROBE_ID.encode()
PROBE_WAIT = 1.5          # seconds a board has to answer the probe
PROBE_AGAIN = (3.0, 60.0)  # a device that did not answer is asked again after 3 s, 6 s ... 60 s


def usb_kind(port):
    # What a port's USB identity says it is, when that is a likely MicroPython board, else None.
    known = USB.get(port.vid) if port.vid is not None else None
    if known is None or (known[1] is not None and port.pid not in known[1]):
        return None
    return known[0]


def answers_mcp(port, wait=PROBE_WAIT):
    # Sends the probe on an open port -> True when a JSON-RPC answer to it comes back.
    port.write(PROBE)
    pending = b""
    end = time.monotonic() + wait
    while time.monotonic() < end:
        pending += read_some(port)   # OSError (SerialException) when the port goes
        *lines, pending = pending.split(b"\n")
        for line in lines:
            start = line.find(b"{")
            try:
                msg = json.loads(line[start:]) if start >= 0 else None
            except ValueError:
                continue
            if type(msg) is dict and msg.get("id") == PROBE_ID and "method" not in msg:
                return True   # a result or an error: an MCP server either way (not an echo)
    return False


def probe(device, baud):
    # -> the open port of a board that serves MCP on device, or None; PortError when it cannot
    # be opened (busy, gone).
    port = open_port(device, baud)
    try:
        if answers_mcp(port):
            return port
    except OSError as e:
        log.debug("probing %s: %s", device, e)
    port.close()
    return None


def serial_ports():
    # pyserial's port list, each device once: macOS has /dev/tty.X and /dev/cu.X for one port,
    # and cu.X (which opens without waiting for carrier detect) is the one to use.
    ports = list_ports.comports()
    devices = {p.device for p in ports}
    return [p for p in ports
            if not (p.device.startswith("/dev/tty.") and "/dev/cu." + p.device[9:] in devices)]


def port_order(device):
    # COM2 before COM10, ttyACM2 before ttyACM10.
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", device)]


class Discovery:
    # Tells boards (a seams.PluggedPorts) of each board found (found(device, open port) -> its
    # handle) and gone (gone(handle)); asks it which ports are served otherwise (taken).
    interval = 1.0

    def __init__(self, baud, boards):
        self.baud = baud
        self.boards = boards
        self.served = {}      # device -> handle
        self.declined = {}    # device -> (when to ask again, the wait after that)

    async def run(self):
        loop = asyncio.get_running_loop()
        log.info("--port auto: looking for MicroPython boards on USB")
        while True:
            ports = await loop.run_in_executor(None, serial_ports)
            found = {p.device: usb_kind(p) for p in ports}
            found = {device: kind for device, kind in found.items() if kind is not None}
            for device in [d for d in self.served if d not in found]:
                log.info("%s was unplugged", device)
                await self.boards.gone(self.served.pop(device))
            for device in [d for d in self.declined if d not in found]:
                del self.declined[device]   # asked afresh when it is plugged in again
            for device, kind in sorted(found.items(), key=lambda item: port_order(item[0])):
                if device not in self.served and self._due(device) \
                        and not self.boards.taken(device):
                    await self._try(loop, device, kind)
            await asyncio.sleep(self.interval)

    def _due(self, device):
        when = self.declined.get(device)
        return when is None or time.monotonic() >= when[0]

    async def _try(self, loop, device, kind):
        try:
            port = await loop.run_in_executor(None, probe, device, self.baud)
        except PortError as e:
            port, why = None, str(e)
        else:
            why = "it did not answer an MCP ping (not serving tinymcp, or still booting)"
        if port is None:
            wait = self.declined.get(device, (0, PROBE_AGAIN[0]))[1]
            log.log(logging.INFO if device not in self.declined else logging.DEBUG,
                    "--port auto: not serving %s (%s): %s; asking again in %g s", device, kind,
                    why, wait)
            self.declined[device] = (time.monotonic() + wait, min(wait * 2, PROBE_AGAIN[1]))
            return
        self.declined.pop(device, None)
        log.info("--port auto: %s (%s) serves MCP", device, kind)
        self.served[device] = self.boards.found(device, port)


def list_ports_text():
    # --list-ports: every serial port, with what its USB identity suggests.
    ports = sorted(serial_ports(), key=lambda p: port_order(p.device))
    if not ports:
        return ["no serial ports found"]
    lines = []
    for port in ports:
        line = port.device
        if port.vid is not None:
            line += "  usb %04x:%04x  %s" % (port.vid, port.pid or 0,
                                             port.product or port.description or "")
            kind = usb_kind(port)
            if kind:
                line += "  <- likely a MicroPython board (%s): --port auto serves it" % kind
        elif port.description and port.description != "n/a":
            line += "  " + port.description
        lines.append(line.rstrip())
    return lines
