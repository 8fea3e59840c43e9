# ADC channels: read_u16() readings and volts against a configurable reference.
#
#   channels = ADCChannels([ADC(26), ADC(27), ADC(28)], vref=3.3)
#   channels.read(1) -> {"raw": 20480, "volts": 1.0313}
#   attach(server, channels)   -> read_adc tool, channel 0..n-1
#
# calibrated=True takes volts from read_uv() (the ESP32's eFuse-calibrated reading) instead
# of scaling read_u16() by vref.
from tinymcp.sensors.common import SensorError


class ADCChannels:
    def __init__(self, adcs, vref=3.3, calibrated=False):
        self.adcs = list(adcs)   # index = channel number the tool offers
        self.vref = vref
        self.calibrated = calibrated

    def read(self, channel):
        if not 0 <= channel < len(self.adcs):
            raise SensorError("ADC channel " + str(channel) + " is not wired on this board "
                              "(channels 0.." + str(len(self.adcs) - 1) + ")")
        a = self.adcs[channel]
        try:
            raw = a.read_u16()
            if self.calibrated:
                return {"raw": raw, "volts": round(a.read_uv() / 1000000, 4)}
        except OSError as e:
            raise SensorError("ADC channel " + str(channel) + " failed to read: " + str(e))
        return {"raw": raw, "volts": round(raw * self.vref / 65535, 4)}


def attach(server, channels, tool="read_adc"):
    from tinymcp.schema import integer, number
    from tinymcp.sensors.common import reading, typed
    last = len(channels.adcs) - 1
    units = {"raw": "1", "volts": "V"}

    @server.tool(tool, "Read one 16-bit ADC channel (" + str(channels.vref) + " V reference).",
                 inputs={"channel": integer("ADC channel", 0, last)},
                 outputs=typed({"raw": integer("Raw reading, 0..65535", 0, 65535),
                                "volts": number("Voltage at the pin")}, units),
                 title="Read ADC channel", read_only=True, open_world=False)
    def read_adc(channel):
        return reading(channels.read(channel), units)

    return channels
