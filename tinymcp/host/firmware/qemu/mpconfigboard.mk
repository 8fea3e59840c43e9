# tinymcp's emulated board: MicroPython's qemu port on QEMU's mps2-an385 (Cortex-M3), built like a
# real board. tinymcp-firmware copies this folder to ports/qemu/boards/TINYMCP_AN385 of a build
# copy of the MicroPython source, and main.c and mphalport.c over the port's own
# (tinymcp/host/firmware/build.py).
QEMU_ARCH = arm
QEMU_MACHINE = mps2-an385

CFLAGS += -mthumb -mcpu=cortex-m3 -mfloat-abi=soft
CFLAGS += -DQEMU_SOC_MPS2
CFLAGS += -DMICROPY_HW_MCU_NAME='"Cortex-M3"'
# The port's settings, then ours (ROMFS writes, the idle wait, the board's name).
CFLAGS += -DMP_CONFIGFILE='"$(BOARD_DIR)/mpconfigboard.h"'

LDSCRIPT = mcu/arm/mps2.ld

SRC_BOARD_O = shared/runtime/gchelper_native.o shared/runtime/gchelper_thumb2.o
SRC_C += $(BOARD_DIR)/flash.c

# The filesystem on the board's flash (a RAM region here), as on rp2 and esp32.
MICROPY_VFS_LFS2 = 1

# Nothing but _boot.py unless tinymcp-firmware passes its own manifest (which includes this one).
FROZEN_MANIFEST ?= $(BOARD_DIR)/manifest.py

MPY_CROSS_FLAGS += -march=armv7m
