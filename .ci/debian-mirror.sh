#!/bin/sh
# Prints the Debian mirror debootstrap should use, so the base image builds wherever apt works
# (a local mirror, a caching proxy, a machine that cannot reach deb.debian.org):
#   1. MANUS_DEBIAN_MIRROR, when set;
#   2. else the first Debian mirror in the apt sources under APT_ROOT (default /etc/apt):
#      sources.list, then sources.list.d/*.list and *.sources in name order, as apt reads them;
#      one-line entries ("deb [options] URI suite components") and deb822 stanzas (Types:, URIs:,
#      Suites:, Enabled:, Architectures:). Only "deb" entries whose suite is a Debian release
#      (bookworm, trixie, stable, sid, ...) count: security and updates suites, deb-src, cdrom and
#      other distributions' entries are skipped, as are entries limited to other architectures;
#   3. else http://deb.debian.org/debian.
# Usage: debian-mirror.sh [APT_ROOT]
set -eu

root="${1:-/etc/apt}"
default_mirror=http://deb.debian.org/debian

if [ -n "${MANUS_DEBIAN_MIRROR:-}" ]; then
  printf '%s\n' "$MANUS_DEBIAN_MIRROR"
  exit 0
fi

host_arch="$(dpkg --print-architecture 2>/dev/null || true)"

# Prints the mirror of the first usable entry of one file ($1), in the format $2 (list or sources).
first_mirror_in() {
  awk -v format="$2" -v arch="$host_arch" '
    function debian_suite(suite) {
      return suite ~ /^(jessie|stretch|buster|bullseye|bookworm|trixie|forky|duke|sid|oldoldstable|oldstable|stable|testing|unstable)$/
    }
    function usable_uri(uri) {
      return uri ~ /^(https?|ftp|file):/
    }
    # An empty list allows every architecture; "amd64,arm64" (one-line) or "amd64 arm64" (deb822).
    function allows_arch(list,    names, count, index_) {
      if (list == "" || arch == "") return 1
      count = split(list, names, /[, \t]+/)
      for (index_ = 1; index_ <= count; index_++) if (names[index_] == arch) return 1
      return 0
    }
    function found(uri) {
      sub(/\/+$/, "", uri)
      print uri
      done = 1
      exit
    }
    # One-line format.
    format == "list" {
      line = $0
      sub(/^[ \t]+/, "", line)
      if (line == "" || substr(line, 1, 1) == "#") next
      if (line !~ /^deb[ \t]/) next
      sub(/^deb[ \t]+/, "", line)
      options = ""
      if (substr(line, 1, 1) == "[") {
        close_at = index(line, "]")
        if (close_at == 0) next
        options = substr(line, 2, close_at - 2)
        line = substr(line, close_at + 1)
      }
      count = split(line, words, /[ \t]+/)
      first = (words[1] == "") ? 2 : 1
      uri = words[first]
      suite = words[first + 1]
      option_count = split(options, option_words, /[ \t]+/)
      allowed = ""
      for (option = 1; option <= option_count; option++) {
        if (option_words[option] ~ /^arch=/) allowed = substr(option_words[option], 6)
      }
      if (usable_uri(uri) && debian_suite(suite) && allows_arch(allowed)) found(uri)
      next
    }
    # deb822 format: stanzas separated by blank lines; a line starting with a space continues a field.
    function end_stanza(    count, values, entry) {
      if (tolower(fields["enabled"]) != "no" && (" " fields["types"] " ") ~ /[ \t]deb[ \t]/ && allows_arch(fields["architectures"])) {
        split(fields["uris"], uris, /[ \t]+/)
        uri = (uris[1] == "") ? uris[2] : uris[1]
        count = split(fields["suites"], values, /[ \t]+/)
        for (entry = 1; entry <= count; entry++) if (usable_uri(uri) && debian_suite(values[entry])) found(uri)
      }
      split("", fields)
      field = ""
    }
    format == "sources" {
      if ($0 ~ /^[ \t]*$/) { end_stanza(); next }
      if ($0 ~ /^#/) next
      if ($0 ~ /^[ \t]/) { if (field != "") fields[field] = fields[field] " " $0; next }
      colon = index($0, ":")
      if (colon == 0) next
      field = tolower(substr($0, 1, colon - 1))
      value = substr($0, colon + 1)
      gsub(/^[ \t]+|[ \t]+$/, "", value)
      fields[field] = value
      next
    }
    END { if (format == "sources" && !done) end_stanza() }
  ' "$1"
}

mirror=""
if [ -f "$root/sources.list" ]; then
  mirror="$(first_mirror_in "$root/sources.list" list)"
fi
if [ -z "$mirror" ] && [ -d "$root/sources.list.d" ]; then
  for file in "$root"/sources.list.d/*; do
    [ -f "$file" ] || continue
    case "$file" in
      *.list) mirror="$(first_mirror_in "$file" list)" ;;
      *.sources) mirror="$(first_mirror_in "$file" sources)" ;;
      *) continue ;;
    esac
    [ -z "$mirror" ] || break
  done
fi
printf '%s\n' "${mirror:-$default_mirror}"
