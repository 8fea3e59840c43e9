# Heap cost of one driver read() under MicroPython, against the cost of its result dict alone.
#   micropython tests/sensors/alloc_probe.py     (from the repo root; prints one JSON object)
import gc
import json
import sys

sys.path.insert(0, ".")

from tests.sensors.fakes import StaticBus  # noqa: E402
from tinymcp.sensors import simchips  # noqa: E402
from tinymcp.sensors.bme280 import BME280  # noqa: E402
from tinymcp.sensors.sht3x import SHT3x  # noqa: E402


def alloc(fn):
    # Bytes allocated by one fn() after a warm-up, with the collector off.
    fn()
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        fn()
        after = gc.mem_alloc()
    finally:
        gc.enable()
    return after - before


# Register images taken from the simulated chips, served by a bus that allocates nothing.
chip = simchips.BME280Chip(0x76)
BME280(simchips.I2C(chip)).read()
chip.regs[0xF3] = 0
bme = BME280(StaticBus(regs=chip.regs))
sht_chip = simchips.SHT3xChip(0x44)
sht_chip.write(b"\x24\x00")
sht = SHT3x(StaticBus(reply=sht_chip.out))

A, B, C = 2150, 4500, 101325


def bme_result():
    return {"celsius": A / 100, "rh": B / 100, "hpa": C / 100}


def sht_result():
    return {"celsius": A / 100, "rh": B / 100}


out = {"impl": sys.implementation.name,
       "word_bits": 64 if sys.maxsize > 2 ** 32 else 32,
       "bme280_read": alloc(bme.read), "bme280_result_only": alloc(bme_result),
       "sht3x_read": alloc(sht.read), "sht3x_result_only": alloc(sht_result),
       "bme280_value": bme.read(), "sht3x_value": sht.read()}
print(json.dumps(out))
