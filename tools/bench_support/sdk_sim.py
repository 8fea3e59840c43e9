# The sim board's three tools and its resource on the official SDK's MCPServer, for the benchmark.
#
# Typed return values (TypedDict) make the SDK build an outputSchema and structuredContent,
# so it does the same structured-output work as tinymcp's sim board.
import math
import random
import time
from typing import Annotated, TypedDict

from pydantic import Field

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

VREF = 3.3
_start = time.monotonic()


class Temperature(TypedDict):
    celsius: float


class AdcReading(TypedDict):
    raw: int
    volts: float


class LedState(TypedDict):
    on: bool


class SimParts:
    led = False

    def temperature(self):
        t = time.monotonic() - _start
        base = 22.0 + 2.0 * math.sin(t / 48.0) + 0.3 * math.sin(t / 1.1)
        return round(base + random.uniform(-0.02, 0.02), 2)

    def adc(self, channel):
        t = time.monotonic() - _start
        volts = (1.65 + 1.2 * math.sin(t * 2.0), VREF * 0.25, 2.4 if self.led else 0.35, 1.6)[channel]
        volts = min(VREF, max(0.0, volts + random.uniform(-0.003, 0.003)))
        raw = int(volts / VREF * 65535 + 0.5)
        return raw, round(raw * VREF / 65535, 4)


parts = SimParts()
server = MCPServer("sdk-sim", version="0.1.0", title="SDK simulated board",
                   instructions="A simulated board: read its temperature "
                                "sensor and ADC channels, switch its LED.")


@server.tool(name="read_temperature", title="Read temperature",
             description="Read the board's temperature sensor in degrees Celsius.",
             annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
def read_temperature() -> Temperature:
    return {"celsius": parts.temperature()}


@server.tool(name="read_adc", title="Read ADC channel",
             description="Read one 16-bit ADC channel (3.3 V reference).",
             annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
def read_adc(channel: Annotated[int, Field(ge=0, le=3, description="ADC channel")]) -> AdcReading:
    raw, volts = parts.adc(channel)
    return {"raw": raw, "volts": volts}


@server.tool(name="set_led", title="Set LED", description="Switch the board's LED on or off.",
             annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False,
                                         idempotentHint=True, openWorldHint=False))
def set_led(on: Annotated[bool, Field(description="true to light the LED")]) -> LedState:
    parts.led = on
    return {"on": on}


@server.resource("sensor://temperature", name="temperature", title="Board temperature",
                 description="The temperature sensor's latest reading", mime_type="application/json")
def temperature_resource() -> dict:
    return {"celsius": parts.temperature()}


if __name__ == "__main__":
    server.run("stdio")
