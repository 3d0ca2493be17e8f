#!/usr/bin/env bash
# Makes sure the base image that the Dockerfile's FROM names (default eclipse-temurin:25-jre) is on the local Docker
# engine: present already, else pulled, else (no registry reachable, as on this project's machines) made locally from a
# Debian minbase root file system (debootstrap, from the mirror in the machine's own apt sources) and a jlink'ed
# runtime of the JDK 25 in JAVA_HOME, installed where Temurin's images keep theirs (/opt/java/openjdk). The local image
# is kept with `docker save` under a cache directory keyed by its inputs, so a later run only loads it.
#
# Usage: .ci/base-images.sh [image]      (needs root, a running Docker engine, debootstrap, JAVA_HOME = a JDK 25)
# Cache: READYGATE_IMAGE_CACHE (default /var/cache/readygate/base-images)
set -euo pipefail
# Every step either succeeds or says what failed: a command that fails ends the script with its line, its exit status
# and what to do (a silent end, such as a pipe's reader closing early under pipefail, is a bug).
trap 'status=$?; echo "base image: failed (exit $status) at .ci/base-images.sh line $LINENO: $BASH_COMMAND" >&2
      echo "  the base image $image was not made; run .ci/base-images.sh again as root to retry, or load one yourself" >&2
      echo "  (docker pull/load $image) and run ./run-tests again" >&2' ERR

image="${1:-eclipse-temurin:25-jre}"
cache_dir="${READYGATE_IMAGE_CACHE:-/var/cache/readygate/base-images}"
# What a Temurin JRE holds, less the modules for developing and debugging (compiler, jshell, jdk.hotspot.agent, ...).
modules=java.se,jdk.charsets,jdk.crypto.cryptoki,jdk.crypto.ec,jdk.httpserver,jdk.jdwp.agent,jdk.jfr,jdk.localedata
modules+=,jdk.management,jdk.management.agent,jdk.management.jfr,jdk.naming.dns,jdk.net,jdk.nio.mapmode,jdk.sctp
modules+=,jdk.security.auth,jdk.security.jgss,jdk.unsupported,jdk.xml.dom,jdk.zipfs

if docker image inspect "$image" >/dev/null 2>&1; then
  echo "base image $image: present"
  exit 0
fi
if timeout 300 docker pull -q "$image" >/dev/null 2>&1; then
  echo "base image $image: pulled"
  exit 0
fi

java_home="${JAVA_HOME:?set JAVA_HOME to a JDK 25}"
if ! "$java_home/bin/java" -version 2>&1 | grep -q 'version "25'; then
  echo "base image $image: JAVA_HOME ($java_home) is not a JDK 25" >&2
  exit 1
fi
java_version="$(. "$java_home/release" && echo "$IMPLEMENTOR_VERSION $JAVA_RUNTIME_VERSION")"
suite="$(. /etc/os-release && echo "$VERSION_CODENAME")"
arch="$(dpkg --print-architecture)"

# The Debian mirror this machine's apt uses for its own suite (deb822 .sources first, then one-line .list files).
mirror="$(awk -v suite="$suite" '
  /^URIs:/ { uris = $2 }
  /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite && found == "") found = uris }
  /^$/ { uris = "" }
  END { print found }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)"
if [ -z "$mirror" ]; then
  mirror="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | awk -v suite="$suite" '$1 == "deb" { sub(/ \[[^]]*\]/, ""); $0 = $0 } $1 == "deb" && $3 == suite { print $2; exit }' || true)"
fi
if [ -z "$mirror" ]; then
  echo "base image $image: no apt source for $suite found in /etc/apt" >&2
  exit 1
fi

key="$( (cat "$0"; echo "$image $suite $arch $mirror $java_version") | sha256sum | cut -c1-16)"
archive="$cache_dir/${image//[:\/]/_}-$key.tar"
if [ -f "$archive" ]; then
  docker load -q -i "$archive" >/dev/null
  echo "base image $image: not pulled (no registry answers); loaded the one made here before from $archive"
  exit 0
fi

echo "base image $image: not pulled (no registry answers); making it here"
work="$(mktemp -d /var/tmp/readygate-base-image.XXXXXX)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
echo "base image $image: debootstrap --variant=minbase $suite from $mirror"
debootstrap --variant=minbase --arch="$arch" "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -20 "$work/debootstrap.log" >&2
  exit 1
}
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
  "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/var/log/*.log
echo "base image $image: jlink $java_version into /opt/java/openjdk"
mkdir -p "$rootfs/opt/java"
"$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-man-pages --no-header-files \
  --generate-cds-archive --output "$rootfs/opt/java/openjdk"

tar -C "$rootfs" -c . | docker import \
  --change 'ENV JAVA_HOME=/opt/java/openjdk' \
  --change 'ENV PATH=/opt/java/openjdk/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change "LABEL org.opencontainers.image.description=\"Local stand-in for $image: Debian $suite minbase and a jlink'ed $java_version\"" \
  --change 'CMD ["java", "-version"]' \
  - "$image" >/dev/null
# The image must run its java. The whole answer is read before its first line is shown: a reader that stops early
# (head -1) would end the writer with SIGPIPE, and pipefail this script with exit 141, silently.
version="$(docker run --rm --network none "$image" java -version 2>&1)"
echo "base image $image: ${version%%$'\n'*}"
mkdir -p "$cache_dir"
rm -f "$cache_dir/${image//[:\/]/_}"-*.tar
docker save -o "$archive.partial" "$image" && mv "$archive.partial" "$archive"
echo "base image $image: made and saved to $archive ($(du -h "$archive" | cut -f1))"
