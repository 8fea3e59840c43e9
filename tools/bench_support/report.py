# A generated benchmark page: its heading, what it is, the command, date and machine, the figures.
import os
import platform
import time


def write_page(path, title, about, command, took_s, lines, software=""):
    # about: a paragraph (without "Written by ..."); software: more after the CPython version.
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    with open(path, "w") as f:
        f.write("# %s\n\nWritten by `%s`; do not edit by hand. %s\n\n"
                "Command: `%s`  \nDate: %s, %.0f s  \n"
                "Machine: %s, %d cores, load average %.1f at the end; CPython %s%s\n\n```\n%s\n"
                "```\n" % (title, command.split()[1], about, command,
                           time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), took_s,
                           platform.system(), os.cpu_count() or 0, load,
                           platform.python_version(), "; " + software if software else "",
                           "\n".join(lines)))
