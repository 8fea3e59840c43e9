// tinymcp's emulated board: the qemu port's configuration, then what makes it board-like.
#include "mpconfigport.h"

// vfs.rom_ioctl over the ROMFS region (flash.c), so images can be written as on rp2 and stm32;
// mp_init() then mounts a valid image at /rom and puts /rom and /rom/lib on sys.path.
#undef MICROPY_VFS_ROM_IOCTL
#define MICROPY_VFS_ROM_IOCTL (1)

// The UART read into a ring buffer as the VM runs (Ctrl-C works), and waiting without spinning:
// board_pump() and board_wait() in mphalport.c.
void board_pump(void);
void board_wait(void);
#define MICROPY_INTERNAL_WFE(TIMEOUT_MS) board_wait()
#define MICROPY_VM_HOOK_COUNT (64)
#define MICROPY_VM_HOOK_INIT static unsigned int vm_hook_divisor = MICROPY_VM_HOOK_COUNT;
#define MICROPY_VM_HOOK_POLL if (--vm_hook_divisor == 0) { \
        vm_hook_divisor = MICROPY_VM_HOOK_COUNT; \
        board_pump(); \
}
#define MICROPY_VM_HOOK_LOOP MICROPY_VM_HOOK_POLL
#define MICROPY_VM_HOOK_RETURN MICROPY_VM_HOOK_POLL

#undef MICROPY_HW_BOARD_NAME
#define MICROPY_HW_BOARD_NAME "tinymcp emulated board (mps2-an385)"

// Where the board keeps its "flash": the AN385's 16 MiB PSRAM, outside the GC heap, kept across
// soft resets. A ROMFS partition, then the filesystem's block device.
#define TINYMCP_ROMFS_BASE (0x21000000)
#define TINYMCP_ROMFS_BYTES (1024 * 1024)
#define TINYMCP_FLASH_BASE (0x21100000)
#define TINYMCP_FLASH_BYTES (2 * 1024 * 1024)
#define TINYMCP_FLASH_BLOCK (4096)
