"""Which file system a path lies on, and whether it is shared over a network.

SQLite's WAL mode keeps its index in shared memory, which only works between processes on one
host; on NFS, Lustre, GPFS and the like (cluster home and project directories) processes on
different hosts would corrupt it.  The store asks `filesystem_of(path)` and picks its journal
mode from the answer.

Linux only: the mount table is /proc/self/mountinfo (or /proc/mounts).  Parsing and lookup are
pure functions over its text so they are tested on sample tables; only `read_mounts` and
`existing_ancestor` touch the machine.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

# Shared between hosts: WAL is unsafe and POSIX locks may be weak.
NETWORK = frozenset({
    "nfs", "nfs3", "nfs4", "lustre", "lustre_lite", "gpfs", "beegfs", "fhgfs", "cifs", "smb3", "smbfs",
    "9p", "virtiofs", "ceph", "glusterfs", "panfs", "afs", "openafs", "coda", "ncpfs", "orangefs", "pvfs2",
    "ocfs2", "gfs2", "wekafs", "quobyte", "davfs", "autofs",
    "fuse.sshfs", "fuse.ceph", "fuse.ceph-fuse", "fuse.glusterfs", "fuse.beegfs", "fuse.s3fs", "fuse.gcsfuse",
    "fuse.rclone", "fuse.juicefs", "fuse.quobyte", "fuse.cvmfs", "fuse.davfs2", "fuse.goofys", "fuse.blobfuse",
})
# One host's own disks, memory and kernel pseudo file systems: WAL is safe.
LOCAL = frozenset({
    "ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "bcachefs", "f2fs", "jfs", "reiserfs", "nilfs2",
    "tmpfs", "ramfs", "overlay", "aufs", "squashfs", "erofs", "iso9660", "vfat", "exfat", "ntfs", "ntfs3",
    "fuseblk", "hfsplus", "apfs", "fuse.lxcfs",
    "proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "mqueue", "debugfs", "tracefs",
    "securityfs", "pstore", "bpf", "hugetlbfs", "configfs", "fusectl", "binfmt_misc", "nsfs",
    "rpc_pipefs", "efivarfs", "nfsd",
})

# Mount options under which file locks do not exclude processes on other hosts.
NODE_LOCAL_LOCKS = {
    "local_lock=all": "NFS mounted with local locks (nolock): locks are per host",
    "local_lock=posix": "NFS mounted with local POSIX locks: locks are per host",
    "localflock": "Lustre mounted with localflock: locks are per node",
    "noflock": "Lustre mounted with noflock: file locks are refused",
}


def classify(fstype: str) -> str:
    """'network', 'local' or 'unknown' for a file-system type as the mount table names it."""
    if fstype in LOCAL:             # first: nfsd (the NFS server's own pseudo file system) is local
        return "local"
    if fstype in NETWORK or fstype.startswith("nfs"):
        return "network"
    return "unknown"


@dataclass(frozen=True)
class Mount:
    point: str
    fstype: str
    source: str = ""
    options: frozenset[str] = frozenset()

    @property
    def kind(self) -> str:
        return classify(self.fstype)

    def lock_warning(self) -> str | None:
        """Why locks on this mount may not keep writers on other hosts apart, or None."""
        return next((why for opt, why in NODE_LOCAL_LOCKS.items() if opt in self.options), None)

    def describe(self) -> str:
        """'nfs4 at /home', the way a store's mode names its reason."""
        return f"{self.fstype} at {self.point}"


def _unescape(field: str) -> str:
    r"""The kernel writes space, tab, newline and backslash in mount paths as octal: \040 \011 \012 \134."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), field)


def _options(*fields: str) -> frozenset[str]:
    return frozenset(opt for field in fields for opt in field.split(",") if opt)


def parse_mountinfo(text: str) -> list[Mount]:
    """The mounts of /proc/<pid>/mountinfo text, in the table's order (later mounts lie on top).

    A line: id parent major:minor root mount-point options [optional fields...] - fstype source super-options
    """
    mounts = []
    for line in text.splitlines():
        fields = line.split(" ")
        try:
            sep = fields.index("-", 6)
            point, fstype = _unescape(fields[4]), _unescape(fields[sep + 1])
        except (ValueError, IndexError):
            continue
        source = _unescape(fields[sep + 2]) if len(fields) > sep + 2 else ""
        mounts.append(Mount(point, fstype, source, _options(fields[5], *fields[sep + 3:sep + 4])))
    return mounts


def parse_proc_mounts(text: str) -> list[Mount]:
    """The mounts of /proc/mounts (fstab format: source mount-point fstype options dump pass)."""
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 4:
            mounts.append(Mount(_unescape(fields[1]), _unescape(fields[2]), _unescape(fields[0]),
                                _options(fields[3])))
    return mounts


def mount_for(path: str, mounts: list[Mount]) -> Mount | None:
    """The mount holding `path` (absolute, resolved): the longest mount point that is a whole-component
    prefix of it; of mounts stacked on one point the last (the visible one)."""
    best = None
    for m in mounts:
        under = m.point == "/" or path == m.point or path.startswith(m.point.rstrip("/") + "/")
        if under and (best is None or len(m.point) >= len(best.point)):
            best = m
    return best


def read_mounts() -> list[Mount]:
    """This process's mount table; empty where there is none to read (not Linux)."""
    for name, parse in (("/proc/self/mountinfo", parse_mountinfo), ("/proc/mounts", parse_proc_mounts)):
        try:
            with open(name, encoding="utf-8", errors="surrogateescape") as f:
                mounts = parse(f.read())
        except OSError:
            continue
        if mounts:
            return mounts
    return []


def existing_ancestor(path: Path | str) -> str:
    """`path` resolved (symbolic links, ..), or its nearest existing ancestor where it does not exist yet."""
    path = Path(path).absolute()
    existing = next((p for p in (path, *path.parents) if p.exists()), Path(path.anchor))
    return os.path.realpath(existing)


def filesystem_of(path: Path | str, mounts: list[Mount] | None = None) -> Mount | None:
    """The mount that holds `path` (or would, once created); None where the mount table is unknown."""
    return mount_for(existing_ancestor(path), read_mounts() if mounts is None else mounts)


def describe_mounts(mounts: list[Mount] | None = None) -> list[tuple[str, str, str]]:
    """(mount point, fs type, 'network' | 'local' | 'unknown') for each mount, in table order."""
    return [(m.point, m.fstype, m.kind) for m in (read_mounts() if mounts is None else mounts)]
