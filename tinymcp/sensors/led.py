# The board's LED, switched by a set_led tool; off is its safe state (tinymcp/leases.py).
#
#   attach(server, Led(Pin("LED", Pin.OUT)))   -> set_led {"on", "lease_s"?}


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

    def safe(self, key=None):
        self.set(False)


def attach(server, led, tool="set_led"):
    from tinymcp.schema import boolean
    from tinymcp.sensors.common import lease, lease_schemas, with_lease
    leased = lease_schemas("the LED")

    @server.tool(tool, "Switch the board's LED on or off. With lease_s it goes off by itself "
                 "unless switched on again within that time.",
                 inputs={"on": boolean("true to light the LED"), "lease_s?": leased[0]},
                 outputs={"on": boolean("The LED state now"), "lease_s?": leased[1]},
                 title="Set LED", read_only=False, destructive=False, idempotent=True,
                 open_world=False)
    def set_led(on, lease_s=None):
        left = lease(server, led, None, lease_s, not on)
        return with_lease(led.set(on), left)

    return led
