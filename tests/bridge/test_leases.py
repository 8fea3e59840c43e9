# Outputs that fail safe through the bridge, with the official SDK client over HTTP: a lease runs
# out on the board, a host session that ends takes its leases with it, another host's hold; and
# a destructive tool's confirmation, by token or by the host's elicitation.
import asyncio
import time

import mcp_types as types
from mcp import Client

from tests.bridge.conftest import clean_env


async def photodiode(client):
    # The sim's ADC channel 2 sees its LED: about 2.4 V lit, 0.35 V dark.
    read = await client.call_tool("read_adc", {"channel": 2})
    return read.structured_content["volts"]


async def dark_within(client, seconds):
    # -> seconds it took the LED to go dark, or None if it stayed lit that long.
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if await photodiode(client) < 1:
            return time.monotonic() - start
        await asyncio.sleep(0.1)
    return None


def bench_bridge(http_bridge):
    url, bridge = http_bridge(env=clean_env(TINYMCP_SIM_BENCH="1"))
    return url, bridge


def test_a_lease_of_two_seconds_not_renewed_puts_the_led_off_after_two_seconds(http_bridge):
    url, bridge = bench_bridge(http_bridge)

    async def main():
        async with Client(url, mode="legacy") as client:
            lit = await client.call_tool("set_led", {"on": True, "lease_s": 2})
            assert lit.structured_content == {"on": True, "lease_s": 2}
            start = time.monotonic()
            assert await photodiode(client) > 2
            took = await dark_within(client, 5)
            assert took is not None, "the LED stayed lit 5 s into a 2 s lease"
            elapsed = time.monotonic() - start
            print("LED dark %.2f s after a 2 s lease was granted" % elapsed)
            assert elapsed > 1.5
    asyncio.run(main())


def test_a_closed_session_leaves_its_led_off_while_another_sessions_lease_holds(http_bridge):
    url, bridge = bench_bridge(http_bridge)

    async def main():
        async with Client(url, mode="legacy") as other:
            async with Client(url, mode="legacy") as owner:
                lit = await owner.call_tool("set_led", {"on": True, "lease_s": 30})
                assert lit.structured_content == {"on": True, "lease_s": 30}
                relay = await other.call_tool("write_pin", {"pin": 15, "value": 1,
                                                            "lease_s": 30})
                assert relay.structured_content == {"pin": 15, "value": 1, "lease_s": 30}
                assert await photodiode(other) > 2
            # The owner's client has exited (DELETE). Its lease had 30 s to run: dark within 5 s
            # is the session's end at work, not the lease's (no tighter bound: a loaded machine
            # may take seconds to close a session, which is no fault of the bridge).
            took = await dark_within(other, 5)
            assert took is not None, "the closed session's LED was still lit after 5 s"
            print("LED dark %.2f s after its session closed" % took)
            pin = await other.call_tool("read_pin", {"pin": 15})
            assert pin.structured_content["value"] == 1
    asyncio.run(main())
    assert "Traceback" not in bridge.stderr(), bridge.stderr()


def test_one_led_leased_by_two_sessions_is_held_by_the_one_that_renewed_it_last(http_bridge):
    url, bridge = bench_bridge(http_bridge)

    async def main():
        async with Client(url, mode="legacy") as last:
            async with Client(url, mode="legacy") as first:
                await first.call_tool("set_led", {"on": True, "lease_s": 30})
                await last.call_tool("set_led", {"on": True, "lease_s": 30})
            assert await dark_within(last, 2) is None   # first's end: last's lease holds
        async with Client(url, mode="legacy") as watcher:
            assert await dark_within(watcher, 5) is not None   # last's end: off
    asyncio.run(main())


def test_a_host_cannot_name_itself_the_owner_of_another_hosts_lease(http_bridge):
    url, bridge = bench_bridge(http_bridge)

    async def main():
        async with Client(url, mode="legacy") as holder:
            await holder.call_tool("set_led", {"on": True, "lease_s": 30})
            async with Client(url, mode="legacy") as other:
                # Renewing under a forged owner still makes `other` the owner: its end ends it.
                await other.call_tool("set_led", {"on": True, "lease_s": 30},
                                      meta={"io.tinymcp/owner": "host-1"})
            assert await dark_within(holder, 5) is not None
    asyncio.run(main())


def test_a_destructive_tool_is_confirmed_by_token_or_by_the_hosts_elicitation(http_bridge):
    url, bridge = bench_bridge(http_bridge)
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def main():
        async with Client(url, mode="legacy") as plain:
            first = await plain.call_tool("clear_history", {"quantity": "pressure"})
            assert first.structured_content, first
            token = first.structured_content["confirm"]["token"]
            done = await plain.call_tool("clear_history", {"quantity": "pressure",
                                                           "confirm": token})
            assert "cleared" in done.structured_content, done
            reused = await plain.call_tool("clear_history", {"quantity": "pressure",
                                                             "confirm": token})
            assert reused.is_error
        async with Client(url, mode="legacy", elicitation_callback=elicit) as asking:
            done = await asking.call_tool("clear_history", {"quantity": "pressure"})
            assert "cleared" in done.structured_content, done
            assert len(asked) == 1 and "pressure samples" in asked[0]
    asyncio.run(main())


def test_with_two_boards_a_host_that_ends_takes_only_its_own_board_outputs(http_bridge):
    url, bridge = http_bridge("--sim", "a=sim", "--sim", "b=sim", board=None)

    async def volts(client, label):
        read = await client.call_tool(label + "_read_adc", {"channel": 2})
        return read.structured_content["volts"]

    async def main():
        async with Client(url, mode="legacy") as stays:
            deadline = time.monotonic() + 30
            while not {"a_set_led", "b_set_led"} <= {t.name for t in
                                                     (await stays.list_tools()).tools}:
                assert time.monotonic() < deadline, "both boards never came up"
                await asyncio.sleep(0.2)
            async with Client(url, mode="legacy") as goes:
                await goes.call_tool("a_set_led", {"on": True, "lease_s": 30})
                await stays.call_tool("b_set_led", {"on": True, "lease_s": 30})
                assert await volts(stays, "a") > 2 and await volts(stays, "b") > 2
            start = time.monotonic()
            while await volts(stays, "a") > 2 and time.monotonic() - start < 5:
                await asyncio.sleep(0.1)
            assert await volts(stays, "a") < 1
            assert await volts(stays, "b") > 2
    asyncio.run(main())
