# DS18B20 driver against simulated probes on a bit-level one-wire bus: the search, the CRC, the
# datasheet's temperature format, the conversion time, faults, and read_probes as a long tool.
import json

from tests.core.support import frame, initialize, notifications, result
from tests.sensors.fakes import raises, server, tools
from tinymcp.clock import sleep_ms
from tinymcp.sensors.common import SensorError
from tinymcp.sensors.ds18b20 import DS18B20, attach, crc8, decode, rom_hex
from tinymcp.sensors.simparts_in import DS18B20Probe, OneWireBus, dallas_crc, encode

# Datasheet table 1: temperature -> the 16-bit register (12 bits).
TABLE_1 = ((125.0, 0x07D0), (85.0, 0x0550), (25.0625, 0x0191), (10.125, 0x00A2), (0.5, 0x0008),
           (0.0, 0x0000), (-0.5, 0xFFF8), (-10.125, 0xFF5E), (-25.0625, 0xFE6F), (-55.0, 0xFC90))


def probes(*temperatures):
    # One probe per temperature, serials that share long prefixes (the search must fork late).
    found = [DS18B20Probe(0x00000A0B0C00 + (1 << i) + (i << 40), lambda t=t: t)
             for i, t in enumerate(temperatures)]
    return OneWireBus(*found), found


def test_crc8_matches_the_application_note_example_and_the_polynomial_division():
    rom = bytearray((0x02, 0x1C, 0xB8, 0x01, 0x00, 0x00, 0x00, 0xA2))  # Maxim AN27's example
    assert crc8(rom, 7) == 0xA2 and crc8(rom) == 0 and dallas_crc(rom[:7]) == 0xA2
    for seed in range(40):
        data = bytes((seed * 37 + i * 11) & 0xFF for i in range(1 + seed % 9))
        assert crc8(data) == dallas_crc(data), data


def test_the_register_decodes_as_the_datasheet_table_says():
    for celsius, raw in TABLE_1:
        assert decode(raw & 0xFF, raw >> 8) == celsius, (celsius, hex(raw))
        assert encode(celsius) == raw   # the simulated probe's own encoding agrees with it


def test_below_12_bits_the_undefined_low_bits_are_dropped():
    # 9 bits: 0.5 degC steps; bits 2..0 undefined (here set: they must not count)
    assert decode(0xA7, 0x00, 0x1F) == 10.0 and decode(0xA7, 0x00, 0x7F) == 10.4375
    assert decode(0x5E, 0xFF, 0x3F) == -10.25   # 10 bits: 0.25 degC steps


def test_the_search_finds_every_probe_on_the_bus():
    bus, found = probes(20.0, 21.0, 22.0, 23.0, 24.0)
    roms = DS18B20(bus).scan()
    assert sorted(roms) == sorted(p.rom for p in found)
    for rom in roms:
        assert rom[0] == 0x28 and crc8(rom) == 0
    one_bus, (one,) = probes(20.0)
    assert DS18B20(one_bus).scan() == [one.rom]


def test_each_probe_reports_its_own_temperature_after_its_conversion():
    bus, found = probes(21.5, -10.125, 85.0, 0.0625)
    readings = DS18B20(bus).read()
    by_rom = dict((r["rom"], r["celsius"]) for r in readings)
    assert by_rom == dict((rom_hex(p.rom), p.celsius()) for p in found)
    assert all(p.conversions == 1 for p in found)


def test_a_read_before_the_conversion_ends_holds_the_power_up_value():
    # The probe behaves as the datasheet says, so a driver that did not wait would report 85.
    bus, (probe,) = probes(21.5)
    sensor = DS18B20(bus)
    sensor.scan()
    sensor.convert()
    assert sensor.collect() == [{"rom": rom_hex(probe.rom), "celsius": 85.0}]
    assert sensor.read() == [{"rom": rom_hex(probe.rom), "celsius": 21.5}]


def test_a_lower_resolution_is_written_and_converts_faster():
    bus, found = probes(23.3, -4.9)
    sensor = DS18B20(bus, resolution=9)
    assert sensor.conversion_ms == 94  # datasheet table 2: 93.75 ms
    readings = sensor.read()
    assert [p.bits() for p in found] == [9, 9]
    assert sorted(r["celsius"] for r in readings) == [-5.0, 23.5]


def test_no_presence_pulse_names_the_pull_up_and_the_data_pin():
    bus, (probe,) = probes(20.0)
    probe.present = False
    e = raises(DS18B20(bus, wiring="DATA GP22").read, SensorError)
    text = str(e)
    assert "no presence pulse" in text and "4.7 kOhm pull-up" in text and "DATA GP22" in text


def test_a_line_held_low_is_a_missing_pull_up():
    bus, _ = probes(20.0)
    bus.stuck_low = True
    assert "stays low" in str(raises(DS18B20(bus, wiring="DATA GP22").read, SensorError))


def test_a_corrupted_scratchpad_is_an_error_never_a_value():
    bus, (probe,) = probes(20.0)
    sensor = DS18B20(bus, resolution=9)
    probe.corrupt = True
    e = raises(sensor.read, SensorError)
    assert "CRC mismatch" in str(e) and rom_hex(probe.rom) in str(e) and "pull-up" in str(e)
    probe.corrupt = False
    assert sensor.read()[0]["celsius"] == 20.0


def board(*temperatures, **options):
    bus, found = probes(*temperatures)
    s = server()
    attach(s, DS18B20(bus, **options))
    initialize(s)
    return s, bus, found


def finish(s, rid):
    # Steps the board's long tools as its serve loop would, until the call rid is answered.
    for _ in range(500):
        work = s.session.work
        if work is not None and work.live:
            work.step(s)
        for msg in notifications(s):
            if msg.get("id") == rid:
                return msg
        sleep_ms(5)
    raise AssertionError("no answer to call " + str(rid))


def test_read_probes_is_a_long_tool_that_leaves_the_board_answering():
    s, _, found = board(19.5, 22.25, resolution=10)
    tool = tools(s)["read_probes"]
    assert tool["execution"]["taskSupport"] == "optional"
    assert tool["annotations"]["readOnlyHint"] is True
    assert s.handle(frame("tools/call", {"name": "read_probes", "arguments": {}}, 7)) is None
    assert json.loads(s.handle(frame("ping", None, 8)))["result"] == {}  # meanwhile
    answer = finish(s, 7)["result"]
    got = answer["structuredContent"]
    assert sorted((p["rom"], p["celsius"]) for p in got["probes"]) == \
        sorted((rom_hex(p.rom), p.celsius()) for p in found)
    assert got["units"] == {"celsius": "Cel"} and "isError" not in answer


def test_calls_that_overlap_share_one_conversion():
    s, _, found = board(21.0, 22.0, resolution=9)
    assert s.handle(frame("tools/call", {"name": "read_probes", "arguments": {}}, 11)) is None
    s.session.work.step(s)   # the first call's search and conversion
    assert s.handle(frame("tools/call", {"name": "read_probes", "arguments": {}}, 12)) is None
    answers = {}
    for _ in range(500):
        if not s.session.work.live:
            break
        s.session.work.step(s)
        for msg in notifications(s):
            answers[msg.get("id")] = msg["result"]["structuredContent"]["probes"]
        sleep_ms(5)
    for msg in notifications(s):
        answers[msg.get("id")] = msg["result"]["structuredContent"]["probes"]
    assert sorted(p["celsius"] for p in answers[11]) == [21.0, 22.0]
    assert answers[12] == answers[11]
    assert [p.conversions for p in found] == [1, 1]


def test_read_probes_as_a_task_ends_with_the_readings():
    s, _, _ = board(30.0, resolution=9)
    created = result(s, "tools/call", {"name": "read_probes", "arguments": {}, "task": {}}, 3)
    tid = created["task"]["taskId"]
    for _ in range(500):
        if not s.session.work.live:
            break
        s.session.work.step(s)
        sleep_ms(5)
    assert result(s, "tasks/get", {"taskId": tid}, 4)["status"] == "completed"
    done = result(s, "tasks/result", {"taskId": tid}, 5)
    assert done["structuredContent"]["probes"][0]["celsius"] == 30.0


def test_a_silent_bus_is_an_is_error_result_naming_the_wiring():
    s, bus, found = board(20.0)
    found[0].present = False
    assert s.handle(frame("tools/call", {"name": "read_probes", "arguments": {}}, 9)) is None
    failed = finish(s, 9)["result"]
    assert failed["isError"] is True
    assert "no presence pulse" in failed["content"][0]["text"]
    assert "4.7 kOhm pull-up" in failed["content"][0]["text"]
    found[0].present = True   # wired again: the next call reads
    assert s.handle(frame("tools/call", {"name": "read_probes", "arguments": {}}, 10)) is None
    assert finish(s, 10)["result"]["structuredContent"]["probes"][0]["celsius"] == 20.0


def test_a_corrupted_reading_is_an_is_error_result():
    s, _, found = board(20.0, resolution=9)
    found[0].corrupt = True
    assert s.handle(frame("tools/call", {"name": "read_probes", "arguments": {}}, 2)) is None
    failed = finish(s, 2)["result"]
    assert failed["isError"] is True and "CRC mismatch" in failed["content"][0]["text"]
