# Frozen into every firmware for the emulated board: _boot.py mounts its filesystem.
freeze("$(BOARD_DIR)", "_boot.py")
