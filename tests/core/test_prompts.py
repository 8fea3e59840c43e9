# Prompts: listing, filling arguments, and the errors for missing or unknown ones.
from tests.core.support import error, initialize, result
from tinymcp import Server


def prompts():
    server = Server("p", "0")

    @server.prompt("diagnose", "Check a sensor", args={"sensor": "Which sensor", "detail?": "How deep"},
                   title="Diagnose")
    def diagnose(sensor, detail="brief"):
        return "Check the " + sensor + " sensor (" + detail + ")."

    @server.prompt("chat", "Two messages")
    def chat():
        return ["hello", {"role": "assistant", "content": {"type": "text", "text": "hi"}}]

    initialize(server)
    return server


def test_prompts_list_describes_arguments():
    listed = result(prompts(), "prompts/list")["prompts"]
    listed[0]["arguments"].sort(key=lambda a: a["name"], reverse=True)  # MicroPython dict order
    assert listed[0] == {"name": "diagnose", "title": "Diagnose", "description": "Check a sensor",
                         "arguments": [{"name": "sensor", "description": "Which sensor", "required": True},
                                       {"name": "detail", "description": "How deep", "required": False}]}
    assert listed[1] == {"name": "chat", "description": "Two messages"}


def test_prompts_get_fills_the_template():
    res = result(prompts(), "prompts/get", {"name": "diagnose", "arguments": {"sensor": "bme280"}})
    assert res["messages"] == [{"role": "user", "content": {"type": "text",
                                                            "text": "Check the bme280 sensor (brief)."}}]
    assert res["description"] == "Check a sensor"


def test_prompt_messages_can_be_given_as_a_list():
    res = result(prompts(), "prompts/get", {"name": "chat"})
    assert [m["role"] for m in res["messages"]] == ["user", "assistant"]


def test_missing_required_argument_is_invalid_params():
    err = error(prompts(), "prompts/get", {"name": "diagnose", "arguments": {}})
    assert err["code"] == -32602 and "sensor" in err["message"]


def test_unknown_prompt_and_bad_arguments_are_invalid_params():
    server = prompts()
    assert error(server, "prompts/get", {"name": "nope"})["code"] == -32602
    assert error(server, "prompts/get", {"name": "diagnose",
                                         "arguments": {"sensor": 5}})["code"] == -32602
    assert error(server, "prompts/get", {"name": "diagnose",
                                         "arguments": {"sensor": "x", "other": "y"}})["code"] == -32602
