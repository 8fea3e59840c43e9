# tinymcp-deploy --wifi: network.json on the board (its settings, never in the code), the board
# serving on the network after the reset, deploy checking it there with the token; --usb undoes it.
import json
import os
import shutil

import pytest

from tinymcp.host.deploy import main
from tests.deploy.fakeboard import MICROPYTHON, REPO
from tests.free_port import free_port

pytest.importorskip("mpremote", reason="tinymcp-deploy copies with mpremote: pip install mpremote")
TOKEN = "0123456789abcdef-token"


@pytest.fixture
def root(tmp_path):
    # The checkout plus the board with a simulated radio (boards/wifi).
    root = tmp_path / "repo"
    for top in ("tinymcp", "ports", "boards"):
        shutil.copytree(os.path.join(REPO, top), root / top,
                        ignore=shutil.ignore_patterns("__pycache__", "host"))
    shutil.copytree(os.path.join(REPO, "tinymcp", "host"), root / "tinymcp" / "host",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(os.path.join(REPO, "tests", "deploy", "wifiboard"), root / "boards" / "wifi")
    return str(root)


def deploy(root, board, tmp_path, *extra):
    return main(["--board", "wifi", "--port", board.port, "--build", str(tmp_path / "build"),
                 "--root", root] + list(extra))


def one_line_error(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tinymcp-deploy: "), err
    return err


@pytest.mark.skipif(MICROPYTHON is None, reason="the deployed board runs under micropython")
def test_deploy_for_wifi_writes_the_settings_and_checks_the_board_on_the_network(
        root, tmp_path, make_board, capsys):
    board = make_board(serving=False)
    port = free_port()
    assert deploy(root, board, tmp_path, "--wifi", "bench-lab", "--wifi-password", "pw",
                  "--board-token", TOKEN, "--listen-port", str(port)) == 0
    out = capsys.readouterr().out
    with open(board.fs.real("network.json")) as f:
        assert json.load(f) == {"ssid": "bench-lab", "password": "pw", "token": TOKEN,
                                "port": port}
    assert "ok: wifi-test-board 0.1.0 answers on 127.0.0.1:%d" % port in out
    assert TOKEN not in out  # a token given is never echoed
    assert "ports/tcp.mpy" in out and "ports/mqtt" not in out   # TCP: no MQTT client copied
    # and back to USB: the settings go, the board answers on its serial port
    usb = make_board(serving=False)
    shutil.copy(os.path.join(root, "boards", "sim", "main.py"), usb.fs.real("main.py"))
    with open(usb.fs.real("network.json"), "w") as f:
        f.write("{}")
    os.makedirs(usb.fs.real("ports"))
    with open(usb.fs.real("ports/tcp.mpy"), "wb") as f:   # from the deploy for Wi-Fi
        f.write(b"M\x06")
    assert main(["--board", "sim", "--port", usb.port, "--build", str(tmp_path / "b2"),
                 "--root", root, "--usb"]) == 0
    assert not os.path.exists(usb.fs.real("network.json"))
    out = capsys.readouterr().out
    assert "removed ports/tcp.mpy (not in this build)" in out   # USB only: no network code
    assert "answers on " + usb.port in out


def test_a_token_is_made_when_none_is_given_and_said_once(root, tmp_path, capsys):
    from tinymcp.host.deploy.network import settings
    import io
    said = io.StringIO()
    data, token = settings("lab", "pw", None, 8765, said)
    assert len(token) >= 16 and said.getvalue().count(token) == 1
    assert json.loads(data)["token"] == token


@pytest.mark.skipif(MICROPYTHON is None, reason="the deployed board runs under micropython")
def test_a_deploy_without_wifi_ships_the_network_code_the_boards_own_network_json_needs(
        root, tmp_path, make_board, capsys):
    # The board already holds a network.json (here one with an unusable "mqtt" section, so that
    # it falls back to USB and answers on its serial port): deploy reads it and ships the MQTT port.
    board = make_board(serving=False)
    with open(board.fs.real("network.json"), "w") as f:
        f.write('{"ssid": "lab", "mqtt": {"url": 5}}')
    assert deploy(root, board, tmp_path) == 0
    out = capsys.readouterr().out
    assert "Wi-Fi MQTT per network.json" in out
    for name in ("ports/micropython/wifi.mpy", "ports/tcp.mpy", "ports/mqtt.mpy", "ports/mqtt5.mpy"):
        assert os.path.exists(board.fs.real(name)), name
    assert "ok: wifi-test-board 0.1.0 answers on " + board.port in out
    # and without the file: no network code, what an earlier deploy left of it removed
    os.remove(board.fs.real("network.json"))
    assert deploy(root, board, tmp_path) == 0
    out = capsys.readouterr().out
    assert "USB: no network.json, no network code" in out
    assert "removed ports/mqtt.mpy (not in this build)" in out
    assert not os.path.exists(board.fs.real("ports/tcp.mpy"))
    assert "ok: wifi-test-board 0.1.0 answers on " + board.port in out


@pytest.mark.parametrize("args, says", [
    (["--wifi", "lab", "--board-token", "short"], "at least 16 characters"),
    (["--wifi", "", "--board-token", TOKEN], "SSID"),
    (["--wifi", "lab", "--board-token", TOKEN, "--listen-port", "70000"], "1..65535"),
    (["--wifi", "lab", "--usb"], "contradict"),
    (["--mqtt", "mqtt://broker.lan"], "--mqtt needs --wifi"),
    (["--wifi", "lab", "--mqtt", "http://broker.lan"], "mqtt://HOST[:PORT]"),
])
def test_bad_wifi_settings_are_one_line_errors_before_anything_is_written(root, tmp_path,
                                                                           capsys, args, says):
    assert main(["--board", "wifi", "--port", "/dev/null", "--root", root] + args) == 2
    assert says in one_line_error(capsys)


@pytest.mark.skipif(MICROPYTHON is None, reason="the deployed board runs under micropython")
def test_deploy_for_mqtt_writes_the_broker_and_sees_the_board_there(root, tmp_path, make_board,
                                                                    capsys, monkeypatch):
    from tests.mqtt.conftest import Broker
    broker = Broker(users={"lab-board": "broker-pw"})
    try:
        monkeypatch.setenv("TINYMCP_MQTT_USERNAME", "lab-board")
        monkeypatch.setenv("TINYMCP_MQTT_PASSWORD", "broker-pw")
        board = make_board(serving=False)
        assert deploy(root, board, tmp_path, "--wifi", "bench-lab", "--wifi-password", "pw",
                      "--mqtt", broker.url) == 0
        out = capsys.readouterr().out
        with open(board.fs.real("network.json")) as f:
            assert json.load(f) == {"ssid": "bench-lab", "password": "pw",
                                    "mqtt": {"url": broker.url, "username": "lab-board",
                                             "password": "broker-pw"}}
        assert ("ok: the board is on the MQTT broker 127.0.0.1:%d as tinymcp, server-name "
                "tinymcp/wifi-test-board" % broker.port) in out
        assert "broker-pw" not in out and "token" not in out  # no token for a broker
    finally:
        broker.stop()


@pytest.mark.skipif(MICROPYTHON is None, reason="the deployed board runs under micropython")
def test_deploy_for_mqtt_with_a_client_certificate_copies_it_and_the_broker_knows_the_board(
        root, tmp_path, make_board, capsys):
    # Mosquitto that wants a client certificate (its CN the board's id, docs/fleet.md): deploy
    # copies the board's certificate, key and CA beside network.json and names them there; the
    # board, under micropython, presents them and is on the broker.
    from tests.mqtt.conftest import Broker
    broker = Broker(mtls=True)
    try:
        cert, key = broker.certificate("tinymcp")
        board = make_board(serving=False)
        assert deploy(root, board, tmp_path, "--wifi", "bench-lab", "--wifi-password", "pw",
                      "--mqtt", broker.url, "--mqtt-cert", cert, "--mqtt-key", key,
                      "--mqtt-ca", broker.ca) == 0
        out = capsys.readouterr().out
        with open(board.fs.real("network.json")) as f:
            assert json.load(f)["mqtt"] == {"url": broker.url, "cert": "mqtt.crt",
                                            "key": "mqtt.key", "ca": "mqtt-ca.crt"}
        for name, path in (("mqtt.crt", cert), ("mqtt.key", key), ("mqtt-ca.crt", broker.ca)):
            with open(board.fs.real(name), "rb") as copied, open(path, "rb") as given:
                assert copied.read() == given.read(), name
        assert ("ok: the board is on the MQTT broker 127.0.0.1:%d as tinymcp, server-name "
                "tinymcp/wifi-test-board" % broker.port) in out
        assert "PRIVATE KEY" not in out
    finally:
        broker.stop()


@pytest.mark.parametrize("args, says", [
    (["--wifi", "lab", "--mqtt", "mqtt://broker.lan", "--mqtt-cert", "c.pem", "--mqtt-key",
      "k.pem"], "go with --mqtt mqtts://"),
    (["--wifi", "lab", "--mqtt", "mqtts://broker.lan", "--mqtt-cert", "c.pem"],
     "--mqtt-cert and --mqtt-key go together"),
    (["--wifi", "lab", "--mqtt", "mqtts://broker.lan", "--mqtt-cert", "/nonexistent.pem",
      "--mqtt-key", "/nonexistent.key"], "not a usable certificate, key and CA"),
])
def test_bad_mqtt_certificates_are_one_line_errors(root, capsys, args, says):
    assert main(["--board", "wifi", "--port", "/dev/null", "--root", root] + args) == 2
    assert says in one_line_error(capsys)
