#!/bin/sh
# Install every Debian package that building and testing loginguard needs,
# then configure and build.  Idempotent and non-interactive; run as root.
#   tools/setup.sh            install packages, configure and build in build/
#   tools/setup.sh --deps     install packages only
#   tools/setup.sh --fuzz     install packages only, with clang and libFuzzer
#                             for `make fuzz` (make check does not need them)
set -eu

# prometheus is there for promtool, which the tests check the metrics with;
# its server is neither started nor enabled (see below).  qemu, mmdebstrap,
# busybox-static and the rest of the last two lines build the packages and
# the Debian VM of the system tests (make check-vm, tests/vm/).  postgresql
# is there for its server programs (initdb, pg_ctl): the cluster tests start
# a server of their own in a temporary directory; the package's own cluster
# is neither started nor enabled.  Slurm (slurmctld, slurmd, its clients) and
# munge are there for the tests that run a Slurm of their own
# (tests/integration/slurmserver.py); their services are neither started
# nor enabled either.
PACKAGES="
  build-essential g++ autoconf automake libtool libtool-bin pkg-config
  libjansson-dev libcgroup-dev cgroup-tools libsystemd-dev
  libpam0g-dev libnotify-dev libcmocka-dev nettle-dev libre2-dev zlib1g-dev
  libpam-wrapper libpamtest0-dev pamtester libfuse3-dev
  python3 python3-dbusmock dbus
  procps passwd uidmap util-linux valgrind
  prometheus
  libcairo2-dev chromium
  libpq-dev postgresql
  slurmctld slurmd slurm-client munge
  qemu-system-x86 qemu-utils mmdebstrap e2fsprogs busybox-static openssh-client cpio
  debhelper dpkg-dev fakeroot lintian
"
# `make fuzz` only: Debian's clang 14 and its runtimes (libFuzzer, the
# sanitizers), which clang-14 pulls in only as a recommendation.
FUZZ_PACKAGES="clang-14 libclang-rt-14-dev"
[ "${1:-}" = "--fuzz" ] && PACKAGES="$PACKAGES $FUZZ_PACKAGES"

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    # No daemon a package brings (the prometheus server, which would listen
    # on every interface) is started by its installation.
    policy=/usr/sbin/policy-rc.d
    if [ ! -e "$policy" ]; then
        trap 'rm -f "$policy"' EXIT
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 755 "$policy"
    fi
    # shellcheck disable=SC2086
    apt-get install -q -y --no-install-recommends $missing
    # Nor enabled for the next boot.
    for service in prometheus postgresql munge slurmctld slurmd; do
        case " $missing " in
        *" $service "*)
            if command -v deb-systemd-helper >/dev/null; then
                deb-systemd-helper disable "$service.service" >/dev/null 2>&1 || true
            fi
            ;;
        esac
    done
fi

case "${1:-}" in --deps | --fuzz) exit 0 ;; esac

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ -x configure ] || autoreconf -fi
mkdir -p build
cd build
# The paths an admin expects of a system daemon; tests override them all.
[ -f Makefile ] || ../configure --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
    --runstatedir=/run
make -j"$(nproc)"
