# Helpers for the sensor tests (both runtimes): a server to attach to, tool calls, fake ports.
import sys

from tests.core.support import initialize, result
from tinymcp import Server
from tinymcp.sensors import sim, simchips


def server():
    s = Server("sensor-test", "1")
    return s


def ready(s):
    initialize(s)
    return s


def call(s, name, arguments=None):
    return result(s, "tools/call", {"name": name, "arguments": arguments or {}})


def tools(s):
    return dict([(t["name"], t) for t in result(s, "tools/list")["tools"]])


def bench(**world):
    # A bus with a BME280 (Bosch example calibration) at 0x76 and an SHT3x at 0x44.
    values = {"celsius": 21.5, "rh": 45.0, "hpa": 1013.25}
    values.update(world)
    bme = simchips.BME280Chip(0x76, lambda: values)
    sht = simchips.SHT3xChip(0x44, lambda: values)
    return simchips.I2C(bme, sht), bme, sht, values


def raises(fn, kind=Exception):
    # -> the exception fn() raised (it must raise `kind`).
    try:
        fn()
    except kind as e:
        return e
    raise AssertionError("expected " + kind.__name__)


class StaticBus:
    # An I2C bus that allocates nothing: register reads copy from a preset bytearray. Used to
    # measure what a driver's read() itself allocates.
    def __init__(self, regs=None, reply=None):
        self.regs = regs or bytearray(256)
        self.reply = reply or bytearray(6)

    def readfrom_mem_into(self, addr, reg, buf, addrsize=8):
        regs = self.regs
        for i in range(len(buf)):
            buf[i] = regs[reg + i]

    def writeto_mem(self, addr, reg, buf, addrsize=8):
        pass

    def writeto(self, addr, buf, stop=True):
        return len(buf)

    def readfrom_into(self, addr, buf, stop=True):
        reply = self.reply
        for i in range(len(buf)):
            buf[i] = reply[i]


class FakeMachine:
    # Stand-ins for the `machine`, `rp2` and `esp32` modules, built from sim parts, so a real
    # board file's build() runs off the board. The I2C bus carries the given chips.
    def __init__(self, *chips):
        self.bus = simchips.I2C(*chips)
        self.pins = {}
        outer = self

        class Pin(sim.Pin):
            IN = 0
            OUT = 1
            PULL_UP = 1

            def __init__(self, id, mode=None, pull=None, value=None):
                sim.Pin.__init__(self, id, 1 if pull else (value or 0))
                outer.pins[id] = self

        class ADC:
            ATTN_11DB = 3

            def __init__(self, source):
                self.source = source
                self.atten_set = None

            def atten(self, a):
                self.atten_set = a

            def read_u16(self):
                return 13107  # 0.66 V of 3.3 V

            def read_uv(self):
                return 655000

        def I2C(id, sda=None, scl=None, freq=None):
            outer.i2c_args = (id, sda.id, scl.id, freq)
            return outer.bus

        class PWM(sim.PWM):
            pass

        self.Pin, self.ADC, self.I2C, self.PWM = Pin, ADC, I2C, PWM

    def install(self):
        sys.modules["machine"] = self
        sys.modules["esp32"] = self

    def uninstall(self):
        for name in ("machine", "esp32"):
            if sys.modules.get(name) is self:
                del sys.modules[name]

    def mcu_temperature(self):  # as esp32.mcu_temperature()
        return 41

    def unique_id(self):  # as machine.unique_id(): the flash chip's or the MAC's bytes
        return b"\xe6\x61\x4c\x0d\x13\x2a\x55\x2e"
