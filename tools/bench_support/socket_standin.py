# A stand-in for `socket` while the mDNS responder (ports/mdns.py) is weighed: the WebAssembly
# build has no sockets, and the unix build's would join a multicast group on this machine. Just
# what the responder calls, sending nothing; its objects are about as small as the C ones.
AF_INET = 2
SOCK_DGRAM = 2
SOL_SOCKET = 1
SO_REUSEADDR = 2


def getaddrinfo(host, port):
    return [(AF_INET, SOCK_DGRAM, 0, "", (host, port))]


class socket:
    def __init__(self, family=AF_INET, kind=SOCK_DGRAM):
        self.open = True

    def setsockopt(self, level, option, value):
        pass

    def bind(self, address):
        pass

    def setblocking(self, flag):
        pass

    def sendto(self, data, address):
        return len(data)

    def readinto(self, buf):
        return None

    def close(self):
        self.open = False
