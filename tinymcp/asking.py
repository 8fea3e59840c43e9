# The 2026-07-28 revision's input-required results (multi round-trip requests): what
# ctx.request()/requests() does during a 2026-07-28 tools/call, prompts/get or resources/read,
# and the signed requestState that carries the answers from one round to the next. `revision` is
# the connection's Stateless (tinymcp/stateless.py). Loaded at the first such question, and
# kept (the per-boot key lives here); a session that never asks never loads it.
from tinymcp.context import CLIENT_NEEDS, missing
from tinymcp.jsonrpc import RpcError, loads, text
from tinymcp.protocol import INTERNAL_ERROR, INVALID_PARAMS, MISSING_CAPABILITY


class InputRequired(BaseException):
    # Raised by ask() through the handler, past a tool's own `except Exception`, when the
    # answers can only come with the client's retry: `requests` {key: request}, or None with
    # `error`, a protocol error.
    def __init__(self, requests, error=None):
        self.requests = requests
        self.error = error


_KEY = []  # the per-boot random key that signs requestState (made when first needed)


def _mac(body):
    # HMAC-SHA256 (RFC 2104) of the bytes `body` under this boot's key, as hex: built from
    # hashlib, which MicroPython has (hmac it has not). The key is one block long.
    import hashlib
    from binascii import hexlify
    if not _KEY:
        try:
            from os import urandom
            key = urandom(64)
        except ImportError:
            from random import getrandbits
            key = bytes(getrandbits(8) for _ in range(64))
        _KEY.append(bytes(b ^ 0x36 for b in key))
        _KEY.append(bytes(b ^ 0x5C for b in key))
    inner = hashlib.sha256(_KEY[0] + body).digest()
    return hexlify(hashlib.sha256(_KEY[1] + inner).digest()).decode()


def _signed(state):
    # requestState: "<mac>.<json>", so a client can echo it but not edit it.
    body = text(state)
    return _mac(body.encode()) + "." + body


def _verified(state):
    # -> the state a client echoed, or None when it is not one this boot signed.
    if type(state) is not str or state.find(".") != 64:
        return None
    body = state[65:]
    mac = _mac(body.encode())
    diff = 0
    for i in range(64):  # every character compared: how long it takes says nothing
        diff |= ord(mac[i]) ^ ord(state[i])
    if diff:
        return None
    try:
        return loads(body)
    except Exception:
        return None


def ask(revision, asks, asking):
    # ctx.request()/requests() during a 2026-07-28 request: the answers from the retry, or
    # an input-required result asking for those still missing. asking: stateless._ASKING.
    if revision.params is None:
        raise RpcError(INTERNAL_ERROR, "a client can only be asked during tools/call, "
                       "prompts/get or resources/read")
    if revision.asked == 0:
        _recall(revision, asking)
    answers = revision.answers or {}
    got = {}
    wanted = {}
    for key in asks:
        method, params = asks[key]
        need = CLIENT_NEEDS.get(method)
        if need is None:
            raise RpcError(INTERNAL_ERROR, method + " is not something a server can ask a "
                           "client")
        revision.asked += 1
        name = key if key is not None else need + "-" + str(revision.asked)
        if name in answers:
            answer = answers[name]
            if type(answer) is not dict:  # every answer the client can give is an object
                raise InputRequired(None, RpcError(
                    INVALID_PARAMS, "Invalid params: inputResponses[" + name
                    + "] must be an object"))
            got[key] = answer
            continue
        lacks = missing(revision.caps, method, params)
        if lacks is not None:  # never asked in a mode the client lacks: the request fails
            mode = list(lacks[need])
            raise InputRequired(None, RpcError(
                MISSING_CAPABILITY, "Missing required client capability: " + need
                + (" mode " + mode[0] if mode else ""), {"requiredCapabilities": lacks}))
        request = {"method": method}
        if params is not None:
            request["params"] = params
        wanted[name] = request
    if wanted:
        raise InputRequired(wanted)
    return got


def _recall(revision, asking):
    # The answers this request brings: those kept in its requestState plus the responses
    # to the questions asked last. The state holds what this client answered, bound to
    # the request (arguments as the tool saw them), and is signed with this boot's key:
    # an edited state, or one from before a reset, is refused.
    params = revision.params
    method = revision.method
    revision.binding = [method, params.get(asking[method]), params.get("arguments")]
    responses = params.get("inputResponses")
    state = params.get("requestState")
    if state is None:
        revision.answers = responses
        return
    saved = _verified(state)
    if (type(saved) is not dict or saved.get("for") != revision.binding
            or type(saved.get("answers")) is not dict):
        raise InputRequired(None, RpcError(
            INVALID_PARAMS, "Invalid params: requestState was not issued for this request"))
    answers = saved["answers"]
    asked = saved.get("asked")
    if responses and type(asked) is list:
        for key in asked:
            if key in responses:
                answers[key] = responses[key]
    revision.answers = answers


def input_required(revision, signal):
    # The input-required result for what the handler asked (InputRequired), or its error.
    if signal.error is not None:
        raise signal.error
    requests = signal.requests
    state = {"for": revision.binding, "asked": list(requests), "answers": revision.answers or {}}
    return {"resultType": "input_required", "inputRequests": requests,
            "requestState": _signed(state), "_meta": revision.meta}
