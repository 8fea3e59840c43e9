# The I2C bus scan and the parts usually found at each address: loaded by i2cscan's tool for
# each call (tinymcp.once, tinymcp/later.py) and released after it: a scan is a rare diagnostic.
from tinymcp.sensors.common import bus_fault

# The parts usually found at each address, as one str (one object instead of a dict of 15):
# ";", the address in two hex digits, the names, up to the next ";".
_LIKELY = (";23BH1750;29VL53L0X/TSL2591;38AHT20;3CSSD1306 display;3DSSD1306 display"
           ";40INA219/HTU21D/Si7021;44SHT3x;45SHT3x;48ADS1115/TMP102;50EEPROM;57EEPROM/MAX3010x"
           ";5CAM2320;62SCD4x;68MPU6050/DS3231;69MPU6050;76BME280/BMP280;77BME280/BMP280/BMP180;")


def likely(address):
    # -> the parts usually at this 7-bit address, or "unknown".
    at = _LIKELY.find(";%02X" % address)
    if at < 0:
        return "unknown"
    return _LIKELY[at + 3:_LIKELY.find(";", at + 1)]


def scan(server, i2c, wiring=""):
    # The scan_i2c tool's result (server: the first argument its loader passes, unused).
    try:
        found = i2c.scan()
    except OSError as e:
        raise bus_fault(e, "I2C scan", wiring)
    return {"addresses": found,
            "devices": [{"address": "0x%02x" % a, "likely": likely(a)}
                        for a in found]}
