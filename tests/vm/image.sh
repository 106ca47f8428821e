#!/bin/sh
# A Debian 12 login node for the system tests: systemd, openssh-server,
# cgroup v2, the Debian cloud kernel booted straight by qemu with a busybox
# initrd, two users (alice, bob) and root reachable with one ssh key.
#   tests/vm/image.sh CACHE_DIR
# prints the directory holding vmlinuz, initrd.img, root.img and id_ed25519.
# The image is built once per version of this recipe: its directory is named
# by the hash of this file and of the archive it comes from.  loginguard's
# own packages are not in it: the tests copy in the ones just built.
# Needs root, mmdebstrap, e2fsprogs, busybox-static, cpio, openssh-client.
set -eu
cache=${1:?usage: image.sh CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)

# The archive that apt on this machine uses (deb822 sources, else the
# one-line list), so that the image has what the packages were built against.
sources() {
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk '
            /^URIs:/ { uri = $2 }
            /^Suites:/ { suites = ""; for (i = 2; i <= NF; i++) suites = suites " " $i }
            /^$/ { emit() }
            END { emit() }
            function emit(   n, s, i) {
                if (uri == "") return
                n = split(suites, s, " ")
                for (i = 1; i <= n; i++) print "deb " uri " " s[i] " main"
                uri = ""; suites = ""
            }' "$f"
    done
    [ -f /etc/apt/sources.list ] && grep '^deb ' /etc/apt/sources.list || true
}
mirrors=$(sources | grep ' bookworm' || true)
[ -n "$mirrors" ] || mirrors="deb http://deb.debian.org/debian bookworm main"

key=$( (cat "$0"; echo "$mirrors") | sha256sum | cut -c1-16)
out="$cache/image-$key"
if [ -f "$out/done" ]; then
    echo "$out"
    exit 0
fi
# A build killed midway leaves what mmdebstrap had mounted below its tree
# (/proc, /sys, /dev/pts, /dev/shm): lift those mounts, deepest first,
# before removing it, and never let rm cross into a mounted file system.
# One build at a time, so that every unfinished tree is a dead one.
discard() {
    awk -v top="$1/" 'index($5, top) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
        while read -r m; do umount -l "$m"; done
    rm -rf --one-file-system "$1"
}
exec 9>"$cache/lock"
flock 9
if [ -f "$out/done" ]; then
    echo "$out"
    exit 0
fi
for dead in "$cache"/image-*.tmp "$out"; do
    if [ -e "$dead" ]; then discard "$dead"; fi
done
work="$out.tmp"
mkdir -p "$work"
trap 'discard "$work"' EXIT
trap 'exit 1' HUP INT TERM
root="$work/rootfs"

# The run-time libraries of loginguard's packages are in the image, so
# that dpkg -i works without network inside.  Slurm (Debian's 22.05) and
# munge are there for the scenario that makes the node its own cluster;
# they start only when it configures them (below).
packages="usr-is-merged,systemd,systemd-sysv,udev,dbus,libpam-systemd,openssh-server,iproute2,sudo,procps,kmod,
libjansson4,libcgroup2,libre2-9,libnettle8,zlib1g,libpq5,libstdc++6,libgcc-s1,libpam-runtime,logrotate,libpam-modules,
munge,slurmctld,slurmd,slurm-client"
packages=$(echo "$packages" | tr -d '\n')
echo "$mirrors" | sed 's/^/  /' >&2
# shellcheck disable=SC2086
echo "$mirrors" | mmdebstrap --quiet --variant=minbase --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    bookworm "$root" - >&2

# The cloud kernel: no initramfs-tools, unpacked as it is (dpkg -x would
# replace merged /usr's /lib link).
kpkg=$(apt-cache depends linux-image-cloud-amd64 | awk '/Depends: linux-image-/ { print $2; exit }')
kver=${kpkg#linux-image-}
(cd "$work" && apt-get -q -o APT::Sandbox::User=root download "$kpkg" >&2)
dpkg-deb --fsys-tarfile "$work/${kpkg}"_*.deb | tar -x --keep-directory-symlink -C "$root"
chroot "$root" depmod "$kver"
cp "$root/boot/vmlinuz-$kver" "$work/vmlinuz"

# A busybox initrd: load the virtio and ext4 modules, mount the root, go.
init="$work/initrd"
mkdir -p "$init/bin" "$init/mods"
cp /bin/busybox "$init/bin/busybox"
chroot "$root" modprobe -S "$kver" -a --show-depends virtio_pci virtio_blk ext4 |
    awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' >"$work/modlist"
i=0
: >"$init/mods/order"
while read -r m; do
    i=$((i + 1))
    case "$m" in
    *.xz) xz -dc "$root$m" >"$init/mods/$i.ko" ;;
    *.zst) zstd -qdc "$root$m" >"$init/mods/$i.ko" ;;
    *) cp "$root$m" "$init/mods/$i.ko" ;;
    esac
    echo "$i.ko" >>"$init/mods/order"
done <"$work/modlist"
cat >"$init/init" <<'EOF'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /newroot
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /mods/order); do insmod /mods/$m; done
n=0
while [ ! -b /dev/vda ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
mount -t ext4 -o rw /dev/vda /newroot || { echo "initrd: cannot mount /dev/vda"; sleep 5; poweroff -f; }
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /sbin/init
EOF
chmod 755 "$init/init"
(cd "$init" && find . | cpio -o -H newc --quiet | gzip -1 >"$work/initrd.img")

# The node itself.
echo loginnode >"$root/etc/hostname"
echo "127.0.1.1 loginnode" >>"$root/etc/hosts"
echo 4c6f67696e4775617264564d0000000a >"$root/etc/machine-id"
printf '/dev/vda / ext4 rw,errors=remount-ro 0 0\n' >"$root/etc/fstab"
mkdir -p "$root/etc/systemd/network"
printf '[Match]\nName=en* eth*\n[Network]\nAddress=10.0.2.15/24\nGateway=10.0.2.2\nDNS=10.0.2.3\n' \
    >"$root/etc/systemd/network/10-qemu.network"
chroot "$root" systemctl -q enable systemd-networkd
chroot "$root" systemctl -q disable systemd-networkd-wait-online 2>/dev/null || true
for t in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer e2scrub_reap.service \
    fstrim.timer systemd-tmpfiles-clean.timer; do
    chroot "$root" systemctl -q mask "$t"
done
# The harness waits for this line on the serial console: a port probe
# would be answered by qemu before sshd listens.
cat >"$root/etc/systemd/system/vm-ready.service" <<'EOF'
[Unit]
After=ssh.service multi-user.target
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'echo LOGINGUARD-VM-READY >/dev/ttyS0'
[Install]
WantedBy=multi-user.target
EOF
chroot "$root" systemctl -q enable vm-ready.service
# Slurm's daemons and munge start only in the scenario that writes
# slurm.conf: the other scenarios' node has none of them running.
for s in munge slurmctld slurmd; do
    chroot "$root" systemctl -q disable "$s"
done
[ -s "$root/etc/munge/munge.key" ] || chroot "$root" mungekey -c
chroot "$root" chown munge: /etc/munge/munge.key
printf 'UseDNS no\nPermitRootLogin prohibit-password\n' >"$root/etc/ssh/sshd_config.d/vm.conf"
ssh-keygen -q -t ed25519 -N '' -C loginguard-vm -f "$work/id_ed25519"
chroot "$root" groupadd -f wheel
for u in alice:1001 bob:1002; do
    chroot "$root" useradd -m -s /bin/bash -u "${u#*:}" "${u%:*}"
done
for home in "$root/root" "$root/home/alice" "$root/home/bob"; do
    mkdir -p "$home/.ssh"
    cp "$work/id_ed25519.pub" "$home/.ssh/authorized_keys"
done
chroot "$root" sh -c 'chown -R alice: /home/alice; chown -R bob: /home/bob'
rm -f "$work/${kpkg}"_*.deb
rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*

truncate -s 2G "$work/root.img"
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 -d "$root" "$work/root.img"
discard "$root"
rm -rf "$init"
echo "$kver" >"$work/kernel-version"
touch "$work/done"
mv "$work" "$out"
trap - EXIT
echo "$out"
