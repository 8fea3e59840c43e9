# ESP32 DevKitC: the LED on GPIO2, ADC1 inputs, the chip's temperature sensor and a BME280 on
# I2C (SDA 21, SCL 22). Edit the wiring below to match your bench; only what is listed is offered.
import sys

if __name__ == "__main__":  # run from a checkout: the repo root holds tinymcp/ and ports/
    sys.path.append(globals().get("__file__", "").rsplit("boards", 1)[0] or ".")

from tinymcp import Server
from tinymcp.sensors import adc, i2cscan, internal, led

ADC_PINS = (36, 39, 34, 35)  # ADC1 only (ADC2 is unusable while Wi-Fi runs): VP, VN, 34, 35
VREF = 3.3                   # scale for read_u16 at 11 dB; read_uv() is used where it exists
LED = 2                      # the blue LED on most DevKitC clones (the original has none)
BOOT_BUTTON = 0              # GPIO0, low while BOOT is held
INPUTS = ()                  # GPIOs read_pin may read, pulled up, e.g. (27,)
OUTPUTS = ()                 # GPIOs write_pin may drive, e.g. (26,)
PWM_PINS = ()                # GPIOs set_pwm may drive, e.g. (25,)
I2C_BUS = (0, 21, 22)        # I2C0: SDA GPIO21, SCL GPIO22
WIRING = "SDA GPIO21, SCL GPIO22, 3V3, GND"
BME280_AT = 0x76             # None when not fitted (0x77 when its SDO pin is high)
SHT3X_AT = None              # e.g. 0x44 for an SHT31 board on the same bus
SSD1306_AT = None            # e.g. 0x3C for a 128x64 OLED on the same bus (0x3D: SA0 high)
SSD1306_HEIGHT = 64          # 32 for a 128x32 one
NEOPIXEL = None              # (GPIO, pixels) of a WS2812 strip's DIN, e.g. (13, 8): GPIO13
SERVO_PINS = ()              # GPIOs set_servo may drive, e.g. (18,): GPIO18
SERVO_PULSE_US = (500, 2500)  # the pulse at 0 and at 180 degrees, 50 Hz
ONEWIRE_PIN = None           # DS18B20 probes' DATA GPIO (4.7k pull-up to 3V3), e.g. 4
HCSR04_TRIG = None           # HC-SR04 TRIG GPIO, e.g. 5
HCSR04_ECHO = None           # its ECHO GPIO, e.g. 18 (a 5 V output: via a 1k/2k divider)
DHT_PIN = None               # a DHT22's (or DHT11's) DATA GPIO, e.g. 15
DHT_KIND = "dht22"           # or "dht11"


def build():
    import esp32
    from binascii import hexlify
    from machine import ADC, I2C, PWM, Pin, unique_id
    server = Server("tinymcp-esp32", "0.1.0", title="ESP32 DevKitC",
                    instructions="An ESP32 DevKitC on the bench: its chip temperature, ADC "
                                 "inputs, LED and the sensors on its I2C bus.",
                    identity="esp32-" + hexlify(bytes(unique_id())).decode())
    internal.attach(server, internal.ESP32(esp32))
    adcs = [ADC(Pin(n)) for n in ADC_PINS]
    for a in adcs:
        a.atten(ADC.ATTN_11DB)  # the widest input range, about 0.15..2.45 V calibrated
    adc.attach(server, adc.ADCChannels(adcs, VREF, calibrated=True))
    led.attach(server, led.Led(Pin(LED, Pin.OUT)))
    if INPUTS or OUTPUTS or PWM_PINS:  # drivers are imported only when fitted: less to copy
        from tinymcp.sensors import gpio
        gpio.attach(server, gpio.Pins(inputs={n: Pin(n, Pin.IN, Pin.PULL_UP) for n in INPUTS},
                                      outputs={n: Pin(n, Pin.OUT, value=0) for n in OUTPUTS},
                                      pwm={n: PWM(Pin(n)) for n in PWM_PINS}))
    i2c = I2C(I2C_BUS[0], sda=Pin(I2C_BUS[1]), scl=Pin(I2C_BUS[2]), freq=400000)
    i2cscan.attach(server, i2c, wiring=WIRING)
    if BME280_AT is not None:
        from tinymcp.sensors import bme280
        bme280.attach(server, bme280.BME280(i2c, BME280_AT, wiring=WIRING))
    if SHT3X_AT is not None:
        from tinymcp.sensors import sht3x
        sht3x.attach(server, sht3x.SHT3x(i2c, SHT3X_AT, wiring=WIRING))
    # The output parts (docs/boards.md). A strip and servos draw more than the 3V3 pin gives:
    # power them from 5 V (VBUS or their own supply), grounds joined.
    if SSD1306_AT is not None:
        from tinymcp.sensors import ssd1306
        ssd1306.attach(server, ssd1306.SSD1306(i2c, SSD1306_AT, SSD1306_HEIGHT, wiring=WIRING))
    if NEOPIXEL is not None:
        from neopixel import NeoPixel
        from tinymcp.sensors import ws2812
        ws2812.attach(server, ws2812.Strip(NeoPixel(Pin(NEOPIXEL[0]), NEOPIXEL[1]), NEOPIXEL[1]))
    servos = {n: PWM(Pin(n)) for n in SERVO_PINS}
    if servos:
        from tinymcp.sensors import servo
        servo.attach(server, servo.Servos(servos, SERVO_PULSE_US))
    if ONEWIRE_PIN is not None or HCSR04_TRIG is not None or DHT_PIN is not None:
        from tinymcp.sensors import inputparts   # loaded only when an input part is fitted
        inputparts.attach(server, Pin, "GPIO", ONEWIRE_PIN, HCSR04_TRIG, HCSR04_ECHO, DHT_PIN,
                          DHT_KIND)
    return server


def boot_button():
    from machine import Pin
    return Pin(BOOT_BUTTON, Pin.IN, Pin.PULL_UP).value() == 0


if __name__ == "__main__":
    from ports.micropython.boot import start
    start(build, button=boot_button)   # hold BOOT while pressing EN: REPL, no serving
