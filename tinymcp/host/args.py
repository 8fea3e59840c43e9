# What the host programs' command lines share: a bad argument is one line and exit status 2.
import argparse


class Parser(argparse.ArgumentParser):
    def error(self, message):
        # One line (the contract), instead of argparse's usage block.
        self.exit(2, "%s: %s (see --help)\n" % (self.prog, message))
