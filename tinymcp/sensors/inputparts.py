# The input parts a board file's wiring block names (DS18B20 probes, HC-SR04, DHT): each made on
# its pins and attached, in one call the board makes only when one is fitted, so a board that
# fits none holds none of this (the bundled Pico and ESP32 boards, boards/*/main.py).


def attach(server, Pin, gpio, onewire_pin=None, trig=None, echo=None, dht_pin=None,
           dht_kind="dht22"):
    # Pin: machine.Pin; gpio: how the board's pins are named in advice ("GP" on a Pico).
    if onewire_pin is not None:
        import onewire
        from tinymcp.sensors import ds18b20
        bus = onewire.OneWire(Pin(onewire_pin))
        ds18b20.attach(server, ds18b20.DS18B20(bus, wiring="DATA %s%d, 4.7k pull-up to 3V3"
                                                             % (gpio, onewire_pin)))
    if trig is not None and echo is not None:
        from machine import time_pulse_us
        from tinymcp.sensors import hcsr04
        sonar = hcsr04.HCSR04(Pin(trig, Pin.OUT, value=0), Pin(echo, Pin.IN), time_pulse_us,
                              wiring="TRIG %s%d, ECHO %s%d" % (gpio, trig, gpio, echo))
        hcsr04.attach(server, sonar)
    if dht_pin is not None:
        from tinymcp.sensors import dhtxx   # it reads through MicroPython's dht module
        dhtxx.attach(server, dhtxx.DHT(Pin(dht_pin), dht_kind,
                                       wiring="DATA %s%d" % (gpio, dht_pin)))
