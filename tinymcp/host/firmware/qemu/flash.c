// The emulated board's flash: two regions of the AN385's PSRAM, outside the GC heap.
//   an385.Flash()   the filesystem's block device (littlefs, mounted at / by _boot.py)
//   vfs.rom_ioctl   the ROMFS partition: read in place, written the way mpremote romfs does
// RAM stands in for flash here: it keeps its contents across soft resets, and QEMU starts it
// zeroed (a blank filesystem, no ROMFS) unless an image is loaded there (-device loader).
#include <string.h>

#include "py/mperrno.h"
#include "py/runtime.h"
#include "py/objarray.h"
#include "extmod/vfs.h"

#define ERASED (0xff)

typedef struct _an385_flash_obj_t {
    mp_obj_base_t base;
} an385_flash_obj_t;

static const mp_obj_type_t an385_flash_type;
static const an385_flash_obj_t an385_flash_obj = {{&an385_flash_type}};

static uint8_t *flash_at(mp_obj_t block_in, mp_obj_t offset_in, size_t len) {
    // -> the address of a block (plus an offset), refusing anything outside the region.
    mp_int_t block = mp_obj_get_int(block_in);
    mp_int_t offset = offset_in == MP_OBJ_NULL ? 0 : mp_obj_get_int(offset_in);
    if (block < 0 || offset < 0) {
        mp_raise_ValueError(NULL);
    }
    size_t start = (size_t)block * TINYMCP_FLASH_BLOCK + (size_t)offset;
    if (start > TINYMCP_FLASH_BYTES || len > TINYMCP_FLASH_BYTES - start) {
        mp_raise_ValueError(NULL);
    }
    return (uint8_t *)TINYMCP_FLASH_BASE + start;
}

static mp_obj_t an385_flash_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    mp_arg_check_num(n_args, n_kw, 0, 0, false);
    return MP_OBJ_FROM_PTR(&an385_flash_obj);
}

static mp_obj_t an385_flash_readblocks(size_t n_args, const mp_obj_t *args) {
    mp_buffer_info_t buf;
    mp_get_buffer_raise(args[2], &buf, MP_BUFFER_WRITE);
    memcpy(buf.buf, flash_at(args[1], n_args == 4 ? args[3] : MP_OBJ_NULL, buf.len), buf.len);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(an385_flash_readblocks_obj, 3, 4, an385_flash_readblocks);

static mp_obj_t an385_flash_writeblocks(size_t n_args, const mp_obj_t *args) {
    mp_buffer_info_t buf;
    mp_get_buffer_raise(args[2], &buf, MP_BUFFER_READ);
    uint8_t *dest = flash_at(args[1], n_args == 4 ? args[3] : MP_OBJ_NULL, buf.len);
    memcpy(dest, buf.buf, buf.len);
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(an385_flash_writeblocks_obj, 3, 4, an385_flash_writeblocks);

static mp_obj_t an385_flash_ioctl(mp_obj_t self_in, mp_obj_t op_in, mp_obj_t arg_in) {
    switch (mp_obj_get_int(op_in)) {
        case MP_BLOCKDEV_IOCTL_INIT:
        case MP_BLOCKDEV_IOCTL_DEINIT:
        case MP_BLOCKDEV_IOCTL_SYNC:
            return MP_OBJ_NEW_SMALL_INT(0);
        case MP_BLOCKDEV_IOCTL_BLOCK_COUNT:
            return MP_OBJ_NEW_SMALL_INT(TINYMCP_FLASH_BYTES / TINYMCP_FLASH_BLOCK);
        case MP_BLOCKDEV_IOCTL_BLOCK_SIZE:
            return MP_OBJ_NEW_SMALL_INT(TINYMCP_FLASH_BLOCK);
        case MP_BLOCKDEV_IOCTL_BLOCK_ERASE:
            memset(flash_at(arg_in, MP_OBJ_NULL, TINYMCP_FLASH_BLOCK), ERASED, TINYMCP_FLASH_BLOCK);
            return MP_OBJ_NEW_SMALL_INT(0);
        default:
            return mp_const_none;
    }
}
static MP_DEFINE_CONST_FUN_OBJ_3(an385_flash_ioctl_obj, an385_flash_ioctl);

static const mp_rom_map_elem_t an385_flash_locals_dict_table[] = {
    { MP_ROM_QSTR(MP_QSTR_readblocks), MP_ROM_PTR(&an385_flash_readblocks_obj) },
    { MP_ROM_QSTR(MP_QSTR_writeblocks), MP_ROM_PTR(&an385_flash_writeblocks_obj) },
    { MP_ROM_QSTR(MP_QSTR_ioctl), MP_ROM_PTR(&an385_flash_ioctl_obj) },
};
static MP_DEFINE_CONST_DICT(an385_flash_locals_dict, an385_flash_locals_dict_table);

static MP_DEFINE_CONST_OBJ_TYPE(
    an385_flash_type,
    MP_QSTR_Flash,
    MP_TYPE_FLAG_NONE,
    make_new, an385_flash_make_new,
    locals_dict, &an385_flash_locals_dict
    );

static const mp_rom_map_elem_t an385_module_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_an385) },
    { MP_ROM_QSTR(MP_QSTR_Flash), MP_ROM_PTR(&an385_flash_type) },
};
static MP_DEFINE_CONST_DICT(an385_module_globals, an385_module_globals_table);

const mp_obj_module_t an385_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&an385_module_globals,
};
MP_REGISTER_MODULE(MP_QSTR_an385, an385_module);

// The ROMFS partition: one segment, erased by WRITE_PREPARE, written at any 4-byte offset.
static MP_DEFINE_MEMORYVIEW_OBJ(romfs_obj, 'B', 0, TINYMCP_ROMFS_BYTES, (void *)TINYMCP_ROMFS_BASE);

static bool romfs_span(mp_int_t offset, size_t len) {
    return offset >= 0 && (size_t)offset <= TINYMCP_ROMFS_BYTES && len <= TINYMCP_ROMFS_BYTES - (size_t)offset;
}

mp_obj_t mp_vfs_rom_ioctl(size_t n_args, const mp_obj_t *args) {
    mp_int_t op = mp_obj_get_int(args[0]);
    if (op == MP_VFS_ROM_IOCTL_GET_NUMBER_OF_SEGMENTS) {
        return MP_OBJ_NEW_SMALL_INT(1);
    }
    if (n_args < 2 || mp_obj_get_int(args[1]) != 0) {
        return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);   // segment 0 is the only one
    }
    switch (op) {
        case MP_VFS_ROM_IOCTL_GET_SEGMENT:
            return MP_OBJ_FROM_PTR(&romfs_obj);
        case MP_VFS_ROM_IOCTL_WRITE_PREPARE: {
            // (3, 0, length): erase that much from the start; -> the smallest write size.
            if (n_args != 3) {
                return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
            }
            mp_int_t len = mp_obj_get_int(args[2]);
            if (len < 0 || !romfs_span(0, len)) {
                return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
            }
            memset((void *)TINYMCP_ROMFS_BASE, ERASED, len);
            return MP_OBJ_NEW_SMALL_INT(4);
        }
        case MP_VFS_ROM_IOCTL_WRITE: {
            // (4, 0, offset, data)
            if (n_args != 4) {
                return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
            }
            mp_int_t offset = mp_obj_get_int(args[2]);
            mp_buffer_info_t buf;
            mp_get_buffer_raise(args[3], &buf, MP_BUFFER_READ);
            if (!romfs_span(offset, buf.len)) {
                return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
            }
            memcpy((uint8_t *)TINYMCP_ROMFS_BASE + offset, buf.buf, buf.len);
            return MP_OBJ_NEW_SMALL_INT(0);
        }
        case MP_VFS_ROM_IOCTL_WRITE_COMPLETE:
            return MP_OBJ_NEW_SMALL_INT(0);
        default:
            return MP_OBJ_NEW_SMALL_INT(-MP_EINVAL);
    }
}
