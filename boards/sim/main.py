# The simulated board: the real drivers over a simulated bench (tinymcp.sensors.sim), no hardware.
import math
import random
import sys

if __name__ == "__main__":  # run from a checkout: the repo root holds tinymcp/ and ports/
    sys.path.append(globals().get("__file__", "").rsplit("boards", 1)[0] or ".")

from tinymcp import Server, events, history
from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.sensors import adc, internal, led, sim

VREF = 3.3
HISTORY_PERIOD_MS = 1000    # one sample of each tracked quantity a second
HISTORY_DEPTH = 300         # kept: five minutes of them, 8 bytes a sample
_start = ticks_ms()


def _seconds():
    return (ticks_ms() - _start) / 1000


class SimWorld:
    # The physics: readings are functions of time plus a little noise.
    def __init__(self):
        self.led = sim.Pin("LED")
        self.button = sim.Pin(14, level=1)   # a pulled-up button, not pressed
        self.relay = sim.Pin(15)
        self.fan = sim.PWM(sim.Pin(16))
        self.adcs = adc.ADCChannels([sim.ADC(self._signal(ch), VREF) for ch in range(4)], VREF)

    def _signal(self, channel):
        return lambda: self.volts(channel)

    def adc(self, channel):
        # -> (raw, volts) of one channel, read through the ADC driver.
        r = self.adcs.read(channel)
        return r["raw"], r["volts"]

    def celsius(self):
        t = _seconds()
        # A slow swing plus a faster ripple, so a 0.1 degree change comes every second or two.
        return 22.0 + 2.0 * math.sin(t / 48.0) + 0.3 * math.sin(t / 1.1)

    def chip_volts(self):
        # What the RP2040's sensor diode would put on ADC4 at that temperature.
        return 0.706 - (self.celsius() - 27) * 0.001721 + random.uniform(-0.00003, 0.00003)

    def air(self):
        t = _seconds()
        return {"celsius": self.celsius() - 0.4 + random.uniform(-0.02, 0.02),
                "rh": 45.0 + 5.0 * math.sin(t / 90.0) + random.uniform(-0.1, 0.1),
                "hpa": 1013.25 + 0.8 * math.sin(t / 300.0)}

    def volts(self, channel):
        t = _seconds()
        if channel == 0:    # a 1.65 V sine, like a signal generator on ADC0
            v = 1.65 + 1.2 * math.sin(t * 2.0)
        elif channel == 1:  # a potentiometer left at a quarter turn
            v = VREF * 0.25
        elif channel == 2:  # a photodiode that reads brighter while the LED is on
            v = 2.4 if self.led.level else 0.35
        else:               # a floating input: noise around mid-rail
            v = 1.6
        return v + random.uniform(-0.003, 0.003)


def build(world=None, bench=None):
    # bench: also wire the I2C bench (BME280, SHT3x, bus scan) and the allow-listed GPIO/PWM
    # pins. Off by default so the board shows exactly the CONTRACT surface; on with
    # `--bench` on the command line or TINYMCP_SIM_BENCH=1.
    world = world or SimWorld()
    if bench is None:
        bench = "--bench" in sys.argv or _env("TINYMCP_SIM_BENCH") == "1"
    instructions = "A simulated board: read its temperature sensor and ADC channels, switch its LED."
    if bench:  # boards/sim/simbench.py
        instructions += " Its I2C bus has a BME280 and an SHT3x."
        instructions += (" Outputs: an SSD1306 display (show_text; display://frame shows it), "
                         "an 8-pixel LED strip (set_pixels) and servos on GPIO 17 and 18. "
                         "Inputs: DS18B20 probes, an HC-SR04 and a DHT22.")
    # Who it is, for a bridge that finds boards by identity: --id ID or $TINYMCP_SIM_ID.
    server = Server("tinymcp-sim", "0.1.0", title="tinymcp simulated board",
                    instructions=instructions,
                    identity=_option("--id") or _env("TINYMCP_SIM_ID") or "sim")
    # The same drivers a Pico runs, over simulated parts.
    chip = internal.attach(server, internal.RP2040(sim.ADC(world.chip_volts, VREF), VREF))
    adc.attach(server, world.adcs)
    led.attach(server, led.Led(world.led))
    _attach_sample(server, lambda: chip.read()["celsius"])
    # Its temperature over time: a sample a second, the last five minutes (2.4 KiB).
    readings = history.History(period_ms=HISTORY_PERIOD_MS, depth=HISTORY_DEPTH)
    readings.track("temperature", lambda: chip.read()["celsius"], "Cel")
    if bench:
        _attach_bench(server, world, readings)
    history.attach(server, readings)
    events.attach(server)  # its alerts and changes for wait_for_event (a 16-event ring)
    return server


def _attach_sample(server, read):
    # A long tool: a generator the serve loop steps in its idle time, so the board answers
    # other requests meanwhile; a client may run it as a task (tinymcp/tasks.py).
    from tinymcp.schema import integer, number, string

    @server.tool("sample", "Sample the temperature for some seconds: how many readings, their "
                 "min, max and mean.",
                 inputs={"quantity": string("What to sample", enum=("temperature",)),
                         "seconds": number("How long to sample, in seconds", 1, 600),
                         "every_ms?": integer("Milliseconds between readings", 10, 60000,
                                              default=1000)},
                 outputs={"count": integer(), "min": number(), "max": number(),
                          "mean": number(), "unit": string()},
                 read_only=True, task="optional")
    def sample(quantity, seconds, every_ms):
        span = int(seconds * 1000)
        start = ticks_ms()
        count, due, low, high, mean = 0, 0, None, None, 0.0
        while True:
            elapsed = ticks_diff(ticks_ms(), start)
            if elapsed >= span:
                break
            if elapsed >= due:  # readings at 0, every_ms, 2 * every_ms ... before the end
                value = read()
                count += 1
                mean += (value - mean) / count  # a running mean stays exact enough in float32
                low = value if low is None or value < low else low
                high = value if high is None or value > high else high
                while due <= elapsed:
                    due += every_ms
            yield elapsed / span
        return {"count": count, "min": low, "max": high, "mean": mean, "unit": "Cel"}


def _attach_bench(server, world, readings):
    # The I2C bench and the GPIO pins (boards/sim/simbench.py, beside this file): loaded only
    # when asked for, so the board as CONTRACT shows it holds none of that code.
    try:
        import simbench
    except ImportError:  # this file not run as a script: its folder is not on the path
        here = globals().get("__file__", "")
        sys.path.append(here[:max(here.rfind("/"), here.rfind("\\"))] or ".")
        import simbench
    simbench.attach(server, world, readings)


def _env(name):
    try:
        import os
        return os.getenv(name)
    except (ImportError, AttributeError):  # boards without an environment
        return None


def _option(name):
    # The value after `name` on the command line, or None.
    args = sys.argv
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None


def _log(text):
    print(text, file=sys.stderr)


if __name__ == "__main__":
    from tinymcp.port import serve   # ports/, wherever this tinymcp keeps it
    listen_on = _option("--listen")
    broker = _option("--mqtt")
    if broker:  # through an MQTT broker: --mqtt mqtt://HOST:PORT [--name NAME] [--keepalive S]
        # mqtts:// also takes [--mqtt-cert FILE --mqtt-key FILE] (its client certificate: the
        # broker knows the board by it) and [--mqtt-ca FILE] (checks the broker's certificate)
        from ports.mqtt import serve as serve_mqtt
        keepalive = _option("--keepalive") or "60"
        try:
            if not keepalive.isdigit():
                raise ValueError("--keepalive wants whole seconds")
            serve_mqtt(build(), broker, _option("--name"), _option("--id"), int(keepalive), _log,
                       cert=_option("--mqtt-cert"), key=_option("--mqtt-key"),
                       ca=_option("--mqtt-ca"))
        except ValueError as e:
            _log("sim: " + str(e))
            sys.exit(2)
        except KeyboardInterrupt:
            pass
    elif listen_on:  # the board on the network: --listen HOST:PORT [--token TOKEN] [--no-mdns]
        from ports.tcp import listen   # announced over mDNS as _mcp._tcp unless --no-mdns
        host, _, port = listen_on.rpartition(":")
        try:
            listen(build(), host or "0.0.0.0", int(port), _option("--token"), _log,
                   advertise=False if "--no-mdns" in sys.argv else None)
        except KeyboardInterrupt:   # Ctrl-C (SIGINT): the goodbye has gone out
            pass
    else:
        serve(build())  # the MicroPython port collects garbage before its line buffer
