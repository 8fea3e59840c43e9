// tinymcp's emulated board: the qemu port's main.c replaced by a real board's boot sequence.
// After every reset, hard or soft: mount ROMFS (mp_init), the filesystem (frozen _boot.py), then
// run boot.py and, unless the raw REPL asked for the reset, main.py; the REPL when it returns.
#include <stdlib.h>

#include "py/compile.h"
#include "py/gc.h"
#include "py/runtime.h"
#include "py/stackctrl.h"
#include "shared/runtime/gchelper.h"
#include "shared/runtime/pyexec.h"

#if MICROPY_HEAP_SIZE <= 0
#error MICROPY_HEAP_SIZE must be a positive integer.
#endif

static uint32_t gc_heap[MICROPY_HEAP_SIZE / sizeof(uint32_t)];

void board_init(void);   // mphalport.c: the UART read as a real board would

static int run_scripts(void) {
    // -> PYEXEC_FORCED_EXIT when a script asked for a soft reset (sys.exit, machine.soft_reset).
    pyexec_frozen_module("_boot.py", false);
    int ret = pyexec_file_if_exists("boot.py");
    if (ret & PYEXEC_FORCED_EXIT) {
        return ret;
    }
    if (pyexec_mode_kind == PYEXEC_MODE_FRIENDLY_REPL && ret != 0) {
        // A frozen main.py comes first, as on every port.
        ret = pyexec_file_if_exists("main.py");
    }
    return ret;
}

int main(int argc, char **argv) {
    mp_cstack_init_with_sp_here(10240);
    gc_init(gc_heap, (char *)gc_heap + MICROPY_HEAP_SIZE);
    board_init();

    for (;;) {
        mp_init();
        mp_obj_list_append(mp_sys_path, MP_OBJ_NEW_QSTR(qstr_from_str("/lib")));

        if (!(run_scripts() & PYEXEC_FORCED_EXIT)) {
            for (;;) {
                if (pyexec_mode_kind == PYEXEC_MODE_RAW_REPL) {
                    if (pyexec_raw_repl() != 0) {
                        break;
                    }
                } else {
                    if (pyexec_friendly_repl() != 0) {
                        break;
                    }
                }
            }
        }

        mp_printf(&mp_plat_print, "MPY: soft reboot\n");
        gc_sweep_all();
        mp_deinit();
    }
}

void gc_collect(void) {
    gc_collect_start();
    gc_helper_collect_regs_and_stack();
    gc_collect_end();
}

void nlr_jump_fail(void *val) {
    mp_printf(&mp_plat_print, "uncaught NLR\n");
    exit(1);
}
