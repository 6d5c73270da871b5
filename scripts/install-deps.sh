#!/usr/bin/env bash
# Installs every system package the project needs, fetches Zydis's sources for the
# freestanding hypervisor build and extracts Xen 4.17 (the conformance peer).
# Idempotent: does nothing that is already done. Runs as root (CI and dev machines are root).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
deps="$top/build/deps"
mkdir -p "$deps"

packages=(build-essential cmake python3 cpio pkg-config qemu-system-x86 libxen-dev libzydis-dev zlib1g-dev liblzma-dev
          libzycore-dev libboost-dev libgtest-dev musl-tools binutils xz-utils)
packages+=(nlohmann-json3-dev)  # tools/xl: the daemon protocol's JSON lines (header-only)
packages+=(clang-format)  # the house style: scripts/check_format.sh (test style.clang_format)
packages+=(python3-matplotlib)  # bench/plot_bench.py: make bench's pictures (under Debian's /usr/bin/python3)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# A private apt state with deb-src entries, so `apt-get source` and `apt-get download`
# work without touching the machine's own lists.
apt_private() {
  local state="$deps/apt"
  mkdir -p "$state/lists/partial"
  local codename
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
  {
    echo "deb http://deb.debian.org/debian $codename main"
    echo "deb-src http://deb.debian.org/debian $codename main"
    echo "deb http://deb.debian.org/debian $codename-updates main"
    echo "deb-src http://deb.debian.org/debian $codename-updates main"
    echo "deb http://deb.debian.org/debian-security $codename-security main"
    echo "deb-src http://deb.debian.org/debian-security $codename-security main"
  } > "$state/sources.list"
  local opts=(-o Dir::Etc::sourcelist="$state/sources.list" -o Dir::Etc::sourceparts=/dev/null
              -o Dir::State::Lists="$state/lists" -o APT::Sandbox::User=root)
  if [ ! -f "$state/updated" ]; then
    apt-get "${opts[@]}" -qq update
    touch "$state/updated"
  fi
  apt-get "${opts[@]}" "$@"
}
# apt-cache on the same private state (apt_private has updated it first).
apt_private_cache() {
  local state="$deps/apt"
  [ -f "$state/updated" ] || apt_private -qq check >/dev/null
  apt-cache -o Dir::Etc::sourcelist="$state/sources.list" -o Dir::Etc::sourceparts=/dev/null \
            -o Dir::State::Lists="$state/lists" "$@"
}

# Zydis decoder sources (never committed: fetched here, compiled freestanding by CMake).
if [ ! -f "$deps/zydis/src/Decoder.c" ]; then
  echo "install-deps: fetching Zydis sources"
  rm -rf "$deps/zydis-dl" && mkdir -p "$deps/zydis-dl"
  (cd "$deps/zydis-dl" && apt_private source --download-only -qq zydis)
  dsc=$(ls "$deps"/zydis-dl/zydis_*.dsc | head -n1)
  rm -rf "$deps/zydis"
  (cd "$deps/zydis-dl" && dpkg-source --no-check -x "$(basename "$dsc")" "$deps/zydis" >/dev/null)
  test -f "$deps/zydis/src/Decoder.c"
fi

# Real Xen 4.17 as a peer: the hypervisor image only, extracted from the Debian package
# without installing it (installing would run GRUB hooks on this machine).
if [ ! -f "$deps/xen-4.17/xen" ]; then
  echo "install-deps: fetching Xen 4.17 hypervisor"
  rm -rf "$deps/xen-dl" && mkdir -p "$deps/xen-dl" "$deps/xen-4.17"
  (cd "$deps/xen-dl" && apt_private download -qq xen-hypervisor-4.17-amd64)
  dpkg-deb -x "$deps"/xen-dl/xen-hypervisor-4.17-amd64_*.deb "$deps/xen-dl/root"
  gz=$(ls "$deps"/xen-dl/root/boot/xen-4.17*-amd64.gz | head -n1)
  gunzip -c "$gz" > "$deps/xen-4.17/xen"
fi
# Xen 4.17's own xenalyze, which Debian does not ship (xen-utils-4.17 has xentrace only): the
# xen source package downloaded (about 5 MB), only xenalyze's sources and the public header they
# include taken out of Xen's tarball, built with the host compiler as Xen's tools/xentrace
# Makefile builds it. Never committed; the tests that find it run it on our traces.
if [ ! -x "$deps/xen-4.17/xenalyze" ]; then
  echo "install-deps: building Xen 4.17's xenalyze"
  rm -rf "$deps/xenalyze-dl" && mkdir -p "$deps/xenalyze-dl/src" "$deps/xen-4.17"
  rm -f "$deps/apt/updated" && apt_private -qq update  # fresh lists: old sources leave the mirror
  # The newest source the mirror still has (the hypervisor's own version first; a mirror may
  # list a security update's source it no longer serves).
  fetched=
  for version in $(apt_private_cache showsrc xen | awk '/^Version: 4\.17/ {print $2}' | sort -Vru); do
    if (cd "$deps/xenalyze-dl" && apt_private source --download-only -qq "xen=$version" 2>/dev/null); then
      fetched=$version && break
    fi
  done
  test -n "$fetched" && echo "install-deps: xenalyze from the source of xen $fetched"
  orig=$(ls "$deps"/xenalyze-dl/xen_4.17*.orig.tar.* | head -n1)
  tar -xf "$orig" -C "$deps/xenalyze-dl/src" --strip-components=1 --wildcards \
      '*/tools/xentrace/xenalyze.c' '*/tools/xentrace/mread.c' '*/tools/xentrace/mread.h' \
      '*/tools/xentrace/analyze.h' '*/tools/xentrace/pv.h' '*/tools/include/xen-tools/libs.h' \
      '*/xen/include/public/trace.h'
  src="$deps/xenalyze-dl/src"
  mkdir -p "$src/tools/include/xen" && cp "$src/xen/include/public/trace.h" "$src/tools/include/xen/trace.h"
  cc -O2 -std=gnu99 -fno-strict-aliasing -D_LARGEFILE_SOURCE -D_LARGEFILE64_SOURCE -D__XEN_TOOLS__ \
     -I"$src/tools/include" -o "$deps/xen-4.17/xenalyze" "$src/tools/xentrace/xenalyze.c" "$src/tools/xentrace/mread.c" -lm
  rm -rf "$deps/xenalyze-dl"
fi
# Debian's own Linux PV kernel (whatever linux-image-amd64 resolves to today: the ABI number
# changes with security updates) and busybox for its initramfs, downloaded and unpacked, never
# installed (linux/README.md). Only the kernel image is kept, not the modules.
if [ ! -f "$deps/linux/vmlinuz" ] || [ ! -f "$deps/linux/busybox" ]; then
  echo "install-deps: fetching Debian's Linux kernel and busybox"
  rm -rf "$deps/linux-dl" && mkdir -p "$deps/linux-dl" "$deps/linux"
  rm -f "$deps/apt/updated"  # fresh lists: an older kernel's package leaves the mirror
  image=$(apt_private_cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  test -n "$image"
  (cd "$deps/linux-dl" && apt_private download -qq "$image" busybox-static)
  dpkg-deb --fsys-tarfile "$deps"/linux-dl/"$image"_*.deb | tar -x -C "$deps/linux-dl" ./boot
  cp "$deps"/linux-dl/boot/vmlinuz-* "$deps/linux/vmlinuz"
  cp "$deps"/linux-dl/boot/config-* "$deps/linux/config"
  dpkg-deb --fsys-tarfile "$deps"/linux-dl/busybox-static_*.deb | tar -x -C "$deps/linux-dl" ./bin/busybox
  cp "$deps/linux-dl/bin/busybox" "$deps/linux/busybox"
  echo "$image" > "$deps/linux/package"
  rm -rf "$deps/linux-dl"
fi
# Only when PVHV_LINUX_DBG=1 (the -dbg package is ~860 MB): the kernel's vmlinux with DWARF, with
# which linux/symbols.py adds file:line to the function+0xoff it reads from the kernel's own
# kallsyms (the linux-image package's System.map is a stub; linux/README.md).
image=$(cat "$deps/linux/package")
if [ "${PVHV_LINUX_DBG:-0}" = 1 ] && [ ! -f "$deps/linux/vmlinux-dbg" ]; then
  echo "install-deps: fetching $image-dbg's vmlinux (PVHV_LINUX_DBG=1)"
  rm -rf "$deps/linux-dl" && mkdir -p "$deps/linux-dl"
  (cd "$deps/linux-dl" && apt_private download -qq "$image-dbg")
  dpkg-deb --fsys-tarfile "$deps"/linux-dl/"$image"-dbg_*.deb | tar -x -C "$deps/linux-dl" --wildcards './usr/lib/debug/boot/vmlinux-*'
  cp "$deps"/linux-dl/usr/lib/debug/boot/vmlinux-* "$deps/linux/vmlinux-dbg"
  rm -rf "$deps/linux-dl"
fi
echo "install-deps: ok"
