# An I2C bus scan, naming the parts that usually live at each address found.
from tinymcp.sensors.common import bus_fault

LIKELY = {0x23: "BH1750", 0x29: "VL53L0X/TSL2591", 0x38: "AHT20", 0x3C: "SSD1306 display",
          0x3D: "SSD1306 display", 0x40: "INA219/HTU21D/Si7021", 0x44: "SHT3x", 0x45: "SHT3x",
          0x48: "ADS1115/TMP102", 0x50: "EEPROM", 0x57: "EEPROM/MAX3010x", 0x5C: "AM2320",
          0x62: "SCD4x", 0x68: "MPU6050/DS3231", 0x69: "MPU6050", 0x76: "BME280/BMP280",
          0x77: "BME280/BMP280/BMP180"}


def scan(i2c, wiring=""):
    try:
        found = i2c.scan()
    except OSError as e:
        raise bus_fault(e, "I2C scan", wiring)
    return {"addresses": found,
            "devices": [{"address": "0x%02x" % a, "likely": LIKELY.get(a, "unknown")}
                        for a in found]}


def attach(server, i2c, tool="scan_i2c", bus="I2C", wiring=""):
    from tinymcp.schema import array, integer, obj, string

    @server.tool(tool, "List the addresses that answer on the board's " + bus + " bus, with the "
                 "parts usually found there.",
                 outputs={"addresses": array(integer(None, 0, 127), "7-bit addresses that ACKed"),
                          "devices": array(obj({"address": string(), "likely": string()}))},
                 title="Scan " + bus + " bus", read_only=True, open_world=False)
    def scan_i2c():
        return scan(i2c, wiring)

    return i2c
