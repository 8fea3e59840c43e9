# paho-mqtt's client driven by the bridge's own asyncio loop, as paho allows (loop_read,
# loop_write, loop_misc) and aiomqtt does: its socket read when the loop sees it readable, every
# message read then handled then (mqttpackets.fast_client reads ahead), what is published in one
# turn of the loop written at its end in one send (paho's on_socket_register_write: paho writes
# nothing itself, not even from inside its callbacks, where it would only queue), keep-alive
# looked after once a second. No thread of
# its own: a message in and its answer out cost no hand-over between threads (a wake through a
# socket pair each way and the GIL passed back and forth), which made paho's thread cost the
# bridge three times the CPU of a serial board per call. Only connecting (DNS, TCP, the TLS
# handshake all block in paho) runs in the loop's executor. A loop without add_reader (Windows'
# proactor) keeps paho's own thread (mqtt.Broker): drives(loop) says which.
import asyncio
import socket
import threading

MISC_S = 1.0   # seconds between paho's keep-alive checks (loop_misc), as its own loop does


def drives(loop):
    # -> True when loop can watch a socket (add_reader): a selector loop, not Windows' proactor.
    a, b = socket.socketpair()
    try:
        loop.add_reader(a.fileno(), int)
        loop.remove_reader(a.fileno())
        return True
    except NotImplementedError:
        return False
    finally:
        a.close()
        b.close()


def no_delay(client, userdata, sock):
    # paho's on_socket_open (either way it runs): a small publish leaves at once. With Nagle's
    # algorithm on, a second request published before the broker acknowledged the first waits
    # for that ACK, which a delayed ACK holds back for up to 40 ms.
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (OSError, AttributeError, ValueError):   # not TCP (a test's stand-in, a proxy)
        pass


class Pump:
    # One paho client on the loop: run() connects, reconnects after a growing pause (retry:
    # (first, at most) seconds) and reads for as long as the task runs. failed(client, None) is
    # called in the except clause of a failed attempt (sys.exc_info() says why), as paho calls
    # on_connect_fail.
    def __init__(self, client, loop, failed, retry):
        self.client = client
        self.loop = loop
        self.failed = failed
        self.retry = retry
        self.thread = threading.get_ident()   # the loop's
        self._fd = None          # the socket's descriptor while the loop watches it
        self._sock = None
        self._writing = False
        self._misc = None
        self._lost = None        # resolved when the socket is closed (lost, or let go)
        self._welcomed = False
        self._flushing = False   # a flush is due at the end of this turn
        client.pumped = True     # mqttpackets.fast_client: read ahead, write joined
        client.on_socket_open = no_delay
        client.on_socket_close = self._closed
        client.on_socket_register_write = self._soon

    async def run(self):
        pause = self.retry[0]
        while True:
            self._lost = self.loop.create_future()
            try:
                await self.loop.run_in_executor(None, self.client.reconnect)
            except asyncio.CancelledError:
                raise
            except Exception:   # paho's own loop takes any exception as a failed attempt
                self.failed(self.client, None)
            else:
                if self._watch():
                    await self._lost
            if self._welcomed:   # the broker took the last connection: start the pauses over
                self._welcomed = False
                pause = self.retry[0]
            await asyncio.sleep(pause)
            pause = min(pause * 2, self.retry[1])

    def welcomed(self):
        # The broker accepted the connection (a CONNACK without a failure).
        self._welcomed = True

    def _watch(self):
        # The socket paho opened, watched by the loop -> False when it is gone already.
        sock = self.client.socket()
        if sock is None or self._lost.done():
            return False
        self._sock = sock
        self._fd = sock.fileno()
        self.loop.add_reader(self._fd, self._read)
        self._misc = self.loop.call_later(MISC_S, self._keep_alive)
        self.flush()   # CONNECT, if the connecting thread could not write all of it
        return True

    def _read(self):
        # Every message already read (paho takes one a call; a call's answer the client takes
        # itself), and with TLS the bytes already decrypted, which wait in the SSL object while
        # the socket says nothing of them.
        client = self.client
        pending = getattr(self._sock, "pending", None)
        client.prefetch()
        while True:
            if not client.take_publish():
                client.loop_read()
            if self._fd is None or not (client.buffered() or
                                        (pending is not None and pending())):
                break
        self.flush()

    def _soon(self, client, userdata, sock):
        # paho's on_socket_register_write: a packet is queued (the first since the last write):
        # written at the end of this turn, with whatever else is queued by then.
        if self._flushing:
            return
        self._flushing = True
        if threading.get_ident() == self.thread:
            self.loop.call_soon(self._turn_end)
            return
        try:   # the connecting thread's CONNECT: _watch writes it
            self.loop.call_soon_threadsafe(self._turn_end)
        except RuntimeError:   # the loop has closed: the bridge is ending
            pass

    def _turn_end(self):
        self._flushing = False
        self.flush()

    def flush(self):
        # What paho could not write at once (a full socket, or queued in one of its callbacks):
        # written now, the rest when the socket takes it.
        client = self.client
        if self._fd is None or not client.want_write():
            return
        client.loop_write()
        if self._fd is not None and client.want_write() and not self._writing:
            self._writing = True
            self.loop.add_writer(self._fd, self._write)

    def _write(self):
        self.client.loop_write()
        if self._fd is not None and not self.client.want_write():
            self._writing = False
            self.loop.remove_writer(self._fd)

    def _keep_alive(self):
        self._misc = None
        self.client.loop_misc()   # a PINGREQ when due; the socket closed when none came back
        if self._fd is not None:
            self.flush()
            self._misc = self.loop.call_later(MISC_S, self._keep_alive)

    def _closed(self, client, userdata, sock):
        # paho's on_socket_close, just before it closes the socket: on the loop's thread (a
        # read or a keep-alive found it lost, a disconnect), or the connecting one's.
        if threading.get_ident() != self.thread:
            try:
                self.loop.call_soon_threadsafe(self._let_go)
            except RuntimeError:   # the loop has closed: the bridge is ending
                pass
            return
        self._let_go()

    def _let_go(self):
        fd, self._fd, self._sock = self._fd, None, None
        if fd is not None:
            self.loop.remove_reader(fd)
            if self._writing:
                self.loop.remove_writer(fd)
        self._writing = False
        if self._misc is not None:
            self._misc.cancel()
            self._misc = None
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(None)

