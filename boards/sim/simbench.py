# The sim board's optional bench (boards/sim/main.py's --bench, TINYMCP_SIM_BENCH=1): a BME280
# and an SHT3x on a simulated I2C bus with its scan, the allow-listed GPIO/PWM pins, humidity and
# pressure in the history, and clear_history behind a confirmation step.


def attach(server, world, readings):
    from tinymcp.sensors import bme280, gpio, i2cscan, sht3x, simchips
    gpio.attach(server, gpio.Pins(inputs={14: world.button}, outputs={15: world.relay},
                                  pwm={16: world.fan}))
    world.i2c = simchips.I2C(simchips.BME280Chip(0x76, world.air),
                             simchips.SHT3xChip(0x44, world.air))
    i2cscan.attach(server, world.i2c, wiring="simulated")
    world.bme280 = bme280.attach(server, bme280.BME280(world.i2c, 0x76))
    world.sht3x = sht3x.attach(server, sht3x.SHT3x(world.i2c, 0x44))
    readings.track("humidity", lambda: world.sht3x.read()["rh"], "%")
    readings.track("pressure", lambda: world.bme280.read()["hpa"], "hPa")
    _clear_history(server, readings)


def _clear_history(server, readings):
    # A destructive tool behind a confirmation step (tinymcp/confirm.py).
    from tinymcp.confirm import PENDING, TOKEN, Confirmations
    from tinymcp.schema import integer, string
    asks = Confirmations()

    @server.tool("clear_history", "Delete every sample of a quantity the board keeps. Asks "
                 "first: the call answers what it would delete and a token; repeat it with "
                 "confirm=token to delete (or the user is asked, where the client can).",
                 inputs={"quantity": string("A sampled quantity",
                                            enum=[q.name for q in readings.quantities]),
                         "confirm?": TOKEN},
                 outputs={"cleared?": integer("Samples deleted"), "confirm?": PENDING},
                 title="Clear history", read_only=False, destructive=True, idempotent=False,
                 open_world=False, ctx=True)
    def clear_history(ctx, quantity, confirm=None):
        found = readings.find(quantity)
        pending = asks.check(ctx, ("clear_history", quantity), confirm, "Delete the "
                             + str(found.count) + " " + quantity + " samples kept on the board")
        return pending or {"cleared": found.clear()}
