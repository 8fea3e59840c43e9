# The board's LED, switched by a set_led tool.
#
#   attach(server, Led(Pin("LED", Pin.OUT)))   -> set_led


class Led:
    def __init__(self, pin, active_low=False):
        self.pin = pin
        self.active_low = active_low
        self.on = False
        pin.value(1 if active_low else 0)

    def set(self, on):
        self.pin.value(1 if on != self.active_low else 0)
        self.on = on
        return {"on": on}


def attach(server, led, tool="set_led"):
    from tinymcp.schema import boolean

    @server.tool(tool, "Switch the board's LED on or off.",
                 inputs={"on": boolean("true to light the LED")},
                 outputs={"on": boolean("The LED state now")},
                 title="Set LED", read_only=False, destructive=False, idempotent=True,
                 open_world=False)
    def set_led(on):
        return led.set(on)

    return led
