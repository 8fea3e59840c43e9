# Resources: exact URIs and templates (no path semantics), reads, subscriptions, list changes.
import binascii
import json

from tests.core.support import error, initialize, notifications, result
from tinymcp import Server
from tinymcp.echo import shown


def board():
    server = Server("res", "0")
    state = {"t": 21.5}

    @server.resource("sensor://temperature", "temperature", "Latest reading",
                     mime="application/json", title="Temperature", watch=lambda: state["t"])
    def temperature():
        return {"celsius": state["t"]}

    @server.resource("file://notes.txt", "notes", mime="text/plain")
    def notes():
        return "hello"

    @server.resource("blob://calibration", "calibration")
    def calibration():
        return b"\x00\x01\xfe\xff"

    @server.resource("sensor://adc/{channel}/raw", "adc", "One ADC channel",
                     mime="application/json", complete={"channel": ("0", "1", "2", "3")})
    def adc(channel):
        return {"channel": channel}

    server.state = state
    initialize(server)
    return server


def test_lists_static_resources_and_templates_separately():
    server = board()
    listed = result(server, "resources/list")["resources"]
    assert [r["uri"] for r in listed] == ["sensor://temperature", "file://notes.txt",
                                          "blob://calibration"]
    assert listed[0] == {"uri": "sensor://temperature", "name": "temperature",
                         "title": "Temperature", "description": "Latest reading",
                         "mimeType": "application/json"}
    templates = result(server, "resources/templates/list")["resourceTemplates"]
    assert templates == [{"uriTemplate": "sensor://adc/{channel}/raw", "name": "adc",
                          "description": "One ADC channel", "mimeType": "application/json"}]


def test_read_text_json_and_blob():
    server = board()
    text = result(server, "resources/read", {"uri": "file://notes.txt"})["contents"]
    assert text == [{"uri": "file://notes.txt", "mimeType": "text/plain", "text": "hello"}]
    data = result(server, "resources/read", {"uri": "sensor://temperature"})["contents"][0]
    assert data["mimeType"] == "application/json" and data["text"] == '{"celsius":21.5}'
    blob = result(server, "resources/read", {"uri": "blob://calibration"})["contents"][0]
    assert binascii.a2b_base64(blob["blob"].encode()) == b"\x00\x01\xfe\xff"
    assert blob["mimeType"] == "application/octet-stream" and "text" not in blob


def test_templates_match_whole_segments_and_percent_decode():
    server = board()
    read = result(server, "resources/read", {"uri": "sensor://adc/2/raw"})
    assert read["contents"][0]["uri"] == "sensor://adc/2/raw"
    assert read["contents"][0]["text"] == '{"channel":"2"}'
    read = result(server, "resources/read", {"uri": "sensor://adc/a%20b/raw"})
    assert read["contents"][0]["text"] == '{"channel":"a b"}'


def test_unknown_and_traversal_uris_are_not_found():
    server = board()
    for uri in ("sensor://nope", "sensor://adc//raw", "sensor://adc/../../etc/passwd/raw",
                "sensor://adc/1/raw/extra", "file://../notes.txt", "file://notes.txt/",
                "SENSOR://temperature", ""):
        err = error(server, "resources/read", {"uri": uri})
        assert err["code"] == -32002, uri
        assert err.get("data") == echoed(uri), uri   # quoted back only when it could be a URI


def test_subscribed_resources_report_changes_from_the_serve_loop():
    server = board()
    assert result(server, "resources/subscribe", {"uri": "sensor://temperature"}) == {}
    notifications(server)
    server.poll()
    assert notifications(server) == []  # unchanged: nothing to say
    server.state["t"] = 22.0
    server.poll()
    updates = notifications(server, "notifications/resources/updated")
    assert [u["params"] for u in updates] == [{"uri": "sensor://temperature"}]
    server.poll()
    assert notifications(server) == []
    result(server, "resources/unsubscribe", {"uri": "sensor://temperature"})
    server.state["t"] = 23.0
    server.poll()
    assert notifications(server) == []


def test_resource_updated_pushes_only_to_subscribers():
    server = board()
    server.resource_updated("file://notes.txt")
    assert notifications(server) == []
    result(server, "resources/subscribe", {"uri": "file://notes.txt"})
    server.resource_updated("file://notes.txt")
    assert len(notifications(server, "notifications/resources/updated")) == 1


def test_a_failing_read_says_which_resource_and_why():
    server = board()

    def broken():
        raise OSError("BME280 at 0x76 did not answer: check its wiring")
    server.resource("sensor://broken", "broken")(broken)
    err = error(server, "resources/read", {"uri": "sensor://broken"})
    assert err["code"] == -32603
    assert err["message"] == "Reading sensor://broken failed: BME280 at 0x76 did not answer: check its wiring"
    assert result(server, "resources/read", {"uri": "file://notes.txt"})["contents"][0]["text"] == "hello"


def test_subscribing_to_an_unknown_resource_is_not_found():
    assert error(board(), "resources/subscribe", {"uri": "sensor://nope"})["code"] == -32002


def test_template_uris_can_be_subscribed():
    server = board()
    assert result(server, "resources/subscribe", {"uri": "sensor://adc/1/raw"}) == {}


def test_adding_a_resource_after_initialize_announces_list_changed():
    server = board()
    notifications(server)
    server.resource("x://new", "new")(lambda: "n")
    assert len(notifications(server, "notifications/resources/list_changed")) == 1


def test_a_new_session_forgets_subscriptions():
    server = board()
    result(server, "resources/subscribe", {"uri": "sensor://temperature"})
    initialize(server)
    server.state["t"] = 30.0
    server.poll()
    assert notifications(server, "notifications/resources/updated") == []


# -- template values are whole decoded segments (issue 26) -------------------------------------

def test_a_template_value_is_decoded_only_after_the_uri_is_split():
    server = board()
    for raw, value in (("a%20b", "a b"), ("%C3%A9t%C3%A9", "\u00e9t\u00e9"), ("x.y", "x.y"),
                       ("...", "..."), ("%2e%2e%2e", "..."), ("a%25", "a%")):
        read = result(server, "resources/read", {"uri": "sensor://adc/" + raw + "/raw"})
        assert json.loads(read["contents"][0]["text"]) == {"channel": value}, raw


def test_a_template_value_holding_a_path_is_refused_with_invalid_params():
    server = board()
    for raw in ("..%2F..%2Fnetwork.json", "%2Fabs%2Fpath", "%2fetc", "a%5Cb", "%5C%5Cserver",
                "a%00b", "%00", "..", ".", "%2E%2E", "%2e", "a\\b", "%2E%2E%2F"):
        uri = "sensor://adc/" + raw + "/raw"
        err = error(server, "resources/read", {"uri": uri})
        assert err["code"] == -32602, (raw, err)
        assert err["message"].startswith("Invalid params: {channel} "), err
        assert err.get("data") == echoed(uri), uri   # quoted back only when it could be a URI
        assert error(server, "resources/subscribe", {"uri": uri})["code"] == -32602


def test_a_bad_percent_escape_is_invalid_params_without_internals():
    server = board()
    for raw in ("%ff", "%C3", "%e9t%e9", "%zz", "a%", "a%4", "%%41", "%G0", "%ed%a0%80"[:3]):
        uri = "sensor://adc/" + raw + "/raw"
        err = error(server, "resources/read", {"uri": uri})
        assert err["code"] == -32602, (raw, err)
        message = err["message"]
        assert message.startswith("Invalid params: {channel} "), message
        for internal in ("codec", "can't", "position", "Error", "0x"):
            assert internal not in message, message


def test_a_uri_no_template_fits_is_still_not_found():
    server = board()
    for uri in ("sensor://adc/a/b/raw", "sensor://adc/%2F", "sensor://adc/raw"):
        assert error(server, "resources/read", {"uri": uri})["code"] == -32002, uri


def echoed(uri):
    # the data of an error about uri: the URI itself when tinymcp/echo.py lets it be quoted back
    return {"uri": uri} if shown(uri) == uri else None
