# The parts' held-RAM probes (issue 31), run by heap_probe.py drivers=1|KEY and inputs=1: what
# each output and input driver holds once a board attaches it. A module of its own so its code
# and names are compiled only for those runs, never before another probe's baseline.
import gc
import sys


def costs(opts, out, held, init, initialized):
    if opts["drivers"]:
        yield from driver_costs(opts, out, held)
    else:
        yield from input_costs(out, held, init, initialized)


def _ssd1306(server, machine):
    from tinymcp.sensors import ssd1306
    return ssd1306.attach(server, ssd1306.SSD1306(machine.I2C(0), 0x3C, framebuf=_framebuf()))


def _ws2812(server, machine):
    from tinymcp.sensors import ws2812
    from tinymcp.sensors.simparts_out import NeoPixel
    return ws2812.attach(server, ws2812.Strip(NeoPixel(None, 8), 8))


def _servo(server, machine):
    from tinymcp.sensors import servo
    return servo.attach(server, servo.Servos({17: machine.PWM(machine.Pin(17))}))


def _framebuf():
    try:
        import framebuf
    except ImportError:   # a build without it: the stand-in's FrameBuffer, a small object too
        from tinymcp.sensors import simframebuf as framebuf
    return framebuf


# (key, what is held, attach(server, machine) -> the driver): one driver's cost each, the stand-in
# parts (a NeoPixel's buffer aside, which the real module holds as well) imported first.
DRIVERS = (
    ("ssd1306", "SSD1306 128x64 display (show_text, clear_display; its 1 KiB frame)", _ssd1306),
    ("ws2812", "WS2812 strip of 8 pixels (set_pixels; the NeoPixel's 24 B buffer)", _ws2812),
    ("servo", "one servo (set_servo)", _servo),
)


def _fresh_qstr_pool():
    # Interns throwaway names until MicroPython allocates its next qstr pool (a jump of KiBs at
    # one name), so the drivers' own qstrs land in its free room: a pool allocated ahead for the
    # qstrs to come is nobody's cost (as in section h).
    class Names:
        pass
    for i in range(20000):
        before = gc.mem_alloc()
        getattr(Names, "probe_name_%d" % i, None)
        if gc.mem_alloc() - before > 1024:
            return i
    return None


def driver_costs(opts, out, held):
    # Each driver on a server that already has a tool (the tools registry is not its cost),
    # imported and attached after a baseline; what is common to drivers (sensors.common,
    # schema) loaded before it.
    from tinymcp import Server
    import tinymcp.schema  # noqa: F401
    import tinymcp.sensors.common  # noqa: F401
    import tinymcp.sensors.simparts_out  # noqa: F401  (stand-in parts, not billed)
    _framebuf()
    machine = sys.modules["machine"]
    if not hasattr(machine, "PWM"):
        import machine_standin as machine
    costs = []
    kept = []
    out["drivers_pool_after"] = _fresh_qstr_pool()
    for key, what, attach in DRIVERS:
        if opts["drivers"] not in ("1", key):
            continue
        server = Server("probe", "1")
        server.tool("ping_probe", "A tool")(lambda: {})
        base = yield from held()
        kept.append(attach(server, machine))
        costs.append([key, what, (yield from held()) - base])
        kept.append(server)
    out["drivers"] = costs


def input_costs(out, held, init, initialized):
    # Issue 31: what each input driver holds on a board that wires its part: the module imported,
    # the driver made and attached (its tool's record and schemas), then after a first read (the
    # probes' ROMs, the DHT's last reading). The simulated part, the server and what every driver
    # shares (common, schema, tasks for read_probes) are made before each baseline: a board has
    # the real part in C and the rest anyway.
    from tinymcp import Server
    from tinymcp.sensors import common, simparts_in  # noqa: F401
    import tinymcp.schema  # noqa: F401
    import tinymcp.tasks  # noqa: F401
    import tinymcp.tasktools  # noqa: F401
    found = {}
    for name in ("ds18b20", "hcsr04", "dhtxx"):
        server = Server("probe", "1")
        server.handle(init)
        server.handle(initialized)
        if name == "ds18b20":
            part = simparts_in.OneWireBus(simparts_in.DS18B20Probe(0xA1, lambda: 21.5),
                                          simparts_in.DS18B20Probe(0xA2, lambda: 19.0))
        elif name == "hcsr04":
            part = simparts_in.HCSR04Part(lambda: 80.0)
        else:
            part = simparts_in.DHTPart("dht22", lambda: {"celsius": 21.5, "rh": 45.0})
        base = yield from held()
        module = __import__("tinymcp.sensors." + name, None, None, ("attach",))
        imported = yield from held()
        if name == "ds18b20":
            driver = module.DS18B20(part, wiring="DATA GP22, 4.7k pull-up to 3V3")
        elif name == "hcsr04":
            driver = module.HCSR04(part.trig, part.echo, part.time_pulse_us,
                                   wiring="TRIG GP14, ECHO GP15")
        else:
            driver = module.DHT(part.pin, "dht22", part.readinto, wiring="DATA GP2")
        module.attach(server, driver)
        attached = yield from held()
        if name == "ds18b20":  # the search and a conversion, without its wait: what stays
            driver.scan()
            driver.convert()
            driver.collect()
        else:
            driver.read()
        read = yield from held()
        found[name] = {"module": imported - base, "attach": attached - imported,
                       "read": read - attached}
        del server, driver, module, part
    out["inputs"] = found
