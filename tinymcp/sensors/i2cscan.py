# An I2C bus scan tool, naming the parts that usually live at each address found. Only the
# registration is held: the scan and the part names (tinymcp/sensors/i2cparts.py) are loaded
# for each call and released after it.


def attach(server, i2c, tool="scan_i2c", bus="I2C", wiring=""):
    from tinymcp import once
    from tinymcp.schema import array, integer, obj, string

    @server.tool(tool, "List the addresses that answer on the board's " + bus + " bus, with the "
                 "parts usually found there.",
                 outputs={"addresses": array(integer(None, 0, 127), "7-bit addresses that ACKed"),
                          "devices": array(obj({"address": string(), "likely": string()}))},
                 title="Scan " + bus + " bus", read_only=True, open_world=False)
    def scan_i2c():
        return once("tinymcp.sensors.i2cparts.scan", server, i2c, wiring)

    return i2c
