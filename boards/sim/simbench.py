# The sim board's optional bench (boards/sim/main.py's --bench, TINYMCP_SIM_BENCH=1): a BME280
# and an SHT3x on a simulated I2C bus with its scan, the allow-listed GPIO/PWM pins, humidity and
# pressure in the history, and clear_history behind a confirmation step. The output parts too
# (_attach_outputs): an SSD1306 panel on the bus, an 8-pixel WS2812 strip, a servo; and the input
# parts (_attach_inputs): two DS18B20 probes on one wire, an HC-SR04 and a DHT22
# (tinymcp/sensors/simparts_in.py).


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
    _attach_outputs(server, world)
    _attach_inputs(server, world)


def _attach_inputs(server, world):
    # The input parts, simulated at the level a board's driver meets them: bits on the one-wire
    # bus, a trigger and an echo pulse, the DHT's 5-byte frame.
    import math

    from tinymcp.clock import ticks_diff, ticks_ms
    from tinymcp.sensors import dhtxx, ds18b20, hcsr04, simparts_in
    start = ticks_ms()

    def tank():   # a probe in a tank of water that warms slowly, and one outside the window
        return 18.0 + 3.0 * math.sin(ticks_diff(ticks_ms(), start) / 600000.0)

    world.onewire = simparts_in.OneWireBus(
        simparts_in.DS18B20Probe(0x0000A1B2C3D4, tank),
        simparts_in.DS18B20Probe(0x0000A1B2C3E5, lambda: world.celsius() - 9.5))
    ds18b20.attach(server, ds18b20.DS18B20(world.onewire, wiring="simulated: DATA GP22"))

    def door():   # something that moves to and fro between 40 and 160 cm
        return 100.0 + 60.0 * math.sin(ticks_diff(ticks_ms(), start) / 20000.0)

    world.sonar = simparts_in.HCSR04Part(door, world.celsius)
    hcsr04.attach(server, hcsr04.HCSR04(world.sonar.trig, world.sonar.echo,
                                        world.sonar.time_pulse_us, celsius=world.celsius,
                                        wiring="simulated: TRIG GP14, ECHO GP15"))
    world.dht = simparts_in.DHTPart("dht22", world.air)
    dhtxx.attach(server, dhtxx.DHT(world.dht.pin, "dht22", world.dht.readinto,
                                   wiring="simulated: DATA GP2"))


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


STRIP_PIXELS = 8
SERVO_PINS = (17, 18)
SERVO_PULSE_US = (500, 2500)


def _attach_outputs(server, world):
    # The output drivers over simulated parts that decode what they are sent
    # (tinymcp/sensors/simparts_out.py), and what those parts show: display://frame (the panel as
    # a PNG) and sim://outputs (the strip's colours and the servos' pulses, as JSON).
    from tinymcp.sensors import servo, simparts_out, sim, ssd1306, ws2812
    try:
        import framebuf
    except ImportError:   # CPython: a stand-in that draws code cells, not a font
        from tinymcp.sensors import simframebuf as framebuf
    world.panel = world.i2c.add(simparts_out.SSD1306Panel(0x3C))
    ssd1306.attach(server, ssd1306.SSD1306(world.i2c, 0x3C, wiring="simulated",
                                           framebuf=framebuf))
    world.chain = simparts_out.WS2812Chain(STRIP_PIXELS)
    strip = simparts_out.NeoPixel(world.chain, STRIP_PIXELS)
    ws2812.attach(server, ws2812.Strip(strip, STRIP_PIXELS))
    pwm = dict([(n, sim.PWM(sim.Pin(n))) for n in SERVO_PINS])
    world.horns = dict([(n, simparts_out.ServoHorn(pwm[n], SERVO_PULSE_US)) for n in pwm])
    servo.attach(server, servo.Servos(pwm, SERVO_PULSE_US))
    panel = world.panel

    @server.resource("display://frame", "display", "What the SSD1306 panel shows: a 128x64 "
                     "1-bit PNG, lit pixels white", mime="image/png", title="Display",
                     watch=lambda **_: (panel.data_bytes, panel.inverse, panel.on))
    def frame():
        return panel.png()

    @server.resource("sim://outputs", "outputs", "The simulated output parts as they are now: "
                     "the strip's colours, each servo's pulse width and angle (null: detached)",
                     mime="application/json", title="Simulated outputs")
    def outputs():
        horns = world.horns
        return {"strip": world.chain.colours(),
                "servos": dict([(str(n), {"pulse_us": horns[n].pulse_us(),
                                          "angle": horns[n].angle()}) for n in horns])}
