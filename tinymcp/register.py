# The decorators' bodies (Server.tool, .resource, .prompt): what adds an entry to its registry.
# They run while a board builds (and when it registers later), so this module is loaded for each
# registration and released after it (Server.once): a board that serves holds none of it.


def tool(server, fn, spec):
    name, description, inputs, outputs, title, hints, ctx, task = spec
    if server.tools is None:
        from tinymcp.tools import Tools
        server.tools = Tools()
    from tinymcp.tools import pack_hints
    hints = pack_hints(hints)
    if task:
        from tinymcp.tasktools import offer
        hints |= offer(server, task) << 8
    server.tools.add(fn, name, description, inputs, outputs, title, hints, ctx)
    server.changed("tools")
    return fn


def resource(server, fn, spec):
    if server.resources is None:
        from tinymcp.resources import Resources
        server.resources = Resources()
    server.resources.add(fn, *spec)
    if spec[-1]:  # complete
        server.completions = True
    server.changed("resources")
    return fn


def prompt(server, fn, spec):
    if server.prompts is None:
        from tinymcp.prompts import Prompts, HANDLERS
        server.prompts = Prompts()
        server.add_methods(HANDLERS)
    server.prompts.add(fn, *spec)
    if spec[-1]:  # complete
        server.completions = True
    server.changed("prompts")
    return fn
