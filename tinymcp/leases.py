# Outputs that fail safe. A lease ties an output's unsafe state to a deadline and to whoever set
# it: the board session, and behind a bridge the host (the call's _meta["io.tinymcp/owner"]).
# When the lease runs out without a renewal, or its session or owner ends, the output goes back
# to its safe state here on the board, whatever the bridge or the host is doing.
#
#   left = hold(server, output, key, lease_s, safe)   # before the driver acts (drivers go
#                                                     # through tinymcp.sensors.common.lease)
#   output.safe(key)                                  # the driver's safe state
#
# One output (output, key), one lease: the latest call with lease_s renews it and owns it. A
# call that puts the output in its safe state ends the lease; one without lease_s leaves a
# running lease as it is (so nothing turns a leased output into one that never fails safe).
from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.protocol import OWNER_META


class Leases:
    max_leases = 8    # outputs under lease at once; one more is refused

    def __init__(self, clock=ticks_ms):
        self.clock = clock   # ms ticks: ticks_ms, or a test's own
        self.held = []       # [output, key, session, owner, deadline]

    def _find(self, output, key):
        for i in range(len(self.held)):
            entry = self.held[i]
            if entry[0] is output and entry[1] == key:
                return i
        return -1

    def grant(self, output, key, session, owner, seconds):
        # A new lease, or the renewal of the output's lease (which the caller now owns).
        deadline = self.clock() + int(seconds * 1000)
        i = self._find(output, key)
        if i >= 0:
            self.held[i] = [output, key, session, owner, deadline]
            return
        if len(self.held) >= self.max_leases:
            raise ValueError("already " + str(self.max_leases) + " outputs under lease; let "
                             "one lapse or switch one to its safe state first")
        self.held.append([output, key, session, owner, deadline])

    def left(self, output, key):
        # Seconds the output's lease has left, or None without one.
        i = self._find(output, key)
        if i < 0:
            return None
        ms = ticks_diff(self.held[i][4], self.clock())
        return (ms if ms > 0 else 0) / 1000

    def release(self, output, key):
        # The output is in its safe state by the caller's hand: nothing left to fail safe.
        i = self._find(output, key)
        if i >= 0:
            self.held.pop(i)

    def expire(self):
        # Run from the serve loop's idle time: lapsed leases put their outputs back. Nothing is
        # allocated until one has lapsed (no comprehension here: its closure would be).
        held = self.held
        if not held:
            return
        now = self.clock()
        for entry in held:
            if ticks_diff(entry[4], now) <= 0:
                self._lapsed(now)
                return

    def _lapsed(self, now):
        self._drop([e for e in self.held if ticks_diff(e[4], now) <= 0])

    def end(self, session, owner=None):
        # A session ended (its link, a new initialize), or one owner of it (a host behind a
        # bridge): their outputs back to their safe state, no other's.
        if self.held:
            self._drop([e for e in self.held if e[2] == session
                        and (owner is None or e[3] == owner)])

    def _drop(self, entries):
        for entry in entries:
            self.held.remove(entry)
        for entry in entries:
            try:
                entry[0].safe(entry[1])
            except Exception:  # a failing pin must not stop the others going safe
                pass


def of(server, clock=ticks_ms):
    # The server's leases, made (and expired from its idle time) with the first.
    leases = server.leases
    if leases is None:
        leases = Leases(clock)
        server.attach(leases=leases)
    return leases


def hold(server, output, key, seconds, safe):
    # What a driver calls before it sets output (key: which of its outputs) to a state, safe
    # or not, with lease_s (None: not asked) -> the seconds the lease has, or None for none.
    leases = of(server)
    if safe:
        leases.release(output, key)
        return None
    if seconds is None:
        return leases.left(output, key)
    session = server.session
    meta = session.call.meta
    owner = meta.get(OWNER_META) if meta is not None else None
    leases.grant(output, key, session.number, owner if type(owner) is str else None, seconds)
    return seconds

