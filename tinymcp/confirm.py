# A confirmation step for destructive tools that works without elicitation. The first call answers
# with what the tool would do and a one-time token that expires; the same call again with that
# token acts. A client that takes form elicitation (2025-06-18 on; 2026-07-28 by its
# input-required retry) is asked within the call instead.
#
#   asks = Confirmations()
#   @server.tool("clear_history", ..., inputs={..., "confirm?": TOKEN},
#                outputs={..., "confirm?": PENDING}, destructive=True, ctx=True)
#   def clear_history(ctx, quantity, confirm=None):
#       pending = asks.check(ctx, ("clear_history", quantity), confirm, "Delete ... of " + quantity)
#       if pending is not None:
#           return pending     # {"confirm": {"token", "summary", "expires_s"}}: nothing done
#       ...                    # confirmed: act
from binascii import hexlify

from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.context import missing
from tinymcp.jsonrpc import RpcError
from tinymcp.revision import HANDSHAKE
from tinymcp.schema import boolean, number, obj, string

TOKEN = string("The token a first call without it answered with: repeat the call with the "
               "same arguments and this token to act", min_length=8, max_length=64)
PENDING = obj({"token": string("Repeat the call with the same arguments and confirm=token"),
               "summary": string("What the call would do"),
               "expires_s": number("Seconds the token stays good")},
              "Not done yet: what it would do, and the token that does it")
_ASK = {"type": "object", "properties": {"confirm": boolean("Go ahead", title="Confirm")},
        "required": ["confirm"]}


def _token():
    # 96 unguessable bits where the port has os.urandom; the PRNG elsewhere (the wasm port).
    try:
        from os import urandom
        raw = urandom(12)
    except (ImportError, AttributeError, OSError, NotImplementedError):
        import random
        raw = bytes([random.getrandbits(8) for _ in range(12)])
    return hexlify(raw).decode()


def _can_elicit(server):
    # Does the client take a form elicitation now? (Never inside a JSON-RPC batch.)
    session = server.session
    revision = session.revision
    if revision is HANDSHAKE:
        caps = (session.client_capabilities if session.era >= 2 and session.pump is not None
                else None)
    else:
        caps = getattr(revision, "caps", None)  # 2026-07-28: what this request declares
    return (type(caps) is dict and session.batch is None
            and missing(caps, "elicitation/create", None) is None)


def _ask(ctx, summary):
    # The user's answer (a dict), or None when the client cannot be asked after all: a bridge
    # whose host lacks elicitation says so as data.
    try:
        answer = ctx.request("elicitation/create", {"message": summary + ". Go ahead?",
                                                    "requestedSchema": _ASK})
    except RpcError as e:
        if type(e.data) is dict and "requiredCapabilities" in e.data:
            return None
        raise
    return answer if type(answer) is dict else {}


class Confirmations:
    expires_ms = 60000   # how long a token stays good
    max_tokens = 4       # outstanding at once; a new one retires the oldest

    def __init__(self, clock=ticks_ms):
        self.clock = clock   # ms ticks: ticks_ms, or a test's own
        self.tokens = []     # [token, binding, deadline]

    def check(self, ctx, binding, token, summary):
        # -> None when the call is confirmed (act now), else the result that asks for it.
        # binding: what the token is good for (the tool's name and arguments, as a tuple).
        # A wrong, reused or expired token raises: the tool's answer is an isError.
        if token is not None:
            self._redeem(binding, token)
            return None
        answer = _ask(ctx, summary) if _can_elicit(ctx.server) else None
        if answer is None:
            return self._issue(binding, summary)
        content = answer.get("content")
        if (answer.get("action") != "accept" or type(content) is not dict
                or content.get("confirm") is not True):
            raise ValueError("not done: the user did not confirm (" + summary + ")")
        return None

    def _issue(self, binding, summary):
        tokens = self.tokens
        if len(tokens) >= self.max_tokens:
            tokens.pop(0)
        made = _token()
        tokens.append([made, binding, self.clock() + self.expires_ms])
        return {"confirm": {"token": made, "summary": summary,
                            "expires_s": self.expires_ms // 1000}}

    def _redeem(self, binding, token):
        now = self.clock()
        for entry in self.tokens:
            if entry[0] == token:
                if entry[1] != binding:
                    raise ValueError("that confirmation token was given for other arguments; "
                                     "repeat the call exactly, or call without confirm")
                self.tokens.remove(entry)  # one use, good or late
                if ticks_diff(entry[2], now) <= 0:
                    raise ValueError("that confirmation token has expired (a token lasts "
                                     + str(self.expires_ms // 1000) + " s); call again "
                                     "without confirm for a new one")
                return
        raise ValueError("that confirmation token is unknown or already used; call again "
                         "without confirm for a new one")
