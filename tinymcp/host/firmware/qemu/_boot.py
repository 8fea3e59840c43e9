# Runs first after every reset (frozen): the filesystem on the board's flash, formatted on first boot.
import vfs
import an385

bdev = an385.Flash()
try:
    fs = vfs.VfsLfs2(bdev)
except OSError:
    vfs.VfsLfs2.mkfs(bdev)
    fs = vfs.VfsLfs2(bdev)
vfs.mount(fs, "/")

del vfs, an385, bdev, fs
