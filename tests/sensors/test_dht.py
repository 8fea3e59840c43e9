# DHT11 / DHT22 driver against the simulated parts (at dht_readinto's level): the frame, the
# checksum, the reading interval, the faults, and read_dht.
from tests.sensors.fakes import call, ready, raises, server, tools
from tinymcp.sensors.common import SensorError
from tinymcp.sensors.dhtxx import DHT, attach, decode
from tinymcp.sensors.simparts_in import DHTPart


class Clock:
    def __init__(self):
        self.now = 1000

    def __call__(self):
        return self.now


def part(kind="dht22", celsius=21.4, rh=48.2, **options):
    air = {"celsius": celsius, "rh": rh}
    clock = Clock()
    sim = DHTPart(kind, lambda: air, clock)
    sensor = DHT(sim.pin, kind, sim.readinto, **options)
    sensor.clock = clock
    return sensor, sim, air, clock


def test_dht22_frames_decode_as_the_datasheet_examples():
    # AM2302 datasheet: 0x028C -> 65.2 %RH, 0x015F -> 35.1 degC, 0x8065 -> -10.1 degC
    assert decode("dht22", bytearray((0x02, 0x8C, 0x01, 0x5F, 0xEE))) == (35.1, 65.2)
    assert decode("dht22", bytearray((0x02, 0x8C, 0x80, 0x65, 0x73))) == (-10.1, 65.2)
    assert decode("dht11", bytearray((45, 0, 23, 4, 72))) == (23.4, 45.0)
    assert decode("dht11", bytearray((45, 0, 3, 0x85, 0))) == (-3.5, 45.0)


def test_reads_recover_the_simulated_air():
    for celsius, rh in ((21.4, 48.2), (-12.3, 88.8), (0.0, 0.0), (79.9, 100.0)):
        sensor, _, _, _ = part("dht22", celsius, rh)
        assert sensor.read() == {"celsius": celsius, "rh": rh, "age_ms": 0}
    sensor, _, _, _ = part("dht11", 23.4, 45.4)
    assert sensor.read() == {"celsius": 23.4, "rh": 45.0, "age_ms": 0}   # DHT11: whole %RH
    sensor, _, _, _ = part("dht11", -5.5, 60.0)
    assert sensor.read()["celsius"] == -5.5


def test_a_read_within_the_interval_is_the_last_reading_with_its_age():
    for kind, interval in (("dht22", 2000), ("dht11", 1000)):
        sensor, sim, air, clock = part(kind, 20.0, 50.0)
        first = sensor.read()
        air["celsius"] = 25.0
        clock.now += interval - 1
        assert sensor.read() == {"celsius": 20.0, "rh": 50.0, "age_ms": interval - 1}
        assert sim.reads == 1          # the part was not woken
        clock.now += 1
        assert sensor.read() == {"celsius": 25.0, "rh": 50.0, "age_ms": 0}
        assert sim.reads == 2 and first["age_ms"] == 0


def test_the_simulated_part_does_not_answer_when_read_too_soon():
    # So a driver that ignored the interval would fail these tests instead of passing them.
    sensor, sim, _, clock = part()
    buf = bytearray(5)
    sim.readinto(sim.pin, buf)
    clock.now += 1999
    assert raises(lambda: sim.readinto(sim.pin, buf), OSError).args[0] == 110


def test_a_checksum_mismatch_is_an_error_never_a_value():
    sensor, sim, _, clock = part(wiring="DATA GP2")
    sim.corrupt = True
    text = str(raises(sensor.read, SensorError))
    assert "checksum mismatch" in text and "DATA GP2" in text
    sim.corrupt = False
    clock.now += 500   # too soon after that read: said, not a stale value
    assert "retry" in str(raises(sensor.read, SensorError))
    clock.now += 1500
    assert sensor.read()["celsius"] == 21.4


def test_a_silent_part_names_the_data_wire_and_the_pull_up():
    sensor, sim, _, _ = part(wiring="DATA GP2")
    sim.present = False
    text = str(raises(sensor.read, SensorError))
    assert "did not answer" in text and "DATA GP2" in text and "pull-up" in text


def test_a_dht11_read_as_a_dht22_is_caught():
    sim = DHTPart("dht11", lambda: {"celsius": 23.0, "rh": 45.0})
    sensor = DHT(sim.pin, "dht22", sim.readinto)
    assert "is this part a DHT11?" in str(raises(sensor.read, SensorError))


def test_read_dht_tool():
    sensor, sim, air, clock = part(wiring="DATA GP2")
    s = ready(server())
    attach(s, sensor)
    tool = tools(s)["read_dht"]
    assert sorted(tool["outputSchema"]["properties"]) == ["age_ms", "celsius", "rh", "units"]
    assert "2 s" in tool["description"]
    got = call(s, "read_dht")["structuredContent"]
    assert got == {"celsius": 21.4, "rh": 48.2, "units": {"celsius": "Cel", "rh": "%"},
                   "age_ms": 0}
    clock.now += 700
    assert call(s, "read_dht")["structuredContent"]["age_ms"] == 700
    clock.now += 2000
    sim.present = False
    failed = call(s, "read_dht")
    assert failed["isError"] is True and "did not answer" in failed["content"][0]["text"]
