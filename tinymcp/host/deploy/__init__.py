# tinymcp-deploy: compile what a board needs to .mpy, copy it with mpremote, reset, check it speaks MCP.
#
#   tinymcp-deploy --board rpi_pico [--port /dev/ttyACM0] [--mpy-version 6.3] [--hard-reset]
#   tinymcp-deploy --board sim --dry-run --build out/      only write the files and print their sizes
#   tinymcp-deploy --manifests                             rewrite the mip package*.json files
#
# files: which repo files a board runs; mpy: compiling them; board: talking to the board through
# mpremote; romfs: the image for --romfs; network: network.json for --wifi and the check on the
# network; manifest: the mip package*.json; cli: the command line.


class DeployError(Exception):
    # One line for the user; the command exits 2.
    pass


def main(argv=None):
    from tinymcp.host.deploy.cli import main as run
    return run(argv)
