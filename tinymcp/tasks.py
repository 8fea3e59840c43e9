# Long tools: a tool written as a generator function runs in the serve loop's idle time, one step
# a turn, so the board keeps answering other requests meanwhile. A plain call stays open until
# the generator returns and is answered then. Loaded with the first call of a generator tool.
from tinymcp.tools import error_result, shape


def describe(e):
    text = str(e)
    return text if text else e.__class__.__name__


class Call:
    # One generator tool call being stepped: the request it answers and where its answer goes.
    def __init__(self, rid, gen, name, structured, token, link):
        self.rid = rid
        self.gen = gen
        self.name = name
        self.structured = structured  # the tool declares an output schema
        self.token = token            # the request's progress token, or None
        self.link = link              # the link the request came through (None: the outbox)
        self.shown = -1.0             # the last progress fraction sent


class Work:
    # The generator tool calls in progress, stepped by the serve loop (Channel.run) each turn.
    max_calls = 4   # open plain calls at once; one more is refused with an isError result

    def __init__(self):
        self.live = []   # Call, in the order they started

    def start(self, server, gen, name, structured):
        # -> None: the request stays open and is answered when the generator returns; or a
        # result now (inside a batch, or when too many calls are open).
        if server.batch is not None:  # a batch's answers form one array: this one runs inline
            return _run(server, gen, name, structured)
        if len(self.live) >= self.max_calls:
            gen.close()
            return error_result(name + " not started: " + str(self.max_calls)
                                + " long tool calls are running; try again when one ends")
        self.live.append(Call(server.running, gen, name, structured, server.token, server.link))
        return None

    def cancel(self, rid):
        # notifications/cancelled for an open call: it stops, and nothing more is sent for it.
        for call in self.live:
            if call.rid == rid:
                self._drop(call)
                return True
        return False

    def _drop(self, call):
        self.live.remove(call)
        call.gen.close()

    def step(self, server):
        # One step of every open call; a call that returned or failed is answered.
        live = self.live
        i = 0
        while i < len(live):
            call = live[i]
            done, value = _advance(server, call.gen, call.rid, call.token, call.name)
            if server.cancelled:  # cancelled while it ran (ctx.cancelled read the input)
                server.cancelled = False
                if call in live:
                    self._drop(call)
                continue
            if call not in live:  # cancelled by a message read during its step
                continue
            if not done:
                _progress(server, call, value)
                i += 1
                continue
            live.remove(call)
            result = value if done == 2 else shape(value, call.structured, server)
            result = server.revision.finish(server, "tools/call", result)
            link = call.link if call.link is not None else server.out_link()
            link.result(call.rid, result)


def _advance(server, gen, rid, token, name):
    # One step of gen, with the server speaking for its request (ctx.progress, ctx.log and
    # ctx.cancelled work as in a plain handler) -> (0, what it yielded), (1, what it returned),
    # or (2, an isError result) when it raised.
    server.busy = True
    server.running = rid
    server.token = token
    server.cancelled = False
    try:
        return 0, gen.send(None)
    except StopIteration as e:
        return 1, e.value
    except Exception as e:
        return 2, error_result(name + " failed: " + describe(e))
    finally:
        server.busy = False
        server.running = None
        server.token = None


def _progress(server, call, fraction):
    # A yielded fraction 0..1 becomes notifications/progress when the call has a token and the
    # fraction grew (progress must increase with each notification).
    if call.token is None or (type(fraction) is not float and type(fraction) is not int):
        return
    if fraction > call.shown and 0 <= fraction <= 1:
        call.shown = fraction
        server.notify("notifications/progress", {"progressToken": call.token,
                                                 "progress": fraction, "total": 1})


def _run(server, gen, name, structured):
    # The whole generator now, in the request (a batch).
    while True:
        done, value = _advance(server, gen, server.running, server.token, name)
        if done == 2:
            return value
        if done:
            return shape(value, structured, server)


def start(server, gen, name, structured):
    work = server.work
    if work is None:
        work = server.work = Work()
    return work.start(server, gen, name, structured)
