# Long tools and tasks. A tool written as a generator function runs in the serve loop's idle time,
# one step a turn, so the board keeps answering other requests meanwhile. A plain call stays open
# until the generator returns and is answered then; a call run as a task (the 2025-11-25 tasks
# utility, the 2026-07-28 io.modelcontextprotocol/tasks extension) is answered at once with its
# task, whose status and result the client fetches later. A task that asks the client something
# (ctx.request/requests) pauses, status input_required, without holding the loop: a 2026-07-28
# client finds the questions on tasks/get and answers with tasks/update, a 2025-11-25 client gets
# them as requests tied to the task; with every answer in, the tool runs again from its start
# and ctx.request returns them (as a 2026-07-28 retry does). Loaded with the first long tool.
import time

from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.jsonrpc import RpcError, must, text
from tinymcp.protocol import (INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND,
                              MISSING_CAPABILITY, const)
from tinymcp.tools import error_result, shape

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
_UTILITY_ERA = const(3)    # 2025-11-25: the tasks utility
_EXTENSION_ERA = const(4)  # 2026-07-28: the tasks extension
TERMINAL = ("completed", "failed", "cancelled")
_NO_TASK_PARAMS = {}


def stamp():
    # Now as ISO 8601 (UTC, by the board's clock: a board without one starts at its epoch).
    try:
        t = time.gmtime()
    except AttributeError:
        return "1970-01-01T00:00:00Z"
    return "%04d-%02d-%02dT%02d:%02d:%02dZ" % (t[0], t[1], t[2], t[3], t[4], t[5])


def new_id():
    # 128 random bits as hex: a task id nobody can guess.
    try:
        from os import urandom
        raw = urandom(16)
    except ImportError:
        import random
        raw = bytes(random.getrandbits(8) for _ in range(16))
    from binascii import hexlify
    return hexlify(raw).decode()


class Paused(BaseException):
    # Raised by ask() through a task's tool, past its own `except Exception`: the questions
    # {key: request} it waits for.
    def __init__(self, requests):
        self.requests = requests


class Job:
    # One generator tool call being stepped: the request it answers and where its answer goes.
    def __init__(self, rid, gen, name, structured, token, link, task=None, again=None):
        self.rid = rid
        self.gen = gen
        self.name = name
        self.structured = structured  # the tool declares an output schema
        self.token = token            # the request's progress token, or None
        self.link = link              # the link the request came through (None: the outbox)
        self.task = task              # the Task it runs as, or None for a plain call
        self.shown = -1.0             # the last progress fraction sent
        self.again = again            # a task's (tool function, arguments, wants ctx, the
                                      # request's _meta): to run it again, and whom it asks
        self.asked = 0                # questions its run has asked so far (unnamed keys count)
        self.sent = None              # 2025-11-25, paused: {our request id: question key}


class Task:
    def __init__(self, tid, ttl_ms, link):
        self.id = tid
        self.status = "working"
        self.error = None     # the RpcError a protocol failure ended it with
        self.message = None
        self.created = self.updated = stamp()
        self.since = ticks_ms()  # created, then ended: an ended task is kept ttl from its end
        self.ttl = ttl_ms
        self.link = link      # where its status notifications go: the creating request's link
        self.result = None    # the CallToolResult, once it ended
        self.waiting = None   # [(request id, link)] of tasks/result requests blocked on it
        # Once it asks: [the questions not answered yet {key: request} (None: none now), the
        # client's answers so far {key: answer}]. One field: a Task's attribute table stays small.
        self.input = None


def task_ended(server, task):
    # Hook: a task reached completed, failed or cancelled: an event in the board's ring.
    if server.events is not None:
        server.events.task_ended(task.id, task.status)


class Work:
    # The generator tool calls of one session in progress, stepped by the serve loop
    # (Channel.run) each turn with the session entered, and the tasks the board keeps for it.
    max_calls = 4       # open plain calls at once; one more is refused with an isError result
    max_tasks = 4       # tasks kept, working or ended; the oldest ended goes first
    ttl_ms = 300000     # how long an ended task is kept when the client asks no ttl
    max_ttl_ms = 3600000
    poll_ms = 1000      # the polling interval suggested to clients

    def __init__(self):
        self.live = []     # Job, in the order they started
        self.parked = []   # Job of a task waiting for the client's answers
        self.running = None  # the Job being stepped (ctx.request in a task asks through it)
        self.tasks = []    # Task, oldest first

    # -- plain calls -------------------------------------------------------------------------

    def start(self, server, gen, name, structured):
        # -> None: the request stays open and is answered when the generator returns; or a
        # result now (inside a batch, or when too many calls are open).
        session = server.session
        if session.batch is not None:  # a batch's answers form one array: this one runs inline
            return _run(server, gen, name, structured)
        plain = 0
        for call in self.live:
            plain += call.task is None
        if plain >= self.max_calls:
            gen.close()
            return error_result(name + " not started: " + str(self.max_calls)
                                + " long tool calls are running; try again when one ends")
        call = session.call
        self.live.append(Job(call.id, gen, name, structured, call.token, session.link))
        return None

    def cancel(self, rid):
        # notifications/cancelled for an open call (or a blocked tasks/result): it stops, and
        # nothing more is sent for it. A task is cancelled with tasks/cancel only.
        for call in self.live:
            if call.rid == rid and call.task is None:
                self._drop(call)
                return True
        for task in self.tasks:
            waiting = task.waiting
            if waiting:
                for wait in waiting:
                    if wait[0] == rid:
                        waiting.remove(wait)
                        return True
        return False

    def _drop(self, call):
        self.live.remove(call)
        if call.gen is not None:
            call.gen.close()

    def step(self, server):
        # One step of every open call; a call that returned or failed is answered (or its
        # task ends).
        live = self.live
        i = 0
        while i < len(live):
            call = live[i]
            # A task's request was answered with the task: notifications/cancelled for its
            # id no longer reaches it (tasks/cancel does).
            rid = call.rid if call.task is None else None
            done, value = _advance(server, call.gen, rid, call.token, call.name, call)
            now = server.session.call
            if now.cancelled:  # cancelled while it ran (ctx.cancelled read the input)
                now.cancelled = False
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
            if done == 4:
                self._pause(server, call, value)
                continue
            if done == 3:
                if call.task is not None:
                    call.task.error = value[0]
                value = value[1]
            result = value if done >= 2 else shape(value, call.structured, server)
            if call.task is not None:
                self._end(server, call.task, result, True)
                continue
            result = server.session.revision.finish(server, "tools/call", result)
            link = call.link if call.link is not None else server.out_link()
            link.result(call.rid, result)

    # -- tasks -------------------------------------------------------------------------------

    def create(self, server, value, name, structured, asked, again=None):
        # A call run as a task: the task now (CreateTaskResult), its work from idle.
        self.expire()
        tasks = self.tasks
        if len(tasks) >= self.max_tasks:
            for task in tasks:
                if task.status in TERMINAL:
                    tasks.remove(task)
                    break
            else:
                if type(value).__name__ == "generator":
                    value.close()
                raise RpcError(INTERNAL_ERROR, "Task limit reached: " + str(self.max_tasks)
                               + " tasks are working on this board; try again when one ends")
        ttl = asked.get("ttl", self.ttl_ms)
        if type(ttl) is not int and type(ttl) is not float or ttl > self.max_ttl_ms:
            ttl = self.max_ttl_ms  # null (unlimited) or longer than the board keeps anything
        session = server.session
        task = Task(new_id(), int(ttl) if ttl > 0 else 0, session.link)
        tasks.append(task)
        era = session.era
        if type(value).__name__ == "generator":
            call = session.call
            if era == _EXTENSION_ERA and session.revision.answers:
                # what the client answered before the task was made: a rerun asks it again
                task.input = [None, dict(session.revision.answers)]
            token = call.token if era == _UTILITY_ERA else None  # 2026-07-28: no progress
            self.live.append(Job(call.id, value, name, structured, token, session.link, task,
                                 again))
        else:  # ended already (bad arguments, a plain tool): the task says so at once
            self._end(server, task, value, False)
        if era == _UTILITY_ERA:
            return {"task": _state(task, era)}
        state = _state(task, era)
        state["resultType"] = "task"
        return state

    def _end(self, server, task, result, notify):
        if task.status in TERMINAL:  # cancelled stays cancelled
            return
        result = _plain(result)
        era = server.session.era
        # 2025-11-25: a tool result with isError is a failed task; 2026-07-28: completed.
        failed = task.error is not None or (era == _UTILITY_ERA and result.get("isError") is True)
        task.status = "failed" if failed else "completed"
        task.result = result
        task.updated = stamp()
        task.since = ticks_ms()
        if notify and era == _UTILITY_ERA:
            link = task.link if task.link is not None else server.out_link()
            link.send({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                       "params": _state(task, era)})
        elif notify:
            _tell(server, task)
        waiting = task.waiting
        task.waiting = None
        for rid, link in waiting or ():  # blocked tasks/result: the outcome, or its error
            link = link or server.out_link()
            e = task.error
            if e is None:
                link.result(rid, fetch(task))
            else:
                link.error(rid, e.code, e.message, e.data)
        task_ended(server, task)

    def stop(self, server, task):
        # tasks/cancel: the work stops and nothing more is sent for it.
        for call in self.live:
            if call.task is task:
                self._drop(call)
                break
        for call in self.parked:
            if call.task is task:
                self._unpark(server, call)
                break
        if task.input is not None:
            task.input[0] = None
        task.status = "cancelled"
        task.message = "Cancelled by request."
        task.updated = stamp()
        task.since = ticks_ms()
        waiting = task.waiting
        task.waiting = None
        for rid, link in waiting or ():
            (link or server.out_link()).error(rid, INTERNAL_ERROR, _CANCELLED)
        task_ended(server, task)

    # -- tasks that ask the client --------------------------------------------------------

    def _pause(self, server, call, requests):
        # The task's tool asked what the client has not answered: input_required until it has.
        task = call.task
        call.gen = None  # ended by Paused: rerun from its start once answered
        task.status = "input_required"
        if task.input is None:
            task.input = [requests, {}]
        else:
            task.input[0] = requests
        task.updated = stamp()
        self.parked.append(call)
        session = server.session
        link = task.link if task.link is not None else server.out_link()
        if session.era == _UTILITY_ERA:
            # 2025-11-25: the questions go to the client as requests tied to the task
            from tinymcp.context import INPUT_META
            waiting = session.waiting
            if waiting is None:
                waiting = session.waiting = {}
            call.sent = {}
            for key in requests:
                rid = session.next_id = session.next_id + 1
                waiting[rid] = None
                call.sent[rid] = key
                params = dict(requests[key].get("params") or {})
                meta = params["_meta"] = dict(params.get("_meta") or {})
                meta[RELATED] = {"taskId": task.id}
                meta[INPUT_META] = [key, len(requests)]
                link.send({"jsonrpc": "2.0", "id": rid, "method": requests[key]["method"],
                           "params": params})
            link.send({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                       "params": _state(task, _UTILITY_ERA)})
        else:
            _tell(server, task)

    def wake(self, server):
        # 2025-11-25: a paused task whose requests were all answered runs again (the channel
        # calls this each turn while one waits).
        waiting = server.session.waiting
        for call in list(self.parked):
            sent = call.sent
            if not sent or waiting is None:
                continue
            if not all(waiting.get(rid) is not None for rid in sent):
                continue
            task = call.task
            answers = task.input[1]
            failed = None
            for rid in sent:
                reply = waiting.pop(rid)
                if "error" in reply and failed is None:
                    e = reply["error"] if type(reply["error"]) is dict else {}
                    failed = RpcError(e.get("code", INTERNAL_ERROR),
                                      e.get("message", "client error"), e.get("data"))
                answers[sent[rid]] = reply.get("result")
            call.sent = None
            if failed is not None:  # the client refused to answer: the task fails with it
                self.parked.remove(call)
                task.error = failed
                self._end(server, task, error_result(call.name + " failed: "
                                                     + failed.message), True)
            else:
                self.resume(server, task)

    def answer(self, server, task, responses):
        # 2026-07-28 tasks/update: answers to the questions outstanding; the others are ignored
        # (the extension: keys never issued, answered already or superseded).
        asks, answers = task.input
        for key in responses:
            if key in asks and type(responses[key]) is not dict:
                raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses[" + key
                               + "] must be an object")
        for key in responses:
            if key in asks:
                answers[key] = responses[key]
                del asks[key]
        if not asks:
            self.resume(server, task)

    def resume(self, server, task):
        # Every question answered: the task works again, its tool rerun from the start.
        for call in self.parked:
            if call.task is task:
                self.parked.remove(call)
                self.live.append(call)
                break
        task.status = "working"
        task.input[0] = None
        task.updated = stamp()
        if server.session.era != _UTILITY_ERA:
            _tell(server, task)

    def _unpark(self, server, call):
        self.parked.remove(call)
        waiting = server.session.waiting
        for rid in call.sent or ():
            if waiting is not None:
                waiting.pop(rid, None)  # a late answer is dropped (server.answer)
        call.sent = None

    def expire(self):
        # Ended tasks are forgotten ttl after their end (the spec counts from creation and lets
        # a receiver keep them longer: a task that ran past its ttl is still fetched); a working
        # task is kept until it ends.
        now = ticks_ms()
        tasks = self.tasks
        i = 0
        while i < len(tasks):
            task = tasks[i]
            if task.status in TERMINAL and ticks_diff(now, task.since) > task.ttl:
                tasks.pop(i)
            else:
                i += 1

    def find(self, params):
        tid = params.get("taskId")
        if type(tid) is not str:
            raise RpcError(INVALID_PARAMS, must("taskId", "a string"))
        if params.get("requestState") is not None:  # a task of this board never carries one
            raise RpcError(INVALID_PARAMS, "Invalid params: requestState was not issued for "
                           "this task")
        for task in self.tasks:
            if task.id == tid:
                return task
        raise RpcError(INVALID_PARAMS, "Failed to retrieve task: Task not found (or expired)")


_CANCELLED = "Task cancelled: the tool call was stopped before it returned"


def fetch(task):
    # What the task's tools/call would have returned, tied to the task (tasks/result).
    if task.status == "cancelled":
        raise RpcError(INTERNAL_ERROR, _CANCELLED)
    if task.error is not None:  # ended by a protocol error: tasks/result answers it
        raise task.error
    result = dict(task.result)
    meta = result.get("_meta")
    meta = dict(meta) if type(meta) is dict else {}
    meta[RELATED] = {"taskId": task.id}
    result["_meta"] = meta
    return result


def _tell(server, task):
    # 2026-07-28: the task as it is now to the subscriptions/listen streams that asked for it.
    from tinymcp.stateless import SUBSCRIPTION_META  # loaded: the revision serving
    listens = server.session.revision.listens
    for rid in listens:
        if task.id in listens[rid].get("taskIds", ()):
            params = _detailed(task)
            params["_meta"] = {SUBSCRIPTION_META: rid}
            server.notify("notifications/tasks", params)


def ask(server, call, asks):
    # ctx.request()/requests() in a task's tool: the client's answers, or Paused with the
    # questions still open (each named by its key, else "<capability>-<n>" in asking order, so
    # a rerun names them alike). Never asked in a capability or mode the client lacks.
    from tinymcp.context import CAPABILITIES_META, CLIENT_NEEDS, missing
    task = call.task
    meta = call.again[3]
    caps = meta.get(CAPABILITIES_META) if type(meta) is dict else None
    if type(caps) is not dict:
        caps = server.session.client_capabilities or {}
    answers = task.input[1] if task.input is not None else {}
    got = {}
    wanted = {}
    for key in asks:
        method, params = asks[key]
        need = CLIENT_NEEDS.get(method)
        if need is None:
            raise RpcError(INTERNAL_ERROR, method + " is not something a server can ask a "
                           "client")
        call.asked += 1
        name = key if key is not None else need + "-" + str(call.asked)
        if name in answers:
            got[key] = answers[name]
            continue
        lacks = missing(caps, method, params)
        if lacks is not None:
            mode = list(lacks[need])
            raise RpcError(MISSING_CAPABILITY, "Missing required client capability: " + need
                           + (" mode " + mode[0] if mode else ""), {"requiredCapabilities": lacks})
        request = {"method": method}
        if params is not None:
            request["params"] = params
        wanted[name] = request
    if wanted:
        raise Paused(wanted)
    return got


def _state(task, era):
    # The Task object as the revision spells it.
    d = {"taskId": task.id, "status": task.status, "createdAt": task.created,
         "lastUpdatedAt": task.updated}
    if task.message:
        d["statusMessage"] = task.message
    if era == _UTILITY_ERA:
        d["ttl"] = task.ttl
        d["pollInterval"] = Work.poll_ms
    else:
        d["ttlMs"] = task.ttl
        d["pollIntervalMs"] = Work.poll_ms
    return d


def _plain(result):
    # A result as a dict of its own: the server's one structured reply (a list, see
    # jsonrpc.py) is refilled by the next call.
    if type(result) is not list:
        return result
    value, full, _tail = result
    out = {"content": [{"type": "text", "text": text(value)}]}
    if full:
        out["structuredContent"] = value
    return out


def _advance(server, gen, rid, token, name, job=None):
    # One step of gen, with the session's Call speaking for its request (ctx.progress, ctx.log
    # and ctx.cancelled work as in a plain handler) -> (0, what it yielded), (1, what it
    # returned), (2, an isError result) when it raised, or (3, (the RpcError, that result))
    # when it raised a protocol error, or (4, the questions) when a task's tool asked what the
    # client has not answered yet.
    session = server.session
    call = session.call
    call.busy = True
    call.id = rid
    call.token = token
    call.cancelled = False
    work = session.work
    work.running = job
    try:
        if gen is None:  # a task whose questions were answered: its tool again, from the start
            fn, args, wants, _meta = job.again
            job.asked = 0
            gen = fn(ctx=server.ctx, **args) if wants else fn(**args)
            if type(gen).__name__ != "generator":
                return 1, gen
            job.gen = gen
        return 0, gen.send(None)
    except StopIteration as e:
        return 1, e.value
    except Exception as e:
        failed = error_result(name + " failed: " + (str(e) or e.__class__.__name__))
        if isinstance(e, RpcError):  # a protocol error: a task it ends is failed with it
            return 3, (e, failed)
        return 2, failed
    except Paused as e:
        return 4, e.requests
    finally:
        work.running = None
        call.busy = False
        call.id = None
        call.token = None


def _progress(server, call, fraction):
    # A yielded fraction 0..1 becomes notifications/progress when the call has a token and the
    # fraction grew (progress must increase with each notification).
    if call.token is None or (type(fraction) is not float and type(fraction) is not int):
        return
    if fraction > call.shown and 0 <= fraction <= 1:
        call.shown = fraction
        params = {"progressToken": call.token, "progress": fraction, "total": 1}
        if call.task is not None:
            params["_meta"] = {RELATED: {"taskId": call.task.id}}
        server.notify("notifications/progress", params)


def _run(server, gen, name, structured):
    # The whole generator now, in the request (a batch).
    while True:
        call = server.session.call
        done, value = _advance(server, gen, call.id, call.token, name)
        if done == 3:
            return value[1]
        if done == 2:
            return value
        if done:
            return shape(value, structured, server)


def start(server, value, name, structured, task=None, again=None):
    work = _session_work(server.session)
    if task is None:
        return work.start(server, value, name, structured)
    return work.create(server, value, name, structured, task, again)


# -- the revisions' rules (a tool declares task support in tinymcp/tools.py: Tools.offer) -----

def _declared(server):
    # Did this 2026-07-28 request's client capabilities include the tasks extension?
    return _declares(server.session.revision.caps)


def _declares(caps):
    ext = caps.get("extensions") if type(caps) is dict else None
    return type(ext) is dict and type(ext.get(EXTENSION)) is dict


def _missing():
    return RpcError(MISSING_CAPABILITY, "Missing required client capability: the " + EXTENSION
                    + " extension", {"requiredCapabilities": {"extensions": {EXTENSION: {}}}})


def wanted(server, params, mode, name):
    # -> the task params to run this tools/call as a task, or None for a plain call; raises
    # the revision's error where the call cannot be served as asked. mode: 0 the tool has no
    # task support, 1 optional, 2 required.
    era = server.session.era
    if era == _EXTENSION_ERA:  # the server decides: a long tool is a task when the client can
        if not mode:
            return None
        if _declared(server):
            return _NO_TASK_PARAMS
        if mode == 2:
            raise _missing()
        return None
    if era != _UTILITY_ERA:  # before 2025-11-25 there are no tasks: a plain call
        return None
    asked = params.get("task")
    if asked is None:
        if mode == 2:
            raise RpcError(METHOD_NOT_FOUND, "Method not found: " + name + " runs only as a "
                           "task (execution.taskSupport is required): add a task param")
        return None
    if not mode:
        raise RpcError(METHOD_NOT_FOUND, "Method not found: " + name
                       + " does not support task execution")
    if type(asked) is not dict:
        raise RpcError(INVALID_PARAMS, must("task", "an object"))
    return asked


def _work(server, method):
    # The board's tasks, once the revision allows method.
    era = server.session.era
    if era == _EXTENSION_ERA:
        if method == "tasks/result" or method == "tasks/list":
            raise RpcError(METHOD_NOT_FOUND, "Method not found: " + method
                           + " is not part of the 2026-07-28 tasks extension")
        if not _declared(server):
            raise _missing()
    elif era != _UTILITY_ERA or method == "tasks/update":
        raise RpcError(METHOD_NOT_FOUND, "Method not found: " + method
                       + (" needs protocol 2025-11-25" if era < _UTILITY_ERA else ""))
    work = _session_work(server.session)
    work.expire()
    return work


def _session_work(session):
    work = session.work
    if work is None:
        work = session.work = Work()
    return work


def _detailed(task):
    # The 2026-07-28 task with its outcome inline (tasks/get, notifications/tasks).
    state = _state(task, _EXTENSION_ERA)
    if task.status == "input_required":
        state["inputRequests"] = task.input[0]
    elif task.status == "completed":
        state["result"] = task.result
    elif task.error is not None:  # failed by a protocol error: the JSON-RPC error inline
        e = task.error
        state["error"] = {"code": e.code, "message": e.message}
        if e.data is not None:
            state["error"]["data"] = e.data
    return state


def listen(server, caps, tids):
    # subscriptions/listen asks for task notifications -> the ids of tasks it may have.
    if not _declares(caps):
        raise _missing()
    if type(tids) is not list:
        raise RpcError(INVALID_PARAMS, "Invalid params: taskIds must be a list of task ids")
    work = server.session.work
    kept = [task.id for task in work.tasks] if work is not None else ()
    return [tid for tid in tids if tid in kept]


def _get(server, params):
    task = _work(server, "tasks/get").find(params)
    era = server.session.era
    if era == _EXTENSION_ERA:
        return _detailed(task)
    return _state(task, era)


def _result(server, params):
    task = _work(server, "tasks/result").find(params)
    if task.status in TERMINAL:
        return fetch(task)
    if task.waiting is None:
        task.waiting = []
    session = server.session
    task.waiting.append((session.call.id, session.link))
    return None  # answered when the task ends


def _list(server, params):
    work = _work(server, "tasks/list")
    if params.get("cursor") is not None:  # every task fits one page
        raise RpcError(INVALID_PARAMS, "Invalid params: unknown cursor")
    era = server.session.era
    return {"tasks": [_state(task, era) for task in work.tasks]}


def _cancel(server, params):
    work = _work(server, "tasks/cancel")
    task = work.find(params)
    era = server.session.era
    if task.status in TERMINAL:
        if era == _EXTENSION_ERA:
            return {}  # an acknowledgement: cancellation is cooperative
        raise RpcError(INVALID_PARAMS, "Invalid params: the task is already " + task.status
                       + " and cannot be cancelled")
    work.stop(server, task)
    return _state(task, era) if era == _UTILITY_ERA else {}


def _update(server, params):
    # 2026-07-28: answers to a task's inputRequests; the task runs on once all are in.
    work = _work(server, "tasks/update")
    task = work.find(params)
    responses = params.get("inputResponses")
    if type(responses) is not dict:
        raise RpcError(INVALID_PARAMS, must("inputResponses", "an object"))
    if task.status != "input_required":
        raise RpcError(INVALID_PARAMS, "Invalid params: the task is " + task.status
                       + ", not waiting for input: there is nothing to answer")
    work.answer(server, task, responses)
    return {}


HANDLERS = {"tasks/get": _get, "tasks/result": _result, "tasks/list": _list,
            "tasks/cancel": _cancel, "tasks/update": _update}
