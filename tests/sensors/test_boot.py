# Safe boot: the button or a flag file skips serving; a failing build() never serves.
import os

from ports.micropython.boot import start
from ports.micropython.safeboot import skip_reason
from ports.micropython.idle import Idle
from tinymcp import Server
from tests.sensors.fakes import server

# Files in the working directory (the board's root), one name per process: pytest-xdist
# workers run these tests at once, beside the same file under MicroPython.
try:
    from os import getpid
    OWN = "-%d" % getpid()
except ImportError:   # MicroPython: one run per port at a time
    import sys
    OWN = "-" + sys.platform
FLAG = "tests_sensors_noserve%s.flag" % OWN


def _cleanup():
    try:
        os.remove(FLAG)
    except OSError:
        pass


def test_nothing_held_and_no_flag_means_serve():
    _cleanup()
    assert skip_reason(lambda: False, FLAG) is None
    assert skip_reason(None, FLAG) is None


def test_a_held_button_skips_serving():
    assert skip_reason(lambda: True, FLAG) == "button held at reset"


def test_an_unreadable_button_does_not_stop_serving():
    def broken():
        raise OSError(5)
    _cleanup()
    assert skip_reason(broken, FLAG) is None


def test_a_flag_file_skips_serving_until_removed():
    with open(FLAG, "w") as f:
        f.write("")
    try:
        assert "flag file" in skip_reason(None, FLAG)
        served = []
        assert start(server, flag=FLAG, serve=lambda s, stream: served.append(s)) == "skipped"
        assert served == []
    finally:
        _cleanup()
    assert skip_reason(None, FLAG) is None


def test_start_serves_what_build_returns():
    _cleanup()
    served = []

    def fake_serve(s, stream):
        served.append((s, stream))
        return "eof"
    assert start(server, flag=FLAG, stream="the-stream", serve=fake_serve) == "eof"
    assert served[0][1] == "the-stream" and served[0][0].info["name"] == "sensor-test"


def test_a_build_that_raises_leaves_the_repl_free():
    _cleanup()

    def broken_build():
        raise ValueError("typo in the board file")
    served = []
    assert start(broken_build, flag=FLAG, serve=lambda s, st: served.append(s)) == "build failed"
    assert served == []


def test_heartbeat_blinks_and_the_idle_hook_still_polls():
    polls = []

    class Led:
        level = 0

        def value(self, v):
            self.level = v

    class Dog:
        fed = 0

        def feed(self):
            self.fed += 1

    led = Led()
    dog = Dog()
    s = Server("t", "0")
    s.idle.append(lambda: polls.append(1))
    s.idle.append(Idle(led, dog, every_ms=0))
    s.poll()
    assert led.level == 1 and dog.fed == 1 and polls == [1]
    s.poll()
    assert led.level == 0 and dog.fed == 2 and len(polls) == 2


def test_start_installs_the_heartbeat_as_an_idle_hook_of_the_server():
    _cleanup()

    class Led:
        def value(self, v):
            self.v = v
    seen = []

    def fake_serve(s, stream):
        seen.extend(s.idle)
        s.poll()
        return "interrupt"
    assert start(server, flag=FLAG, heartbeat=Led(), serve=fake_serve) == "interrupt"
    assert isinstance(seen[-1], Idle)


def test_a_watchdog_is_fed_while_serving_and_by_a_timer_after_a_deliberate_exit():
    _cleanup()
    import sys
    made = []

    class WDT:
        def __init__(self, timeout):
            self.timeout = timeout
            self.fed = 0
            made.append(self)

        def feed(self):
            self.fed += 1

    class Timer:
        PERIODIC = 1

        def __init__(self, id):
            self.id = id
            made.append(self)

        def init(self, period, mode, callback):
            self.period, self.mode, self.callback = period, mode, callback

    class Machine:   # stands in for the machine module
        pass
    Machine.WDT = WDT
    Machine.Timer = Timer

    def fake_serve(s, stream):
        s.poll()
        s.poll()
        return "interrupt"
    had = sys.modules.get("machine")
    sys.modules["machine"] = Machine
    try:
        assert start(server, flag=FLAG, watchdog_ms=5000, serve=fake_serve) == "interrupt"
    finally:
        if had is None:
            del sys.modules["machine"]
        else:
            sys.modules["machine"] = had
    dog, timer = made
    assert dog.timeout == 5000 and dog.fed == 2          # fed by each idle poll
    assert timer.id == -1 and timer.period == 1000 and timer.mode == Timer.PERIODIC
    timer.callback(timer)
    assert dog.fed == 3                                  # and by the timer once serving ended


def write_settings(text):
    with open(WIFI, "w") as f:
        f.write(text)


WIFI = "tests_sensors_network%s.json" % OWN


def assert_refused(wifi, cases):
    # Each (file text, a word of the reason): refused, and the line says why.
    for text, says in cases:
        write_settings(text)
        found, why = wifi.settings(WIFI)
        assert found is None and says in why, (text, why)


def remove_settings():
    try:
        os.remove(WIFI)
    except OSError:
        pass


def test_network_settings_come_from_the_file_on_the_board():
    from ports.micropython import wifi
    try:
        assert wifi.settings(WIFI) == (None, None)  # no file: serve over USB
        write_settings('{"ssid": "lab", "password": "pw", "token": "0123456789abcdef"}')
        found, why = wifi.settings(WIFI)
        assert why is None and found["ssid"] == "lab" and found.get("port", wifi.PORT) == 8765
        assert_refused(wifi, (('{"ssid": "lab", "token": "short"}', "token"),
                              ('{"ssid": "lab"}', "token"),
                              ('{"token": "0123456789abcdef"}', "ssid"),
                              ('{"ssid": "lab", "token": "0123456789abcdef", "port": 0}', "port"),
                              ("{not json", "JSON")))
    finally:
        remove_settings()


def test_an_mqtt_section_serves_through_the_broker_and_is_checked():
    from ports.micropython import wifi
    try:
        write_settings('{"ssid": "lab", "password": "pw", '
                       '"mqtt": {"url": "mqtt://broker.lan", "username": "pico", "password": "s"}}')
        found, why = wifi.settings(WIFI)
        assert why is None and found["mqtt"]["url"] == "mqtt://broker.lan"  # no token needed
        assert_refused(wifi, (('{"ssid": "lab", "mqtt": "mqtt://broker.lan"}', "url"),
                              ('{"ssid": "lab", "mqtt": {"url": "http://broker.lan"}}', "mqtt://"),
                              ('{"ssid": "lab", "mqtt": {"url": "mqtt://b:99999"}}', "mqtt://"),
                              ('{"ssid": "lab", "mqtt": {"url": "mqtt://b", "id": "a/b"}}', "id"),
                              ('{"ssid": "lab", "mqtt": {"url": "mqtt://b", "password": 5}}',
                               "password")))
    finally:
        remove_settings()
